/* Which runs of a finished sweep a table or a figure shows, and how they group: `--by
 * K1[,K2...]`, `--where KEY=VALUE`, `--best-over KEY[,KEY2...]` and `--tune-seeds LIST`
 * (docs/compare.md, "Groups, filters and tuning"). Shared by `hetsim report` and `hetsim plot
 * SWEEP_DIR --by`.
 *
 * The runs with results that pass every --where filter (a KEY given several times: any of
 * its values) are grouped by their values of the --by keys, a group per distinct tuple in the
 * order the tuples first appear in index.csv. Every other swept key must have one value in
 * each group, unless --best-over names it: a group that mixes values of a swept key would
 * average different settings into one row or line (four learning rates pooled as one
 * protocol's 20 runs), so it is refused, naming the key, its values in that group and the
 * three ways out (keep it with --by, tune it with --best-over, pick one value with --where).
 * The seeds are what a group averages over.
 *
 * With --best-over, a group's runs are split into cells by the tuned keys' values, and the
 * group shows its best cell: the largest share of runs reaching the target, then the shortest
 * mean time to target, then the best mean final accuracy. With --tune-seeds, that choice is
 * made on the runs of the listed seeds and the group shows the chosen cell's runs of the other
 * seeds, so that the figures reported are not those the choice was made on. The choice is
 * said to be at the grid's edge when a tuned key's chosen value is the smallest or largest
 * number the group swept (the best may lie beyond it), and within the intervals of the cells
 * whose 95% interval on the deciding figure overlaps the chosen one's.
 *
 * Time to target: `target` (NaN: the runs' common stop.target_accuracy, or none) read from
 * each run's metrics.csv under `rule` (app/curves.h). A run that stopped at its target
 * (index.csv's stop_reason target_accuracy) ends at the first crossing, so only the rule
 * "first" is defined for it: another rule with such runs is refused.
 */
#ifndef APP_SELECT_H
#define APP_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "app/curves.h"
#include "app/index.h"
#include "sim/err.h"

#define APP_SELECT_MAX_KEYS 8 /* keys in --by, and in --best-over */

typedef struct app_select_options {
    const char *by;           /* "K1[,K2...]": swept keys (or seed) to group by */
    const char *best_over;    /* NULL, or "K[,K2...]": swept keys tuned per group */
    const char *const *where; /* (nwhere) "KEY=VALUE" filters */
    size_t nwhere;
    const char *tune_seeds; /* NULL, or the seeds tuned on: "11,12" or "11-12,15" */
    double target;          /* the target accuracy, or NaN: the runs' stop target */
    app_ttt_rule rule;      /* how a time to target is read */
} app_select_options;

/* What a run contributes to the choice (and to every table): from index.csv and its
 * metrics.csv. */
typedef struct app_select_run {
    double ttt;             /* time to target under the rule, NaN: not reached (or none) */
    double observed_s;      /* its last evaluation's time */
    double final;           /* final test accuracy (index.csv), NaN if none */
    bool ended_below;       /* reached the target (rule "first") and ended below it */
    bool short_window;      /* rule movavg:K over fewer than K evaluations: no window full */
    bool stopped_at_target; /* stop_reason target_accuracy */
} app_select_run;

/* A group's runs that share the tuned keys' values, with the figures the choice compares:
 * over the tuning runs (those of --tune-seeds, else all). */
typedef struct app_select_cell {
    size_t group;
    const char **value; /* (nbest) the tuned keys' values, borrowed from the index; owned array */
    size_t *rows;       /* (n) index rows, all seeds; owned */
    size_t n;
    size_t ntune, reached;         /* tuning runs, and how many reached the target */
    double ttt_mean, ttt_half;     /* over the tuning runs that reached it */
    double final_mean, final_half; /* over the tuning runs */
} app_select_cell;

typedef struct app_select_group {
    const char **value; /* (nby) the --by keys' values, borrowed from the index; owned array */
    size_t *rows;       /* (n) the runs shown: the best cell's report seeds; owned */
    size_t n;
    size_t best; /* its chosen cell (with --best-over), an index of cells */
    bool edge;   /* a tuned key's chosen value is the grid's smallest or largest number */
    char *close; /* the other cells within the deciding interval ("workload.lr=0.05 and
                    workload.lr=0.2"), or NULL; owned */
} app_select_group;

typedef struct app_select {
    app_index ix;
    size_t nby, nbest;
    int by_col[APP_SELECT_MAX_KEYS], best_col[APP_SELECT_MAX_KEYS];
    const char *by_key[APP_SELECT_MAX_KEYS], *best_key[APP_SELECT_MAX_KEYS]; /* index heads */
    double target; /* NaN: no time to target */
    app_ttt_rule rule;
    app_select_run *runs;     /* (ix.csv.nrows) */
    app_select_group *groups; /* (ngroups) */
    size_t ngroups;
    app_select_cell *cells; /* (ncells) */
    size_t ncells;
    size_t left_out;     /* points without results */
    size_t filtered_out; /* runs with results that a --where filter left out */
    bool tuned_apart;    /* --tune-seeds: the tuning runs are not the runs shown */
    char tune_text[256]; /* the seeds tuned on, as given ("" without --tune-seeds) */
    size_t compared;     /* groups and cells a run was held against while grouping (a test
                            counts them: about one a run, where they grew as the groups' square) */
} app_select;

/* Reads sweep_dir's index.csv and the metrics.csv of every selected run, then groups and
 * tunes as above into `s`; warnings (a choice at the grid's edge) go to `log` (NULL: none).
 * SIM_EINVAL: no index.csv (with a hint), a --by, --best-over or --where key that is not a
 * swept key or seed (the message lists them), seed tuned over, a key both grouped by and
 * tuned, more than APP_SELECT_MAX_KEYS keys, a --where that is not KEY=VALUE, a --tune-seeds
 * list that is not seeds, names no seed of the sweep or every one of a group's seeds, a group
 * that mixes values of an unreduced swept key (the key, its values, and --by, --best-over and
 * --where), no run with results left, runs with different stop targets and no target,
 * another rule than "first" with runs that stopped at their target, a run's files missing or
 * damaged (app/curves.h); SIM_EIO; SIM_ENOMEM. `s` is zeroed on error. */
int app_select_read(app_select *s, const char *sweep_dir, const app_select_options *o, FILE *log,
                    sim_err *err);

/* Frees what `s` owns and zeroes it. */
void app_select_fini(app_select *s);

/* Whether a value as index.csv writes it (`cell`) is the one a user gave (`given`): the same
 * text, the same number ("0.10" is 0.1, "0.00001" is 1e-05), or a string's text (index.csv
 * keeps its JSON escapes: q\"uote is q"uote). --where and --baseline take values so. */
bool app_select_same_value(const char *cell, const char *given);

/* The index column of run row r's directory, "SWEEP_DIR/DIR", into buf[size]. */
void app_select_run_dir(const app_select *s, const char *sweep_dir, size_t r, char *buf,
                        size_t size);

/* The distinct seeds of the runs shown, as ranges ("11-15", "11-13,15"), into buf[size]; and
 * whether every group shows the same set (*same). Returns the number of distinct seeds. */
size_t app_select_seeds(const app_select *s, char *buf, size_t size, bool *same);

#endif
