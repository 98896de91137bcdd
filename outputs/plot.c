/* Figures of finished runs (see outputs/plot.h): the run directories checked and summarised
 * (metrics.csv, workers.csv, labels from summary.json), gnuplot found on PATH, each figure's
 * input (assignments, then the embedded script) built, and the figure committed. The
 * gnuplot child process itself is run by outputs/plot_gnuplot.c, the check that a figure is
 * whole and its rename by outputs/plot_file.c. */
#include "outputs/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outputs/csv.h"
#include "outputs/output.h"
#include "outputs/plot_gnuplot.h"
#include "outputs/rundir.h"
#include "sim/file.h"
#include "sim/text.h"

enum {
    PATH_MAX_BYTES = 4000, /* longest directory accepted */
    PLOT_READS = 10,       /* draws of runs replaced meanwhile before giving up */
};

/* One run directory, checked and summarised before anything is drawn. */
typedef struct plot_run {
    char *metrics;                       /* "<dir>/metrics.csv" */
    char *workers;                       /* "<dir>/workers.csv" */
    char *run_json;                      /* "<dir>/run.json" */
    char *summary;                       /* "<dir>/summary.json" */
    char label[SIM_PLOT_LABEL_MAX + 12]; /* unique; room for a "-N" suffix */
    bool has_acc;                        /* some test_accuracy or test_loss is finite */
    bool has_down;                       /* some worker has down_s > 0 */
    size_t n_workers;                    /* data rows of workers.csv */
    bool copied[2];                      /* metrics, workers: a copy without its byte-order mark */
    double max_total_s;                  /* longest compute + comm + wait + down, seconds */
} plot_run;

/* What a figure's script is told besides ins, titles and out. */
enum plot_hints {
    HINTS_NONE,    /* throughput.gp */
    HINTS_ACC,     /* convergence.gp: has_acc, a 0/1 word per run */
    HINTS_WORKERS, /* breakdown.gp: downs, workers (counts), ymax */
};

/* The three figures: script, file name, input file and hints. */
typedef struct plot_figure {
    const char *script;
    const char *png; /* the file name without its extension */
    bool workers;    /* reads workers.csv rather than metrics.csv */
    enum plot_hints hints;
} plot_figure;

static const plot_figure figures[] = {
    { .script = "convergence.gp", .png = "convergence", .hints = HINTS_ACC },
    { .script = "throughput.gp", .png = "throughput", .hints = HINTS_NONE },
    { .script = "breakdown.gp", .png = "breakdown", .workers = true, .hints = HINTS_WORKERS },
};

/* The user's copies of the scripts (sim_plot_set_style): one table for the process, set
 * once by the command line before anything is drawn; NULL entries use the embedded text. */
enum {
    MAX_SCRIPTS = 16
};
static char *style_scripts[MAX_SCRIPTS];
static char *style_paths[MAX_SCRIPTS]; /* where each copy was read, for gnuplot's errors */

const char *sim_plot_script(const char *name)
{
    for (size_t i = 0; i < sim_plot_nscripts; i++)
        if (strcmp(sim_plot_script_names[i], name) == 0)
            return i < MAX_SCRIPTS && style_scripts[i] != NULL ? style_scripts[i]
                                                               : sim_plot_scripts[i];
    return NULL;
}

/* A figure that gnuplot failed to draw with the user's copy of `script`, or that the copy
 * drew nothing into (no `set output out`: "wrote nothing", exit 1, naming no copy) or a
 * figure of another format into (its own `set terminal`: "cut short", exit 1), is bad
 * input: the message names the copy (gnuplot's own names no file: it reads the script from a
 * pipe) and the code is SIM_EINVAL (exit 2). Returns rc otherwise. */
static int blame_copy(const char *script, int rc, sim_err *err)
{
    static const char failed[] = "gnuplot failed drawing";
    for (size_t i = 0; rc != SIM_OK && i < sim_plot_nscripts && i < MAX_SCRIPTS; i++)
        if (strcmp(sim_plot_script_names[i], script) == 0 && style_paths[i] != NULL &&
            (strncmp(err->msg, failed, sizeof(failed) - 1) == 0 ||
             strstr(err->msg, ": gnuplot wrote no") != NULL)) { /* nothing, or no PNG */
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof(err->msg) - used, " (the --style copy %s)",
                     style_paths[i]);
            return err->code = SIM_EINVAL;
        }
    return rc;
}

/* The user's copy of a script at `path` into *text (malloc'd), or *text NULL when there is
 * none. Read as every text file hetsim reads (sim_output_read): one that never ends (/dev/zero,
 * which was read until memory ran out) stops at its first NUL byte, refused as bad input; a
 * FIFO (never waited on) or a directory likewise. */
static int read_script(const char *path, char **text, sim_err *err)
{
    size_t len = 0;
    struct stat st;
    *text = NULL;
    /* A FIFO was waited on forever, a directory refused as a failure to read (exit 1). */
    if (stat(path, &st) == 0 &&
        (S_ISFIFO(st.st_mode) || S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)))
        return sim_err_set(err, SIM_EINVAL, NULL, "--style: %s: not a regular file (%s)", path,
                           sim_file_kind(st.st_mode));
    errno = 0;
    *text = sim_output_read(path, &len);
    int e = errno;
    if (*text == NULL && e == ENOENT && lstat(path, &st) != 0)
        return SIM_OK; /* no copy: the built-in script */
    /* A link to nothing was drawn with the built-in script, exit 0; a terminal (EAGAIN: it
     * waits for input) and a place too long were failures to read, exit 1. */
    if (*text == NULL && e != ENOMEM && e != EIO)
        return sim_err_set(err, SIM_EINVAL, NULL, "--style: %s: %s", path,
                           e == ENOENT   ? "a symbolic link to nothing (remove it to draw with "
                                           "the built-in script)"
                           : e == EAGAIN ? "a device waiting for input, no script"
                                         : sim_file_strerror(e));
    if (*text == NULL)
        return sim_err_set(err, errno == ENOMEM ? SIM_ENOMEM : SIM_EIO, NULL, "cannot read %s: %s",
                           path, strerror(errno));
    size_t bom = sim_text_bom(*text, len); /* may open it, as any text file (sim/text.h) */
    bool nul = strlen(*text) != len, wide = nul && sim_text_wide(*text, len);
    if (!nul && len > bom) {
        memmove(*text, *text + bom, len - bom + 1);
        return SIM_OK;
    }
    free(*text);
    *text = NULL;
    /* An empty copy (or /dev/null) was drawn with as if absent: "no embedded script", exit 1. */
    return sim_err_set(err, SIM_EINVAL, NULL, "--style: %s: %s", path,
                       wide  ? SIM_TEXT_WIDE_TEXT
                       : nul ? "a NUL byte (a gnuplot script is text)"
                             : "empty (a copy is a gnuplot script that draws its figure)");
}

int sim_plot_set_style(const char *dir, size_t *found, sim_err *err)
{
    struct stat st;
    *found = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return sim_err_set(err, SIM_EINVAL, NULL, "--style %s: not a directory", dir);
    for (size_t i = 0; i < sim_plot_nscripts && i < MAX_SCRIPTS; i++) {
        char *path = sim_output_join(dir, sim_plot_script_names[i], "");
        if (path == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        char *text = NULL;
        int rc = read_script(path, &text, err);
        if (rc != SIM_OK || text == NULL) {
            free(path);
            if (rc != SIM_OK)
                return rc;
            continue; /* this figure keeps the embedded script */
        }
        free(style_paths[i]);
        style_paths[i] = path;
        free(style_scripts[i]);
        style_scripts[i] = text;
        (*found)++;
    }
    if (*found == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "--style %s holds none of hetsim's plot scripts (convergence.gp, "
                           "throughput.gp, breakdown.gp, bands.gp, bars.gp, check.gp, shares.gp)",
                           dir);
    return SIM_OK;
}

/* A growing string; `oom` sticks once an allocation fails. */
typedef struct strbuf {
    char *s;
    size_t len, cap;
    bool oom;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(strbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    size_t need = b->len + (size_t)n + 1;
    if (need > b->cap) {
        size_t cap = b->cap != 0 ? b->cap : 256;
        while (cap < need)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->oom = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static bool is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Characters a path may hold: it goes into a single-quoted gnuplot string and a
 * space-separated word list, so no blanks, quotes, backslashes or control characters. */
static bool path_char(unsigned char c)
{
    return is_alnum(c) || c >= 0x80 || (c != 0 && strchr("/._-+,:=~", c) != NULL);
}

static int check_path(const char *what, const char *path, sim_err *err)
{
    if (path == NULL || path[0] == '\0')
        return sim_err_set(err, SIM_EINVAL, NULL, "%s is empty", what);
    if (strlen(path) > PATH_MAX_BYTES)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s is longer than %d bytes", what,
                           PATH_MAX_BYTES);
    for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++) {
        if (path_char(*p))
            continue;
        char shown[16], quoted[128];
        if (*p < 0x20 || *p == 0x7f)
            snprintf(shown, sizeof(shown), "byte 0x%02x", *p);
        else
            snprintf(shown, sizeof(shown), "'%c'", *p);
        /* The path as given, cut between whole UTF-8 characters; sim_err_set writes its
         * control bytes escaped, so the message stays a line. */
        snprintf(quoted, sizeof(quoted), "%s", path);
        sim_text_utf8_trim(quoted);
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s \"%s\" contains %s, which cannot be passed to gnuplot; use "
                           "only letters, digits and / . _ - + , : = ~",
                           what, quoted, shown);
    }
    return SIM_OK;
}

/* Reads dir's metrics.csv or workers.csv (`path`) with the strict reader of results files
 * under `rules`, finds the `n` columns `names` (into col[]) and requires a row. A missing
 * file is an incomplete run directory, its fix said first (a long path may fill the rest). */
static int read_results(const char *path, const sim_csv_rules *rules, const char *const *names,
                        size_t n, size_t *col, sim_csv *t, sim_err *err)
{
    int rc = sim_csv_read(t, path, rules, err);
    if (rc == SIM_EIO && t->open_errno == ENOENT)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "an incomplete run directory (files removed, or copied in part): run "
                           "it again: no file %s",
                           path);
    if (rc == SIM_EIO)
        err->code = rc = SIM_EINVAL;
    if (rc == SIM_OK)
        rc = sim_csv_require(t, names, n, col, err);
    if (rc == SIM_OK && t->nrows == 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         rules == &sim_csv_metrics
                             ? "%s has a header but no rows (a run writes one at time 0)"
                             : "%s has a header but no worker rows",
                         path);
    return rc;
}

/* Checks metrics.csv and notes whether it holds any accuracy or loss value (the check refuses
 * a row with one alone: gnuplot failed on a loss axis with no point, exit 1). */
static int scan_metrics(plot_run *run, sim_err *err)
{
    static const char *const names[] = { "time_s", "test_loss", "test_accuracy", "throughput_sps" };
    size_t col[4];
    sim_csv t;
    int rc = read_results(run->metrics, &sim_csv_metrics, names, 4, col, &t, err);
    if (rc == SIM_OK)
        rc = sim_csv_check_metrics(&t, col[0], run->summary, run->run_json, err);
    for (size_t r = 0; r < t.nrows && rc == SIM_OK; r++)
        run->has_acc = run->has_acc || !isnan(sim_csv_number(&t, r, col[1]));
    sim_csv_fini(&t);
    return rc;
}

/* Checks workers.csv and notes the worker count, down time and the longest bar. */
static int scan_workers(plot_run *run, sim_err *err)
{
    static const char *const names[] = { "compute_s", "comm_s", "wait_s", "down_s" };
    size_t col[4];
    sim_csv t;
    int rc = read_results(run->workers, &sim_csv_workers, names, 4, col, &t, err);
    if (rc == SIM_OK)
        rc = sim_csv_check_workers(&t, run->run_json, err);
    for (size_t r = 0; r < t.nrows && rc == SIM_OK; r++) {
        double total_s = 0.0;
        for (size_t k = 0; k < 4; k++) {
            double x = sim_csv_number(&t, r, col[k]);
            total_s += isnan(x) ? 0.0 : x;
        }
        if (sim_csv_number(&t, r, col[3]) > 0.0)
            run->has_down = true;
        if (total_s > run->max_total_s)
            run->max_total_s = total_s;
        run->n_workers++;
    }
    sim_csv_fini(&t);
    return rc;
}

/* Label characters: as for paths, and a few more that are harmless inside a quoted string
 * and a word list. Anything else (blanks, quotes, backslashes, control bytes) becomes '_'. */
static bool label_char(unsigned char c)
{
    return is_alnum(c) || (c != 0 && strchr("._-+,:=~/()[]#", c) != NULL);
}

/* Copies `raw` into `out` (at most SIM_PLOT_LABEL_MAX bytes, whole characters only),
 * replacing what gnuplot cannot take, invalid UTF-8, U+FFFE and U+FFFF (no XML), by '_'; an
 * empty result becomes "run". */
static void set_label(char *out, const char *raw)
{
    const unsigned char *p = (const unsigned char *)raw;
    size_t n = 0;
    while (*p != '\0') {
        size_t k = *p >= 0x80 ? sim_text_utf8_len((const char *)p) : 1;
        /* an invalid byte, or U+FFFE or U+FFFF (no XML: an SVG figure), becomes one '_' */
        size_t w = k == 0 || sim_text_xml_nonchar((const char *)p, k) ? 1 : k;
        if (n + w > SIM_PLOT_LABEL_MAX)
            break;
        if (w >= 2)
            memcpy(out + n, p, k);
        else
            out[n] = k == 1 && label_char(*p) ? (char)*p : '_';
        n += w;
        p += k == 0 ? 1 : k;
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, SIM_PLOT_LABEL_MAX + 1, "run");
}

/* Decodes the JSON string that starts after the opening quote at `p` into `out` (size
 * `size`), turning escapes other than \/ into '_' (they are all unsafe or control
 * characters). False if the string does not end on this line. */
static bool json_string(const char *p, char *out, size_t size)
{
    size_t n = 0;
    for (; *p != '\0' && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            p++;
            if (*p == '\0')
                return false;
            c = *p == '/' ? '/' : '_';
            if (*p == 'u')
                for (int i = 0; i < 4 && p[1] != '\0'; i++)
                    p++;
        }
        if (n + 1 < size)
            out[n++] = c;
    }
    out[n] = '\0';
    return *p == '"';
}

/* The run's label: the "name" line of summary.json, else the directory's base name. */
static void read_label(const char *dir, char *label)
{
    char raw[4 * SIM_PLOT_LABEL_MAX + 1] = "";
    char *path = sim_output_join(dir, "summary.json", "");
    struct stat st; /* a FIFO's open waited for a writer forever, one swapped in after a stat too */
    FILE *f = path != NULL ? sim_file_open_regular(path, &st) : NULL;
    if (f != NULL) {
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) >= 0) {
            const char *p = line + strspn(line, " \t");
            if (strncmp(p, "\"name\"", 6) != 0)
                continue;
            p += 6;
            p += strspn(p, " \t");
            if (*p == ':') {
                p++;
                p += strspn(p, " \t");
                if (*p != '"' || !json_string(p + 1, raw, sizeof(raw)))
                    raw[0] = '\0';
            }
            break;
        }
        free(line);
        fclose(f);
    }
    free(path);
    if (raw[0] == '\0') {
        size_t end = strlen(dir);
        while (end > 1 && dir[end - 1] == '/')
            end--;
        size_t start = end;
        while (start > 0 && dir[start - 1] != '/')
            start--;
        size_t len = end - start < sizeof(raw) - 1 ? end - start : sizeof(raw) - 1;
        memcpy(raw, dir + start, len);
        raw[len] = '\0';
    }
    set_label(label, raw);
}

/* Gives runs[i] a label no earlier run has, adding "-2", "-3", ... */
static void make_unique(plot_run *runs, size_t i)
{
    char base[sizeof(runs[i].label)];
    memcpy(base, runs[i].label, sizeof(base));
    for (unsigned k = 2;; k++) {
        bool clash = false;
        for (size_t j = 0; j < i && !clash; j++)
            clash = strcmp(runs[j].label, runs[i].label) == 0;
        if (!clash)
            return;
        snprintf(runs[i].label, sizeof(runs[i].label), "%.*s-%u", SIM_PLOT_LABEL_MAX, base, k);
    }
}

/* Finds an executable `prog` in $PATH (an empty entry is the current directory). */
static int find_on_path(const char *prog, char **out, sim_err *err)
{
    const char *path = getenv("PATH");
    *out = NULL;
    while (path != NULL) {
        const char *colon = strchr(path, ':');
        size_t len = colon != NULL ? (size_t)(colon - path) : strlen(path);
        strbuf b = { 0 };
        sb_printf(&b, "%.*s/%s", (int)(len != 0 ? len : 1), len != 0 ? path : ".", prog);
        if (b.oom) {
            free(b.s);
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        }
        struct stat st;
        if (stat(b.s, &st) == 0 && S_ISREG(st.st_mode) && access(b.s, X_OK) == 0) {
            *out = b.s;
            return SIM_OK;
        }
        free(b.s);
        path = colon != NULL ? colon + 1 : NULL;
    }
    return sim_err_set(err, SIM_EIO, NULL,
                       "gnuplot not found on PATH (install the gnuplot-nox package)");
}

int sim_plot_available(sim_err *err)
{
    char *gnuplot;
    int rc = find_on_path("gnuplot", &gnuplot, err);
    free(gnuplot);
    return rc;
}

/* gnuplot's input for one figure: a line of assignments (input paths, labels, the
 * temporary output, the figure's hints: per-run accuracy flags; down flags, worker counts,
 * longest bar), then the script. */
static char *figure_input(const plot_figure *fig, const plot_run *runs, size_t n, const char *tmp,
                          const char *ext, const char *script)
{
    strbuf b = { 0 };
    sb_printf(&b, "fmt='%s'; ins='", ext);
    for (size_t i = 0; i < n; i++)
        sb_printf(&b, "%s%s", i > 0 ? " " : "", fig->workers ? runs[i].workers : runs[i].metrics);
    sb_printf(&b, "'; titles='");
    for (size_t i = 0; i < n; i++)
        sb_printf(&b, "%s%s", i > 0 ? " " : "", runs[i].label);
    sb_printf(&b, "'; out='%s'", tmp);
    if (fig->hints == HINTS_ACC) {
        sb_printf(&b, "; has_acc='");
        for (size_t i = 0; i < n; i++)
            sb_printf(&b, "%s%d", i > 0 ? " " : "", runs[i].has_acc ? 1 : 0);
        sb_printf(&b, "'");
    } else if (fig->hints == HINTS_WORKERS) {
        double ymax = 0.0;
        sb_printf(&b, "; downs='");
        for (size_t i = 0; i < n; i++) {
            sb_printf(&b, "%s%d", i > 0 ? " " : "", runs[i].has_down ? 1 : 0);
            if (runs[i].max_total_s > ymax)
                ymax = runs[i].max_total_s;
        }
        sb_printf(&b, "'; workers='");
        for (size_t i = 0; i < n; i++)
            sb_printf(&b, "%s%zu", i > 0 ? " " : "", runs[i].n_workers);
        sb_printf(&b, "'; ymax=%.17g", ymax);
    }
    sb_printf(&b, "\n%s", script);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* Runs gnuplot on `input`, which draws into SIM_PLOT_GNUPLOT_OUT: the temporary `tmp`, made
 * afresh and opened here (a name gnuplot opened itself could be a link put there meanwhile),
 * and gives the figure its name `final` once whole (sim_plot_commit) if `tmp` is still that
 * file; `tmp` is removed on any failure. */
static int run_and_commit(const char *gnuplot, const char *input, const char *tmp,
                          const char *final, const char *png, sim_err *err)
{
    int fd = sim_output_tmp_open(tmp, err);
    if (fd < 0)
        return SIM_EIO;
    int rc = sim_plot_gnuplot_run(gnuplot, input, fd, png, err);
    struct stat a, b;
    if (rc == SIM_OK &&
        (fstat(fd, &a) != 0 || lstat(tmp, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino))
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s was replaced while drawn", final,
                         tmp);
    close(fd);
    if (rc == SIM_OK)
        return sim_plot_commit(tmp, final, err);
    remove(tmp);
    return rc;
}

/* Draws one figure into out_dir/<png>.tmp and commits it as out_dir/<png>. */
static int draw(const char *gnuplot, const plot_figure *fig, const plot_run *runs, size_t n,
                const char *out_dir, const char *ext, sim_err *err)
{
    const char *script = sim_plot_script(fig->script);
    if (script == NULL || script[0] == '\0')
        return sim_err_set(err, SIM_EIO, NULL, "no embedded script %s", fig->script);
    int rc = SIM_OK;
    strbuf tmp = { 0 }, name = { 0 };
    sb_printf(&name, "%s.%s", fig->png, ext);
    sb_printf(&tmp, "%s/%s.tmp", out_dir, name.s != NULL ? name.s : "");
    char *final = name.oom ? NULL : sim_output_join(out_dir, name.s, "");
    char *input = tmp.oom ? NULL : figure_input(fig, runs, n, SIM_PLOT_GNUPLOT_OUT, ext, script);
    if (input == NULL || final == NULL) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        goto done;
    }
    rc = blame_copy(fig->script, run_and_commit(gnuplot, input, tmp.s, final, name.s, err), err);
done:
    free(name.s);
    free(input);
    free(final);
    free(tmp.s);
    return rc;
}

/* gnuplot reads a byte-order mark as part of the first column's name: a results file that
 * opens with one (sim/text.h) is drawn from a temporary copy without it, at *path (*copied;
 * sim_plot_runs removes it). */
static int drop_bom(char **path, bool *copied, sim_err *err)
{
    char head[3];
    FILE *in = fopen(*path, "rb");
    size_t got = in != NULL ? fread(head, 1, 3, in) : 0;
    if (in == NULL || sim_text_bom(head, got) == 0) {
        if (in != NULL)
            fclose(in);
        return SIM_OK;
    }
    char tmp[] = "/tmp/hetsim-plot-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
    char buf[65536];
    bool ok = out != NULL;
    for (size_t n; ok && (n = fread(buf, 1, sizeof(buf), in)) > 0;)
        ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    fclose(in);
    if (out != NULL && fclose(out) != 0)
        ok = false;
    else if (out == NULL && fd >= 0)
        close(fd);
    char *copy = ok ? malloc(sizeof(tmp)) : NULL;
    if (copy == NULL) {
        if (fd >= 0)
            unlink(tmp);
        return sim_err_set(err, SIM_EIO, NULL, "cannot copy %s without its byte-order mark", *path);
    }
    memcpy(copy, tmp, sizeof(tmp));
    free(*path);
    *path = copy;
    *copied = true;
    return SIM_OK;
}

/* Checks the run directories and reads what the figures need from them. */
static int scan_runs(const char *const *dirs, const char *const *labels, plot_run *runs, size_t n,
                     sim_err *err)
{
    for (size_t i = 0; i < n; i++) {
        runs[i].metrics = sim_output_join(dirs[i], "metrics.csv", "");
        runs[i].workers = sim_output_join(dirs[i], "workers.csv", "");
        runs[i].run_json = sim_output_join(dirs[i], "run.json", "");
        runs[i].summary = sim_output_join(dirs[i], "summary.json", "");
        if (runs[i].metrics == NULL || runs[i].workers == NULL || runs[i].run_json == NULL ||
            runs[i].summary == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        int rc = scan_metrics(&runs[i], err);
        if (rc == SIM_OK)
            rc = scan_workers(&runs[i], err);
        if (rc == SIM_OK)
            rc = drop_bom(&runs[i].metrics, &runs[i].copied[0], err);
        if (rc == SIM_OK)
            rc = drop_bom(&runs[i].workers, &runs[i].copied[1], err);
        if (rc != SIM_OK)
            return rc;
        if (labels != NULL && labels[i] != NULL)
            set_label(runs[i].label, labels[i]);
        else
            read_label(dirs[i], runs[i].label);
        make_unique(runs, i);
    }
    return SIM_OK;
}

/* The files plot_once writes: each figure in format `ctx` ("png"). Their temporaries are
 * made afresh whatever holds their names (sim_output_tmp_open). */
static bool plot_file(const char *name, const void *ctx)
{
    for (size_t k = 0; k < sizeof(figures) / sizeof(figures[0]); k++) {
        char file[64];
        snprintf(file, sizeof(file), "%s.%s", figures[k].png, (const char *)ctx);
        if (strcmp(name, file) == 0)
            return true;
    }
    return false;
}

/* Reads the n runs (scan_runs) and draws every figure from them into out_dir, once. */
static int plot_once(const char *const *dirs, const char *const *labels, size_t n,
                     const char *out_dir, const char *ext, const char *gnuplot, sim_err *err)
{
    plot_run *runs = calloc(n, sizeof(*runs));
    if (runs == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    int rc = scan_runs(dirs, labels, runs, n, err);
    if (rc == SIM_OK)
        rc = sim_plot_mkdir(out_dir, err);
    for (size_t k = 0; k < sizeof(figures) / sizeof(figures[0]) && rc == SIM_OK; k++)
        rc = draw(gnuplot, &figures[k], runs, n, out_dir, ext, err);
    for (size_t i = 0; i < n; i++) {
        if (runs[i].copied[0])
            unlink(runs[i].metrics);
        if (runs[i].copied[1])
            unlink(runs[i].workers);
        free(runs[i].metrics);
        free(runs[i].workers);
        free(runs[i].run_json);
        free(runs[i].summary);
    }
    free(runs);
    return rc;
}

/* The first of the n run directories that is no longer the one open at fds[] (a run replaces
 * its directory whole, so another one at the path means files of two runs may have been
 * read; the open descriptor keeps the old one's inode from being reused for the new), or n;
 * with `record`, fds[] is set to the directories there now (-1 for one that cannot be
 * opened) and n returned. */
static size_t replaced_run(const char *const *dirs, size_t n, int *fds, bool record)
{
    for (size_t i = 0; i < n; i++) {
        struct stat a, b;
        if (record) {
            if (fds[i] >= 0)
                close(fds[i]);
            fds[i] = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        } else if (fds[i] < 0 || fstat(fds[i], &a) != 0 || stat(dirs[i], &b) != 0 ||
                   a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
            return i;
        }
    }
    return n;
}

int sim_plot_runs(const char *const *dirs, const char *const *labels, size_t n, const char *out_dir,
                  sim_plot_format fmt, sim_err *err)
{
    const char *ext = fmt == SIM_PLOT_PDF ? "pdf" : fmt == SIM_PLOT_SVG ? "svg" : "png";
    if (dirs == NULL || n == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "no run directories to plot");
    if (n > SIM_PLOT_MAX_RUNS)
        return sim_err_set(err, SIM_EINVAL, NULL, "at most %d runs fit in one figure, got %zu",
                           SIM_PLOT_MAX_RUNS, n);
    int rc = check_path("output directory", out_dir, err);
    for (size_t i = 0; i < n && rc == SIM_OK; i++)
        rc = check_path("run directory", dirs[i], err);
    int *fds = rc == SIM_OK ? malloc(n * sizeof(*fds)) : NULL;
    if (rc == SIM_OK && fds == NULL)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; fds != NULL && i < n; i++)
        fds[i] = -1;
    char *gnuplot = NULL;
    sim_rundir_lock *lock = NULL;
    if (rc == SIM_OK)
        rc = find_on_path("gnuplot", &gnuplot, err);
    /* The lock of a run drawn into itself is held before it is read: no run replaces it. */
    if (rc == SIM_OK)
        rc = sim_plot_place(out_dir, n == 1 ? dirs[0] : NULL, plot_file, ext, &lock, err);
    /* Another run's directory may be replaced (`hetsim run -o` it) while it is read, and
     * gnuplot reads its files when it draws: drawn again until every run stayed the same
     * (a figure mixed two runs: one's name and axes, the other's bars). */
    size_t moved = n;
    for (int t = 0; rc == SIM_OK && t < PLOT_READS; t++) {
        replaced_run(dirs, n, fds, true);
        rc = plot_once(dirs, labels, n, out_dir, ext, gnuplot, err);
        if (rc == SIM_OK && (moved = replaced_run(dirs, n, fds, false)) == n)
            break;
    }
    if (rc == SIM_OK && moved < n)
        rc = sim_err_set(err, SIM_EIO, NULL,
                         "%s was replaced by another hetsim each of the %d times it was drawn: "
                         "plot it again",
                         dirs[moved], PLOT_READS);
    for (size_t i = 0; fds != NULL && i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    sim_rundir_unlock(lock);
    free(gnuplot);
    free(fds);
    return rc;
}

int sim_plot_path_ok(const char *what, const char *path, sim_err *err)
{
    return check_path(what, path, err);
}

int sim_plot_draw(const char *script, const char *vars, const char *out_dir, const char *png,
                  sim_err *err)
{
    const char *text = sim_plot_script(script);
    if (text == NULL || text[0] == '\0')
        return sim_err_set(err, SIM_EIO, NULL, "no embedded script %s", script);
    if (sim_plot_format_of(png) == SIM_PLOT_UNKNOWN)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: no known figure format (the name must end in .png, .pdf or .svg)",
                           png);
    int rc = check_path("output directory", out_dir, err);
    char *gnuplot = NULL;
    if (rc == SIM_OK)
        rc = find_on_path("gnuplot", &gnuplot, err);
    if (rc == SIM_OK)
        rc = sim_output_mkdirs(out_dir, err);
    if (rc != SIM_OK) {
        free(gnuplot);
        return rc;
    }
    strbuf tmp = { 0 }, input = { 0 };
    sb_printf(&tmp, "%s/%s.tmp", out_dir, png);
    char *final = sim_output_join(out_dir, png, "");
    sim_plot_format fmt = sim_plot_format_of(png);
    sb_printf(&input, "%s; out='%s'; fmt='%s'\n%s", vars, SIM_PLOT_GNUPLOT_OUT,
              fmt == SIM_PLOT_PDF   ? "pdf"
              : fmt == SIM_PLOT_SVG ? "svg"
                                    : "png",
              text);
    if (tmp.oom || input.oom || final == NULL) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        goto done;
    }
    rc = blame_copy(script, run_and_commit(gnuplot, input.s, tmp.s, final, png, err), err);
done:
    free(input.s);
    free(tmp.s);
    free(final);
    free(gnuplot);
    return rc;
}
