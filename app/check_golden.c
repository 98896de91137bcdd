/* Golden-curve checks: the files of a golden, read and validated before use, and runs compared
 * with it (see check.h); the files of a run directory are read by app/check_files.c. */
#define _GNU_SOURCE /* O_PATH */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/check.h"
#include "app/check_state.h"
#include "app/curves.h"
#include "outputs/output.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/file.h"
#include "sim/fnv.h"
#include "sim/text.h"

/* ---- Goldens, validated before use ------------------------------------------------------ */

void ck_golden_fini(gold *g)
{
    for (size_t s = 0; s < g->k; s++)
        app_curve_fini(&g->curve[s]);
    for (size_t s = 0; s < MAX_GOLDEN; s++) { /* also those read past the seeds loaded (an error) */
        sim_cfg_destroy(g->run[s]);
        g->run[s] = NULL;
    }
}

bool ck_has_seed(const gold *g, uint64_t seed)
{
    for (size_t s = 0; s < g->k; s++)
        if (g->seed[s] == seed)
            return true;
    return false;
}

/* Refuses dir/name when it exists and is no regular file (a directory, a FIFO, a device): a
 * golden holds the files hetsim writes, and a FIFO's open waited for a writer forever. */
static int regular(const char *dir, const char *name, sim_err *err)
{
    char path[2 * PATH_TEXT];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: not a regular file (%s): a golden holds the files hetsim writes",
                           path, sim_file_kind(st.st_mode));
    return SIM_OK;
}

/* Every file of the golden that is read: its seeds file and golden.json, each seed's
 * fingerprint and run outputs (before the seeds are known: the first two only). */
static int regular_files(const gold *g, sim_err *err)
{
    int rc = regular(g->path, "seeds", err);
    if (rc == SIM_OK)
        rc = regular(g->path, "golden.json", err);
    for (size_t s = 0; s < g->k && rc == SIM_OK; s++) {
        rc = regular(g->dir[s], "fingerprint", err);
        for (size_t i = 0; i < CK_NFINGERPRINT; i++)
            if (rc == SIM_OK)
                rc = regular(g->dir[s], ck_fingerprint_files[i], err);
    }
    return rc;
}

/* One line of the seeds file as getline read it (read bytes), its line end ("\n", "\r\n" or
 * none on the last line) and, on the first line, a byte-order mark cut off; false when it
 * holds a NUL byte. */
static bool seed_line(char *line, size_t read, size_t k)
{
    size_t bom = k == 0 ? sim_text_bom(line, read) : 0, len = read - bom;
    if (strlen(line) != read)
        return false;
    memmove(line, line + bom, len + 1);
    if (len > 0 && line[len - 1] == '\n')
        line[--len] = '\0';
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    return true;
}

/* A golden's seeds file that fopen could not open (errno as it left it): a golden that lost
 * it beside its golden.json is an incomplete one, which --update does not replace ("no golden
 * here (write one with --update)" led to that refusal); else no golden is here. */
static int no_seeds(const gold *g, const char *seeds, sim_err *err)
{
    int e = errno;
    char json[PATH_TEXT + 16];
    struct stat st;
    snprintf(json, sizeof(json), "%s/golden.json", g->path);
    if (e == ENOENT && lstat(json, &st) == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: missing: an incomplete golden (remove %s and write it again with "
                           "--update)",
                           seeds, g->path);
    return sim_err_set(err, SIM_EINVAL, NULL, "%s: no golden here (write one with --update)",
                       g->path);
}

/* The seeds file: one seed a line as --update writes it (decimal digits, no sign, space or
 * leading zero), no duplicates, at least GOLDEN_MIN seeds. A byte-order mark, CRLF line ends
 * and a last line without its newline are read as an editor leaves them; a file saved as
 * UTF-16 is named so (it was "line 1: not a seed"), as golden.json is. */
static int read_seeds(gold *g, sim_err *err)
{
    char path[PATH_TEXT], *line = NULL;
    size_t cap = 0;
    ssize_t read;
    snprintf(path, sizeof(path), "%s/seeds", g->path);
    struct stat st; /* regular_files checked it: a FIFO swapped in since is not waited on */
    FILE *f = sim_file_open_regular(path, &st);
    if (f == NULL && st.st_mode != 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: not a regular file (%s): a golden holds the files hetsim writes",
                           path, sim_file_kind(st.st_mode));
    if (f == NULL)
        return no_seeds(g, path, err);
    int rc = SIM_OK;
    while (rc == SIM_OK && (read = getline(&line, &cap, f)) != -1) {
        char *end = NULL;
        bool text = seed_line(line, (size_t)read, g->k);
        errno = 0;
        unsigned long long seed = strtoull(line, &end, 10);
        bool canonical = isdigit((unsigned char)line[0]) && (line[0] != '0' || line[1] == '\0');
        if (g->k == 0 && !text && sim_text_wide(line, (size_t)read))
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: %s", path, SIM_TEXT_WIDE_TEXT);
        else if (!text || !canonical || *end != '\0' || errno != 0)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: not a seed", path, g->k + 1);
        else if (ck_has_seed(g, seed))
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: seed %llu listed twice", path, seed);
        else if (g->k == MAX_GOLDEN)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: more than %d seeds", path, MAX_GOLDEN);
        else
            g->seed[g->k++] = seed;
    }
    if (rc == SIM_OK && ferror(f))
        rc = sim_err_set(err, errno == ENOMEM ? SIM_ENOMEM : SIM_EIO, NULL,
                         "%s: cannot be read: %s", path, strerror(errno));
    free(line);
    fclose(f);
    if (rc == SIM_OK && g->k < GOLDEN_MIN)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s: %zu seed%s; a statistical check needs at least %d (--update "
                         "--seeds 5)",
                         path, g->k, g->k == 1 ? "" : "s", GOLDEN_MIN);
    return rc;
}

/* golden.json: format, version and one scenario hash per seed, in the seeds file's order. */
static int read_manifest(gold *g, sim_err *err)
{
    sim_err_clear(err);
    sim_cfg *m = ck_read_json(g->path, "golden.json", err);
    if (m == NULL && err->file[0] != '\0' && err->code != SIM_ENOMEM) {
        /* Read, but no JSON: the parser's line and column stay (they were replaced by
         * "missing or unreadable" for a file that is there). */
        size_t used = strlen(err->msg);
        snprintf(err->msg + used, sizeof(err->msg) - used,
                 " (no golden.json hetsim wrote: write the golden again with --update)");
        return SIM_EINVAL;
    }
    if (m == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s/golden.json: missing or unreadable (a golden of an older hetsim? "
                           "write it again with --update)",
                           g->path);
    int64_t format = 0;
    size_t n = 0, nh = 0;
    /* Each key required: a missing one was read as its zero ("format 2 expected, got 0", "0
     * seeds and 3 hashes"). */
    int rc = SIM_OK;
    static const char *const keys[] = { "format", "hetsim_version", "seeds", "scenario_hashes" };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && rc == SIM_OK; i++)
        rc = sim_cfg_require(m, keys[i], err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(m, "format", 0, 1000, &format, err);
    if (rc == SIM_OK && format != GOLDEN_FORMAT)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/golden.json: format %d expected, got %d",
                         g->path, GOLDEN_FORMAT, (int)format);
    if (rc == SIM_OK)
        rc = sim_cfg_string(m, "hetsim_version", g->version, sizeof(g->version), err);
    if (rc == SIM_OK)
        rc = sim_cfg_array_len(m, "seeds", &n, err);
    if (rc == SIM_OK)
        rc = sim_cfg_array_len(m, "scenario_hashes", &nh, err);
    if (rc == SIM_OK && (n != g->k || nh != g->k))
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s/golden.json: %zu seeds and %zu hashes, the seeds file lists %zu",
                         g->path, n, nh, g->k);
    for (size_t i = 0; i < g->k && rc == SIM_OK; i++) {
        char *hash = NULL;
        double seed = -1; /* as a number: its text printed back was "1e+15" for 10^15 */
        rc = sim_cfg_at_double(m, "seeds", i, 0, (double)SIM_SCENARIO_SEED_MAX, true, &seed, err);
        if (rc == SIM_OK)
            rc = sim_cfg_at_json(m, "scenario_hashes", i, &hash, err);
        if (rc == SIM_OK && (uint64_t)seed != g->seed[i])
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s/golden.json: seed %zu is %.17g, the seeds file says %" PRIu64,
                             g->path, i + 1, seed, g->seed[i]);
        if (rc == SIM_OK && (strlen(hash) != 18 || hash[0] != '"'))
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/golden.json: bad scenario hash %s", g->path,
                             hash);
        else if (rc == SIM_OK)
            snprintf(g->hash[i], sizeof(g->hash[i]), "%.16s", hash + 1);
        free(hash);
    }
    if (rc == SIM_OK)
        rc = sim_cfg_check_unused(m, err);
    sim_cfg_destroy(m);
    return rc == SIM_OK || err->code == SIM_ENOMEM ? rc : (err->code = SIM_EINVAL);
}

/* Every seed-<S> directory is listed in the seeds file and every listed seed has one. S is
 * a listed seed as --update names its directory (decimal digits without a leading zero):
 * strtoull read "seed-08", "seed-+8" and "seed- 8" as seed 8's, so a copy there passed. A
 * listed seed's directory removed is an incomplete golden, said with its fix as a seed's
 * file removed is (it was "missing (listed in G/seeds)" alone). */
static int check_listing(const gold *g, sim_err *err)
{
    DIR *d = opendir(g->path);
    if (d == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: cannot list: %s", g->path, strerror(errno));
    int rc = SIM_OK;
    for (struct dirent *e = readdir(d); e != NULL && rc == SIM_OK; e = readdir(d)) {
        char *end = NULL;
        if (strncmp(e->d_name, "seed-", 5) != 0)
            continue;
        const char *s = e->d_name + 5;
        errno = 0;
        unsigned long long seed = strtoull(s, &end, 10);
        bool canonical = isdigit((unsigned char)s[0]) && (s[0] != '0' || s[1] == '\0');
        if (!canonical || *end != '\0' || errno != 0 || !ck_has_seed(g, seed))
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/%s: not listed in %s/seeds", g->path,
                             e->d_name, g->path);
    }
    closedir(d);
    for (size_t s = 0; s < g->k && rc == SIM_OK; s++) {
        struct stat st;
        if (stat(g->dir[s], &st) != 0)
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s: missing (listed in %s/seeds): an incomplete golden (write it "
                             "again with --update)",
                             g->dir[s], g->path);
        else if (!S_ISDIR(st.st_mode)) /* was "S/fingerprint: missing or unreadable" */
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s: not a directory (%s), where --update writes a seed's run: "
                             "a damaged golden (remove it and write the golden again with "
                             "--update)",
                             g->dir[s], sim_file_kind(st.st_mode));
    }
    return rc;
}

/* The first line (from 1) of the fingerprint text[len] that is not as ck_fingerprint writes
 * it ("FILE HASH\n", 16 lowercase hexadecimal digits, each file at most once and in
 * ck_fingerprint_files' order); 0 when every line is. An empty text is line 1. */
static size_t fingerprint_bad_line(const char *text, size_t len)
{
    const size_t nfiles = CK_NFINGERPRINT;
    const char *p = text, *end = text + strlen(text); /* a NUL byte ends it: bad */
    size_t next = 0, line = 1;
    for (; p < end; line++) {
        size_t f = next;
        while (f < nfiles &&
               strncmp(p, ck_fingerprint_files[f], strlen(ck_fingerprint_files[f])) != 0)
            f++;
        const char *h = f < nfiles ? p + strlen(ck_fingerprint_files[f]) : end;
        size_t hex = h < end && *h == ' ' ? strspn(h + 1, "0123456789abcdef") : 0;
        if (hex != 16 || h[17] != '\n')
            return line;
        next = f + 1;
        p = h + 18;
    }
    return len == 0 || p != text + len ? line : 0;
}

/* The files a check uses hash as the seed's fingerprint says: nothing edited or truncated.
 * The fingerprint itself is as --update writes it: a line appended or doubled passed here
 * and made check --exact report a regression (exit 1) of a damaged golden. */
static int check_fingerprint(gold *g, size_t s, sim_err *err)
{
    static const char *const used[] = { "metrics.csv", "run.json" };
    size_t len = 0;
    char *want = ck_slurp(g->dir[s], "fingerprint", &len);
    if (want == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s/fingerprint: missing or unreadable (an incomplete golden: write "
                           "it again with --update)",
                           g->dir[s]);
    size_t bad = fingerprint_bad_line(want, len);
    if (bad != 0 && strlen(want) != len) {
        free(want);
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s/fingerprint: holds a NUL byte (no fingerprint hetsim wrote: write "
                           "the golden again with --update)",
                           g->dir[s]);
    }
    if (bad != 0) {
        free(want);
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s/fingerprint: line %zu: not a line --update writes (\"FILE HASH\", "
                           "each file once, in order): a damaged golden, write it again with "
                           "--update",
                           g->dir[s], bad);
    }
    snprintf(g->fingerprint[s], sizeof(g->fingerprint[s]), "%s", want); /* 5 lines of 30 */
    int rc = SIM_OK;
    for (size_t i = 0; i < 2 && rc == SIM_OK; i++) {
        char line[128];
        uint64_t h = 0;
        if (!ck_file_hash(g->dir[s], used[i], &h)) {
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s/%s: missing or unreadable (an incomplete golden: write it again "
                             "with --update)",
                             g->dir[s], used[i]);
            break;
        }
        snprintf(line, sizeof(line), "%s %016" PRIx64 "\n", used[i], h);
        if (strstr(want, line) == NULL)
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s/%s: does not match %s/fingerprint (edited or truncated)",
                             g->dir[s], used[i], g->dir[s]);
    }
    free(want);
    return rc;
}

/* run.json of seed s: its seed (the run's and its scenario's), scenario hash and version are
 * the golden's. It is kept (g->run[s]): a check compares its runs with the golden as read, not
 * read again. */
static int check_run_json(gold *g, size_t s, sim_err *err)
{
    sim_cfg *run = ck_read_run(g->dir[s], err);
    if (run == NULL)
        return err->code;
    int64_t seed = -1, scenario_seed = -1;
    char hash[32] = "", version[64] = "";
    sim_cfg *sc = NULL;
    int rc = sim_cfg_int(run, "seed", 0, INT64_MAX, &seed, err);
    if (rc == SIM_OK)
        rc = sim_cfg_child(run, "scenario", &sc, err);
    if (rc == SIM_OK && sc == NULL)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/run.json: no scenario", g->dir[s]);
    if (rc == SIM_OK)
        rc = sim_cfg_int(sc, "seed", 0, INT64_MAX, &scenario_seed, err);
    if (rc == SIM_OK)
        rc = sim_cfg_string(run, "scenario_hash", hash, sizeof(hash), err);
    if (rc == SIM_OK)
        rc = sim_cfg_string(run, "hetsim_version", version, sizeof(version), err);
    if (rc == SIM_OK && (uint64_t)seed != g->seed[s])
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/run.json: seed %" PRId64 ", not %" PRIu64,
                         g->dir[s], seed, g->seed[s]);
    /* Another seed's run under this seed's name (its run.json's seed and hashes edited to
     * match) made the golden hold that seed twice, exit 0. */
    if (rc == SIM_OK && scenario_seed != seed)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s/run.json: a run of seed %" PRId64
                         " (its scenario's seed), not %" PRId64 ": another seed's run copied in",
                         g->dir[s], scenario_seed, seed);
    if (rc == SIM_OK && strcmp(hash, g->hash[s]) != 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s/run.json: scenario hash %s, golden.json says %s (a run of another "
                         "scenario)",
                         g->dir[s], hash, g->hash[s]);
    if (rc == SIM_OK && strcmp(version, g->version) != 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s/run.json: hetsim %s, golden.json says %s (seeds of two versions)",
                         g->dir[s], version, g->version);
    if (rc == SIM_OK)
        g->run[s] = run;
    else
        sim_cfg_destroy(run);
    return rc == SIM_OK || err->code == SIM_ENOMEM ? rc : (err->code = SIM_EINVAL);
}

/* The first line of dir/metrics.csv into out[size] ("" if unreadable). */
static void header(const char *dir, char *out, size_t size)
{
    char path[PATH_TEXT];
    out[0] = '\0';
    if (snprintf(path, sizeof(path), "%s/metrics.csv", dir) >= (int)sizeof(path))
        return; /* unreadable: the shapes then differ, and the check says which seed */
    struct stat st;
    FILE *f = sim_file_open_regular(path, &st);
    if (f != NULL && fgets(out, (int)size, f) == NULL)
        out[0] = '\0';
    if (f != NULL)
        fclose(f);
}

static const enum app_curve_col tested_cols[] = { APP_CURVE_ACC, APP_CURVE_LOSS, APP_CURVE_TP };

/* Seed s has the columns, rows, times and empty fields of seed 0. */
static int check_same_shape(const gold *g, size_t s, sim_err *err)
{
    char h0[4096], h[4096];
    header(g->dir[0], h0, sizeof(h0));
    header(g->dir[s], h, sizeof(h));
    const app_curve *a = &g->curve[0], *b = &g->curve[s];
    if (strcmp(h0, h) != 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s/metrics.csv: columns differ from %s's",
                           g->dir[s], g->dir[0]);
    if (a->n != b->n)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s/metrics.csv: %zu rows, %s has %zu", g->dir[s],
                           b->n, g->dir[0], a->n);
    for (size_t i = 0; i < a->n; i++) {
        if (a->col[APP_CURVE_TIME][i] != b->col[APP_CURVE_TIME][i])
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s/metrics.csv: row %zu at time_s %.9g, %s's at %.9g", g->dir[s], i,
                               b->col[APP_CURVE_TIME][i], g->dir[0], a->col[APP_CURVE_TIME][i]);
        for (size_t k = 0; k < 3; k++)
            if (isnan(a->col[tested_cols[k]][i]) != isnan(b->col[tested_cols[k]][i]))
                return sim_err_set(err, SIM_EINVAL, NULL, "%s/metrics.csv: row %zu: %s %s, %s's %s",
                                   g->dir[s], i, app_curve_names[tested_cols[k]],
                                   isnan(b->col[tested_cols[k]][i]) ? "empty" : "set", g->dir[0],
                                   isnan(a->col[tested_cols[k]][i]) ? "empty" : "set");
    }
    return SIM_OK;
}

/* Whether the straggler rules of the resolved scenarios a and b (their "stragglers" arrays,
 * item by item) are the same, but for the workers a rule that selects them by "count" drew:
 * they are a result of the seed, as its other random draws are (scenario/scenario_stragglers.c
 * records them beside the count), so such rules are compared by their count and the rest; a
 * rule of explicit workers is compared whole. */
static bool same_rules(sim_cfg *a, sim_cfg *b)
{
    static const char *const drawn[] = { "workers" };
    size_t na = 0, nb = 0;
    if (sim_cfg_has(a, "stragglers") != sim_cfg_has(b, "stragglers") ||
        sim_cfg_array_len(a, "stragglers", &na, NULL) != SIM_OK ||
        sim_cfg_array_len(b, "stragglers", &nb, NULL) != SIM_OK || na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        sim_cfg *ra = NULL, *rb = NULL;
        if (sim_cfg_at(a, "stragglers", i, &ra, NULL) != SIM_OK ||
            sim_cfg_at(b, "stragglers", i, &rb, NULL) != SIM_OK || ra == NULL || rb == NULL)
            return false; /* no rule a run writes: a hand-made run.json */
        bool counted = sim_cfg_has(ra, "count") && !sim_cfg_is_null(ra, "count");
        if (sim_cfg_diff(ra, rb, drawn, counted ? 1 : 0, NULL, 0) > 0)
            return false; /* a count of b's that differs from a's is a difference */
    }
    return true;
}

/* Adds "profile_fnv" and "traces_fnv" to the n keys listed in out[size] when the run.json `a`
 * and `b` record other bytes of the profile, or other points of the traces, their scenarios
 * name (or only one records any): the scenario names the files, and a profile or a trace edited
 * after the golden was written ran another scenario under the same name ("ok against" the
 * golden, or --exact's REGRESSION, exit 1). */
static long diff_inputs(sim_cfg *a, sim_cfg *b, char *out, size_t size, long n)
{
    static const char *const keys[] = { "profile_fnv", "traces_fnv" };
    for (size_t k = 0; k < 2; k++) {
        char fa[32] = "", fb[32] = "";
        if (sim_cfg_has(a, keys[k]))
            sim_cfg_string(a, keys[k], fa, sizeof(fa), NULL);
        if (sim_cfg_has(b, keys[k]))
            sim_cfg_string(b, keys[k], fb, sizeof(fb), NULL);
        if (strcmp(fa, fb) == 0)
            continue;
        size_t len = size > 0 ? strlen(out) : 0;
        if (size > 0)
            snprintf(out + len, size - len, "%s%s", n > 0 ? ", " : "", keys[k]);
        n++;
    }
    return n;
}

/* The keys in which the scenario of b_dir/run.json differs from that of the run.json `a`
 * (a_dir's), but for those that do not change the curves' distribution: the seed, the output
 * section, the check's tolerances and the workers a counted straggler rule drew (same_rules;
 * "stragglers" is listed when another of its values differs); and profile_fnv and traces_fnv,
 * the bytes of the profile and the points of the traces it names. Lists them in out[size]; returns
 * their number, or -1 with `err` filled. */
static long diff_with(sim_cfg *a, const char *a_dir, const char *b_dir, char *out, size_t size,
                      sim_err *err)
{
    static const char *const skip[] = { "seed", "output", "check", "stragglers" };
    sim_cfg *b = ck_read_run(b_dir, err), *sa = NULL, *sb = NULL;
    long n = -1;
    if (b != NULL && sim_cfg_child(a, "scenario", &sa, err) == SIM_OK &&
        sim_cfg_child(b, "scenario", &sb, err) == SIM_OK) {
        if (sa == NULL || sb == NULL)
            sim_err_set(err, SIM_EINVAL, NULL, "%s/run.json: no scenario",
                        sa == NULL ? a_dir : b_dir);
        else
            n = (long)sim_cfg_diff(sa, sb, skip, 4, out, size);
        if (n >= 0 && !same_rules(sa, sb)) {
            size_t len = size > 0 ? strlen(out) : 0;
            if (size > 0)
                snprintf(out + len, size - len, "%sstragglers", n > 0 ? ", " : "");
            n++;
        }
        if (n >= 0)
            n = diff_inputs(a, b, out, size, n);
    }
    sim_cfg_destroy(b);
    return n;
}

/* diff_with for a_dir/run.json. */
static long diff_runs(const char *a_dir, const char *b_dir, char *out, size_t size, sim_err *err)
{
    sim_cfg *a = ck_read_run(a_dir, err);
    long n = a != NULL ? diff_with(a, a_dir, b_dir, out, size, err) : -1;
    sim_cfg_destroy(a);
    return n;
}

/* Seed s is a run of the first seed's scenario, but for the seed: a golden holds one
 * scenario's seeds (a foreign seed passed once its hash in golden.json was edited). */
static int check_same_scenario(gold *g, size_t s, sim_err *err)
{
    char keys[1024];
    long n = diff_with(g->run[0], g->dir[0], g->dir[s], keys, sizeof(keys), err);
    if (n < 0)
        return err->code;
    if (n > 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s/run.json: a run of another scenario than %s's (%ld key%s differ: "
                           "%s): write the golden again with --update",
                           g->dir[s], g->dir[0], n, n > 1 ? "s" : "", keys);
    return SIM_OK;
}

/* One reading of the golden at `path` (see ck_read_golden). */
static int read_golden_once(const char *path, gold *g, sim_err *err)
{
    memset(g, 0, sizeof(*g));
    g->path = path;
    int rc = regular_files(g, err);
    if (rc == SIM_OK)
        rc = read_seeds(g, err);
    for (size_t s = 0; s < g->k; s++)
        snprintf(g->dir[s], sizeof(g->dir[s]), "%s/seed-%" PRIu64, path, g->seed[s]);
    if (rc == SIM_OK)
        rc = regular_files(g, err);
    if (rc == SIM_OK)
        rc = check_listing(g, err);
    if (rc == SIM_OK)
        rc = read_manifest(g, err);
    size_t loaded = 0;
    for (size_t s = 0; s < g->k && rc == SIM_OK; s++) {
        rc = check_fingerprint(g, s, err);
        if (rc == SIM_OK)
            rc = check_run_json(g, s, err);
        if (rc == SIM_OK && s > 0)
            rc = check_same_scenario(g, s, err);
        if (rc == SIM_OK && (rc = app_curve_read(g->dir[s], &g->curve[s], err)) == SIM_OK)
            loaded++;
        if (rc == SIM_OK)
            rc = check_same_shape(g, s, err);
    }
    if (rc != SIM_OK) {
        size_t k = g->k;
        g->k = loaded;
        ck_golden_fini(g);
        g->k = k;
        if (err->code != SIM_ENOMEM)
            err->code = SIM_EINVAL;
    }
    return rc;
}

/* The golden directory's identity: `path` opened (O_PATH: nothing read, a FIFO not waited
 * on), its device and inode into *st; -1 when nothing is there. The open descriptor keeps the
 * inode from being reused while it is held. */
static int pin(const char *path, struct stat *st)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, st) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* True if `path` names what was pinned at `fd` (st), or nothing as then (fd -1). */
static bool still_there(int fd, const struct stat *st, const char *path)
{
    struct stat now;
    if (stat(path, &now) != 0)
        return fd < 0;
    return fd >= 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino;
}

/* Loads and validates the golden at `path`; on error `err` names the file at fault and the
 * code is SIM_EINVAL (or SIM_ENOMEM). Its files are read by their paths, and an update
 * swaps a new golden in at `path` (renameat2 RENAME_EXCHANGE) and removes the old one
 * meanwhile: a check that read the old golden's seeds file and a seed of the new one said
 * "missing or unreadable (an incomplete golden...)" of a golden whole at every instant. So
 * the directory at `path` is pinned before the reading and compared after it: an update
 * never puts back a golden it swapped out (it removes it, and the pin keeps its inode from
 * being reused), so the same directory at both ends was there throughout and every file
 * came from it; another one means a swap happened, and the golden is read again. */
int ck_read_golden(const char *path, gold *g, sim_err *err)
{
    for (int tries = 0;; tries++) {
        struct stat st;
        int fd = pin(path, &st);
        int rc = read_golden_once(path, g, err);
        bool same = still_there(fd, &st, path);
        if (fd >= 0)
            close(fd);
        if (same)
            return rc;
        if (rc == SIM_OK)
            ck_golden_fini(g);
        if (tries == GOLDEN_READS)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: replaced by an update each of the %d times it was read: "
                               "check again when the updates are done",
                               path, GOLDEN_READS + 1);
        sim_err_clear(err);
    }
}

long ck_scenario_diff(gold *g, const char *dir, char *out, size_t size, sim_err *err)
{
    return diff_with(g->run[0], g->dir[0], dir, out, size, err);
}

long ck_runs_diff(const char *a, const char *b, char *out, size_t size, sim_err *err)
{
    return diff_runs(a, b, out, size, err);
}

/* run.json of the run in `dir` against the golden's seed s (g->run[s], as ck_read_golden read
 * it), key by key: a scenario whose keys were written in another order gives a run.json of
 * them in that order and another scenario_hash, the hash of that text, for the same run (it
 * was a REGRESSION). Objects are compared by their keys, arrays item by item, numbers by value;
 * scenario_hash is not compared (the scenario it hashes is), nor the scenario's output and
 * check sections, which change no run and which the scenario comparison leaves out (another
 * output.dir or `--set check.loss_rel=0.1` was a REGRESSION). The differing keys into
 * out[size]; returns their number, -1 when dir/run.json is no JSON. */
static long run_json_diff(const gold *g, size_t s, const char *dir, char *out, size_t size)
{
    static const char *const skip[] = { "scenario_hash", "scenario.output", "scenario.check" };
    sim_err err;
    sim_err_clear(&err);
    sim_cfg *run = ck_read_run(dir, &err);
    long n = run != NULL ? (long)sim_cfg_diff(g->run[s], run, skip, 3, out, size) : -1;
    sim_cfg_destroy(run);
    return n;
}

/* Prints "  FILE differs" to `out` for each output file of `dir` whose hash is not the one
 * the fingerprint text `want` lists (or that one of the two lacks), run.json but when its
 * keys are the same (keys: its differing keys, `keyed` their number or -1); returns how many
 * were printed. */
static size_t fingerprint_diff(const char *dir, const char *want, long keyed, const char *keys,
                               FILE *out)
{
    size_t n = 0;
    for (size_t i = 0; i < CK_NFINGERPRINT; i++) {
        char line[128];
        uint64_t h = 0;
        bool here = ck_file_hash(dir, ck_fingerprint_files[i], &h);
        snprintf(line, sizeof(line), "%s %016" PRIx64 "\n", ck_fingerprint_files[i], h);
        bool there = strstr(want, ck_fingerprint_files[i]) != NULL;
        bool run_json = strcmp(ck_fingerprint_files[i], "run.json") == 0;
        if (here != there || (here && strstr(want, line) == NULL && !(run_json && keyed == 0))) {
            if (out != NULL && run_json && keyed > 0)
                fprintf(out, "  run.json differs (%s)\n", keys);
            else if (out != NULL)
                fprintf(out, "  %s differs\n", ck_fingerprint_files[i]);
            n++;
        }
    }
    return n;
}

int ck_check_exact(const char *file, uint64_t seed, const gold *g, const char *dir, FILE *out)
{
    char path[PATH_TEXT + 32] = "", got[1024], keys[1024] = "";
    const char *want = "";
    size_t s = 0;
    while (s < g->k && g->seed[s] != seed)
        s++;
    if (s < g->k) {
        want = g->fingerprint[s];
        snprintf(path, sizeof(path), "%s/fingerprint", g->dir[s]);
    }
    ck_fingerprint(dir, got, sizeof(got));
    if (strcmp(want, got) == 0) {
        fprintf(out, "%s: ok, every output byte as in %s (but the wall line)\n", file, path);
        return APP_CHECK_PASS;
    }
    long keyed = s < g->k ? run_json_diff(g, s, dir, keys, sizeof(keys)) : -1;
    if (fingerprint_diff(dir, want, keyed, keys, NULL) == 0) {
        fprintf(out,
                "%s: ok, every output as in %s (byte for byte but the wall line; run.json key "
                "by key: the same keys and values, in another order or spelling)\n",
                file, path);
        return APP_CHECK_PASS;
    }
    fprintf(out, "%s: REGRESSION: outputs differ from %s\n", file, path);
    fingerprint_diff(dir, want, keyed, keys, out);
    return APP_CHECK_REGRESSION;
}
