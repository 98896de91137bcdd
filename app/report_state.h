/* `hetsim report`, internal (see app/report.h): the figures of each row, shared by
 * app/report.c (reading, summaries, speed-ups), app/report_print.c (Markdown, CSV, the tuning
 * grid and the caption) and app/report_tex.c (LaTeX). Calls run one way: report.c ->
 * report_tex.c -> report_print.c, and report.c -> report_print.c. */
#ifndef APP_REPORT_STATE_H
#define APP_REPORT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "app/report.h"
#include "app/select.h"

/* The figures of one run, averaged over a row's runs. */
enum rp_measure {
    M_FINAL = 0, /* final test accuracy */
    M_BEST,      /* best test accuracy */
    M_TP,        /* mean throughput, samples/s */
    M_BYTES,     /* bytes sent per sample */
    M_WAIT,      /* share of the workers' time waiting */
    M_COMM,      /* share of the workers' time communicating */
    M_COMM_ALL,  /* the same with the communication that overlapped computation */
    NMEASURES
};

/* A row: a group of app_select's. */
typedef struct rp_row {
    size_t n, reached;
    size_t ended_below; /* reached the target (rule first) and ended below it */
    size_t bytes_runs;  /* the runs bytes sent/sample covers: those that counted samples */
    double ttt_mean, ttt_half, censored_s;
    double mean[NMEASURES], half[NMEASURES];
    double speedup, speedup_lo, speedup_hi; /* NaN without a baseline (or no figure) */
    bool speedup_censored;                  /* a side had runs that did not reach the target */
    bool baseline;                          /* the row is its own baseline */
} rp_row;

typedef struct rp_report {
    const app_report_options *o;
    app_select sel;
    double (*run_m)[NMEASURES]; /* (sel.ix.csv.nrows) each run's measures */
    rp_row *rows;               /* (sel.ngroups) */
    bool overlap;               /* some run's workers.csv has comm_overlap_s */
    size_t bytes_left;          /* runs left out of bytes sent/sample: no samples counted */
    bool zero_den;              /* a speed-up over a mean of 0: none ("-") */
    bool past_double;           /* a speed-up past a double (over 1e-300): none ("-") */
    int base_key;               /* the --baseline key's position among the --by keys, or -1 */
    const char *base_value;     /* its value */
    double every_lo, every_hi;  /* the runs' eval.every_s, NaN if unknown */
} rp_report;

/* The printers: app/report_print.c (Markdown, CSV, the grid, the caption) and
 * app/report_tex.c (LaTeX, which calls rp_caption). */
void rp_print_md(const rp_report *rp, FILE *f);
void rp_print_csv(const rp_report *rp, FILE *f);
void rp_print_grid(const rp_report *rp, FILE *f);
void rp_print_tex(const rp_report *rp, FILE *f);

/* SIM_OK, or an error if two rows of the LaTeX table would show the same display names (the
 * groups' values mapped by --label and --names). */
int rp_check_tex_names(const rp_report *rp, sim_err *err);

/* What the numbers are, one paragraph ending in ".\n": the seeds, the interval, the tuning,
 * the time-to-target definition and censoring, the evaluation interval, the speed-up's
 * method. */
void rp_caption(const rp_report *rp, FILE *f);

/* A speed-up as text: "1.42 [1.21, 1.70]", "-" without one. */
void rp_ratio_text(char *buf, size_t size, const rp_row *r);

/* `v` with `d` decimals, or in scientific notation with four significant digits from 1e15 on
 * (where a fixed-point text would spell out digits a double does not hold). */
void rp_number(char *buf, size_t size, int d, double v);

#endif
