/* Golden-curve checks: the files of a run directory a check reads (see check_state.h): their
 * hashes and fingerprint, JSON files, and run.json with its scenario in canonical form. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/check_state.h"
#include "outputs/output.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/file.h"
#include "sim/fnv.h"

const char *const ck_fingerprint_files[CK_NFINGERPRINT] = { "metrics.csv", "workers.csv",
                                                            "summary.json", "run.json",
                                                            "events.csv" };

/* FNV-1a 64 of dir/name; summary.json without its wall line. Returns false if absent or no
 * regular file. The file is opened without blocking and its descriptor checked: a golden file
 * that a FIFO replaced after the golden's stat (regular_files) was fopen()ed, and check waited
 * on it for a writer forever. */
bool ck_file_hash(const char *dir, const char *name, uint64_t *h)
{
    char path[PATH_TEXT], line[8192];
    struct stat st;
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return false;
    FILE *f = sim_file_open_regular(path, &st);
    if (f == NULL)
        return false;
    bool summary = strcmp(name, "summary.json") == 0;
    *h = SIM_FNV_OFFSET;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (summary && strncmp(line, "  \"wall\":", 9) == 0)
            continue;
        *h = sim_fnv_text(*h, line);
    }
    fclose(f);
    return true;
}

/* The fingerprint of a run directory: a line "file hash" per output file present. */
void ck_fingerprint(const char *dir, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < CK_NFINGERPRINT; i++) {
        uint64_t h = 0;
        if (ck_file_hash(dir, ck_fingerprint_files[i], &h) && len < size)
            len += (size_t)snprintf(out + len, size - len, "%s %016" PRIx64 "\n",
                                    ck_fingerprint_files[i], h);
    }
}

int ck_write_fingerprint(const char *dir, sim_err *err)
{
    char text[1024];
    ck_fingerprint(dir, text, sizeof(text));
    return sim_output_write(dir, "fingerprint", text, err);
}

/* Reads dir/name whole into a malloc'd string (NULL if it cannot be read). */
char *ck_slurp(const char *dir, const char *name, size_t *len)
{
    char path[PATH_TEXT];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return NULL;
    return sim_output_read(path, len);
}

/* Parses dir/name as JSON; NULL (with `err` naming the file) if absent or malformed. */
sim_cfg *ck_read_json(const char *dir, const char *name, sim_err *err)
{
    char path[PATH_TEXT];
    size_t len = 0;
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
        sim_err_set(err, SIM_EINVAL, NULL, "%s/%s: path too long", dir, name);
        return NULL;
    }
    char *text = ck_slurp(dir, name, &len);
    if (text == NULL) {
        sim_err_set(err, SIM_EINVAL, NULL, "%s: missing or unreadable", path);
        return NULL;
    }
    sim_cfg *cfg = sim_cfg_parse(text, len, path, err);
    free(text);
    if (cfg == NULL && err->code != SIM_ENOMEM)
        err->code = SIM_EINVAL;
    return cfg;
}

bool ck_exists(const char *dir, const char *name)
{
    char path[2 * PATH_TEXT];
    struct stat st;
    snprintf(path, sizeof(path), "%s%s%s", dir, name[0] != '\0' ? "/" : "", name);
    return stat(path, &st) == 0;
}

sim_cfg *ck_read_run(const char *dir, sim_err *err)
{
    sim_cfg *run = ck_read_json(dir, "run.json", err), *sc = NULL;
    if (run != NULL && sim_cfg_child(run, "scenario", &sc, NULL) == SIM_OK && sc != NULL &&
        sim_scenario_canonical(sc, err) != SIM_OK) {
        sim_cfg_destroy(run);
        return NULL;
    }
    return run;
}
