/* Golden-curve checks, internal (see check.h): what the check's files share. Included
 * only by app/check.c (loading and running the scenario, updates, the exact and statistical
 * checks), app/check_golden.c (reading and validating a golden, runs compared with it),
 * app/check_files.c (a run directory's files: fingerprints, JSON, run.json in canonical form),
 * app/check_places.c (where a check may write) and app/check_report.c (check.csv, check.png,
 * the JUnit report); calls run one way: check.c -> check_golden.c -> check_files.c, check.c ->
 * check_files.c, check.c -> check_places.c -> check_report.c, check_places.c -> check_files.c and
 * check.c -> check_report.c. */
#ifndef APP_CHECK_STATE_H
#define APP_CHECK_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "app/check.h"
#include "app/curves.h"
#include "outputs/rundir.h"
#include "sim/cfg.h"
#include "sim/err.h"

#define PATH_TEXT     1024
#define CHECK_DIR_MAX 959 /* a check's output: room for "/seed-S/" and a file */
#define MAX_GOLDEN    64  /* seeds in one golden */
#define GOLDEN_MIN    3   /* seeds a statistical check needs */
#define GOLDEN_FORMAT 2   /* golden.json's format */
#define GOLDEN_READS  100 /* a golden read again when an update swapped it meanwhile */
#define GOLDEN_MARKER SIM_RUNDIR_GOLDEN_MARKER /* marks an update's work directory */

/* A golden, read and validated (ck_read_golden). */
typedef struct gold {
    const char *path;                  /* the golden directory */
    size_t k;                          /* seeds */
    uint64_t seed[MAX_GOLDEN];         /* (k) */
    char hash[MAX_GOLDEN][32];         /* (k) the scenario hash of each seed's run */
    char version[64];                  /* hetsim's version that wrote it */
    char dir[MAX_GOLDEN][PATH_TEXT];   /* (k) the seed directories */
    app_curve curve[MAX_GOLDEN];       /* (k) their metrics.csv */
    char fingerprint[MAX_GOLDEN][256]; /* (k) their fingerprint files, as validated */
    sim_cfg *run[MAX_GOLDEN];          /* (k) their run.json files, parsed; owned */
} gold;

/* The statistics compared, each a number per run (docs/check.md). */
enum stat_id {
    ST_ACC_MEAN,
    ST_ACC_FINAL,
    ST_ACC_JITTER,
    ST_LOSS,
    ST_TP,
    NSTATS
};

/* A statistic: its name, the curve it belongs to and the column it reads. */
typedef struct stat_def {
    const char *name;  /* in messages, check.csv and the JUnit report */
    const char *curve; /* the JUnit test case it belongs to */
    enum app_curve_col col;
} stat_def;

/* The statistics, indexed by stat_id (app/check_report.c). */
extern const stat_def stat_defs[NSTATS];

/* The test of one statistic. */
typedef struct verdict {
    bool tested;  /* false: no values in the golden (a model without accuracy) */
    bool ok;      /* the run's mean lies within the band */
    double gmean; /* the golden seeds' mean */
    double gsd;   /* their standard deviation */
    double rmean; /* the run seeds' mean */
    double half;  /* the band's half-width: max(q * s * sqrt(1/K + 1/M), floor) */
    double floor; /* the tolerance floor */
} verdict;

/* ---- app/check_files.c ---- */

/* The output files of a run that its fingerprint lists, in its order. */
#define CK_NFINGERPRINT 5
extern const char *const ck_fingerprint_files[CK_NFINGERPRINT];

/* FNV-1a 64 of dir/name (summary.json without its wall line) into *h; false if absent. */
bool ck_file_hash(const char *dir, const char *name, uint64_t *h);

/* The fingerprint of a run directory into out[size]: a line "file hash" per output file. */
void ck_fingerprint(const char *dir, char *out, size_t size);

/* Writes dir/fingerprint. */
int ck_write_fingerprint(const char *dir, sim_err *err);

/* dir/name read whole (malloc'd), NULL if it cannot be read; its length in *len. */
char *ck_slurp(const char *dir, const char *name, size_t *len);

/* dir/name parsed as JSON; NULL (SIM_EINVAL naming the file, or SIM_ENOMEM) if absent or
 * malformed. */
sim_cfg *ck_read_json(const char *dir, const char *name, sim_err *err);

/* True if dir/name (dir itself for name "") exists. */
bool ck_exists(const char *dir, const char *name);

/* dir/run.json parsed as ck_read_json does, its "scenario" object (when it has one) in
 * canonical form (sim_scenario_canonical): what a check compares, so that [1, 1, 1, 1] and [1],
 * "stragglers": [] and none, "./p.csv" and "p.csv" are one scenario. */
sim_cfg *ck_read_run(const char *dir, sim_err *err);

/* ---- app/check_golden.c ---- */

/* --exact: the run in `dir` of seed `seed` (one of g's) of the scenario `file` compared byte
 * for byte with the golden's fingerprint of that seed as ck_read_golden read it (not read
 * again: an update may have swapped another golden in since), run.json key by key with the
 * golden's as read (the same keys and values in another order, the scenario's as written,
 * pass; its scenario_hash, the hash of that text, is not compared): APP_CHECK_PASS or
 * APP_CHECK_REGRESSION, the verdict on `out`. */
int ck_check_exact(const char *file, uint64_t seed, const gold *g, const char *dir, FILE *out);

/* Frees the curves of g's seeds and their run.json files. */
void ck_golden_fini(gold *g);

/* True if the golden holds `seed`. */
bool ck_has_seed(const gold *g, uint64_t seed);

/* Loads and validates the golden at `path` (its files as fingerprinted, every seed a run of
 * the first seed's scenario but for the seed, the same rows and columns); on error `err`
 * names the file at fault and the code is SIM_EINVAL (or SIM_ENOMEM). */
int ck_read_golden(const char *path, gold *g, sim_err *err);

/* The keys in which the scenario of dir/run.json differs from the golden's first seed's as
 * ck_read_golden read it (but the seed, the output section and the check's tolerances),
 * listed into out[size]; returns their number, or -1 with `err` filled. */
long ck_scenario_diff(gold *g, const char *dir, char *out, size_t size, sim_err *err);

/* The same between the runs in the directories a and b. */
long ck_runs_diff(const char *a, const char *b, char *out, size_t size, sim_err *err);

/* ---- app/check_places.c ---- */

/* The places a check writes, refused before anything runs (the ownership rule,
 * outputs/rundir.h): the JUnit report's file inside no hetsim output and never a directory or a
 * device replaced, nor the scenario file or one of the check's own files; the output
 * directory `dir` (NULL: not known yet) inside no run, work directory or golden, and none of
 * them, nor a sweep's directory, itself, nor holding a file named as its own that no check
 * wrote. *junit_ok: whether a report may be written where --junit names (not even one of
 * this error where it was refused). */
int ck_check_places(const app_check_options *opt, const char *dir, bool *junit_ok, sim_err *err);

/* Whether an update may replace `dir`: absent, an empty directory, or a golden (it has a seeds
 * file) of nothing but what an update writes (a folder of one's own holding a file named seeds,
 * a README or a folder of notes kept in a golden are refused, naming the first such entry). */
int ck_golden_replaceable(const char *dir, sim_err *err);

/* Moves the complete new golden `work` into place as `golden`: an atomic exchange with the old
 * golden when there is one (the old one, now at `work`, is then removed), a rename otherwise. */
int ck_golden_swap(const char *golden, const char *work, sim_err *err);

/* Removes `path` and everything under it (symbolic links are removed, not followed). */
void ck_remove_tree(const char *path);

/* ---- app/check_report.c ---- */

/* Refuses an output directory `dir` that is no check's (its check.csv is not one a check
 * wrote) but holds a file named as one the check writes there (check.csv, check-golden.csv,
 * check-run.csv, check.png): a user's own check.csv or a link there was replaced, exit 0; and
 * a check's own one where such a file is no regular file (a directory there failed the check
 * after its runs, exit 1; a FIFO or a link was replaced). */
int ck_own_files(const char *dir, sim_err *err);

/* check.csv, check-golden.csv, check-run.csv and check.png into `dir` (*drawn: the figure
 * was written; a `dir` gnuplot cannot take leaves it out, said on `out`). */
int ck_figure(const char *dir, const gold *g, const app_curve *runs, size_t m, const verdict *v,
              bool *drawn, FILE *out, sim_err *err);

/* The JUnit report `path`: a test case per curve, or (v NULL) one case "golden" in error;
 * `wall_s`, the check's wall time (its runs included), is the suite's time attribute, split
 * evenly over its test cases'. */
int ck_write_junit(const char *path, const char *golden_dir, const verdict *v, const char *error,
                   double wall_s, sim_err *err);

#endif
