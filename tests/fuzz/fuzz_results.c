/* libFuzzer target: the results files `hetsim report` reads, through the report itself
 * (app/report.c): a sweep's index.csv (app/index.c), and a run directory's metrics.csv,
 * workers.csv (app/curves.c) and run.json (its stop target), each read by the one strict
 * reader of results files (outputs/csv.h); then the grouping, the intervals and both formats.
 *
 * Input: the bytes of index.csv, then optionally a line "--metrics" and metrics.csv's, a line
 * "--workers" and workers.csv's, a line "--run" and run.json's, in that order; the three are
 * written into the run directory "r" beside index.csv (a part left out is a file absent), so
 * that index rows whose dir is "r" reach them. The report is made by the first swept key
 * (the index's third column), or by "seed" when the index does not load, with the runs' stop
 * target and with --target 0.5, as a Markdown table and as CSV.
 *
 * Checked beyond the sanitizers: a refused report has an error that names the file at fault
 * (index.csv, metrics.csv, workers.csv or run.json) or says what is missing (a key, runs, a
 * run's file: its hint comes first, a long path may be cut), and prints nothing; a report's CSV
 * form reads back by the same reader with the header's width, every figure (after the key) a finite
 * number or empty: no "inf" or "nan" from a damaged number. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "app/index.h"
#include "app/report.h"
#include "fuzz_util.h"
#include "outputs/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes the part of `data` before `sep` (if any) and returns what follows, or NULL. */
static const uint8_t *part(const char *name, const uint8_t *data, size_t size, const char *sep,
                           size_t *rest)
{
    size_t head = 0;
    const uint8_t *next = data != NULL ? fuzz_split(data, size, sep, &head, rest) : NULL;
    fuzz_dir_file(name, data, data != NULL ? head : 0);
    return next != NULL && next < data + size ? next : NULL;
}

/* The report's CSV `text` holds only finite numbers after its first `keys` columns. */
static void check_csv(char *text, size_t len, size_t keys)
{
    sim_csv t;
    if (sim_csv_parse(&t, text, len, "report.csv", NULL, NULL) != SIM_OK)
        abort();
    for (size_t r = 0; r < t.nrows; r++)
        for (size_t c = keys; c < t.ncols; c++) {
            const char *s = sim_csv_cell(&t, r, c);
            double x;
            if (s[0] != '\0' && !sim_csv_parse_number(s, &x))
                abort();
        }
    sim_csv_fini(&t);
}

static void report(const char *dir, const char *key, double target, app_report_format format)
{
    app_report_options o = { .sweep_dir = dir,
                             .sel = { .by = key, .target = target },
                             .format = format };
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        abort();
    sim_err err;
    int rc = app_report_print(&o, f, NULL, &err);
    if (fclose(f) != 0)
        abort();
    if (rc != SIM_OK) {
        static const char *const named[] = {
            "index.csv",
            "metrics.csv",
            "workers.csv",
            "run.json",
            "no column",
            "no runs",
            "incomplete run directory", /* the hint first: a long path may be cut short */
            "cannot read",              /* the same */
            "--best-over", /* a group mixing a swept key's values: the options that resolve it */
        };
        bool ok = rc == SIM_ENOMEM;
        for (size_t i = 0; i < sizeof(named) / sizeof(named[0]) && !ok; i++)
            ok = strstr(err.msg, named[i]) != NULL || strstr(err.file, named[i]) != NULL;
        if (!ok || len > 0)
            abort(); /* a refusal names what is wrong and prints nothing */
        free(text);
        return;
    }
    if (format == APP_REPORT_CSV)
        check_csv(text, len, 1); /* takes the text over */
    else
        free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    size_t head = 0, rest = 0;
    const uint8_t *next = fuzz_split(data, size, "\n--metrics\n", &head, &rest);
    const char *file = fuzz_dir_file("index.csv", data, head);
    char dir[512], key[256] = "seed";
    snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(file, '/') - file), file);
    next = part("r/metrics.csv", head < size ? next : NULL, rest, "\n--workers\n", &rest);
    next = part("r/workers.csv", next, rest, "\n--run\n", &rest);
    part("r/run.json", next, rest, "\n--end\n", &rest);
    app_index ix;
    if (app_index_read(dir, &ix, NULL) == SIM_OK) {
        snprintf(key, sizeof(key), "%s", ix.csv.head[2]);
        app_index_fini(&ix);
    }
    for (int t = 0; t < 2; t++)
        for (int f = 0; f < 2; f++)
            report(dir, key, t == 0 ? (double)NAN : 0.5, f == 0 ? APP_REPORT_MD : APP_REPORT_CSV);
    return 0;
}
