/* `hetsim plot SWEEP_DIR --by` for a paper, through the built binary ($HETSIM): figures at
 * column and page size whose text is 8 points at that size (read from the PDF's content
 * streams), no title unless asked, lines told apart by dash pattern and marker as well as
 * colour, display names with the runs of each group in the legend (built in, --label,
 * --names), --best-over on a figure, and the mark where runs drop out of a mean curve. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>
#include <zlib.h>

#include "harness.h"

/* A run: metrics.csv from "t:acc ..." (throughput 3000 + 100 t), workers.csv, run.json. */
static void run_dir(const char *sweep, const char *name, const char *curve)
{
    char dir[1024];
    harness_fake_run(dir, sizeof(dir), sweep, name, curve, true);
    harness_write(dir, "workers.csv", harness_fake_workers);
    harness_write(dir, "run.json",
                  "{ \"scenario\": { \"stop\": { \"time_s\": 4, \"target_accuracy\": 0.8 } } }\n");
}

/* Three protocols (allreduce, adpsgd, hpsgd) at lr 0.05 and 0.1, seeds 1-3; allreduce's seed 3
 * at lr 0.05 stops at its target at 2 s, the others run to 4 s. */
static char *paper_sweep(void)
{
    char *dir = harness_tmpdir("figures"), name[64], *index = calloc(1, 8192);
    static const char *const protos[] = { "allreduce", "adpsgd", "hpsgd" };
    static const char *const lrs[] = { "0.05", "0.1" };
    size_t len = (size_t)snprintf(index, 8192,
                                  "point,dir,protocol.name,workload.lr,seed,stop_reason,"
                                  "sim_time_s,final_accuracy,best_accuracy,time_to_target_s,"
                                  "mean_throughput_sps,wall_s\n");
    int point = 0;
    for (int p = 0; p < 3; p++)
        for (int l = 0; l < 2; l++)
            for (int s = 1; s <= 3; s++) {
                bool stops = p == 0 && l == 0 && s == 3;
                snprintf(name, sizeof(name), "%s-%s-%d", protos[p], lrs[l], s);
                run_dir(dir, name,
                        stops ? "0:0.1 1:0.6 2:0.81" : "0:0.1 1:0.5 2:0.7 3:0.82 4:0.83");
                len += (size_t)snprintf(index + len, 8192 - len,
                                        "%d,%s,%s,%s,%d,%s,4,0.83,0.83,3,3200,0\n", point++, name,
                                        protos[p], lrs[l], s, stops ? "target_accuracy" : "time");
            }
    harness_fake_index(dir, index);
    free(index);
    return dir;
}

static harness_result plot(const char *dir, const char *out, const char *const *more)
{
    const char *args[40] = { "plot", dir, "-o", out };
    size_t n = 4;
    for (; more[n - 4] != NULL; n++)
        args[n] = more[n - 4];
    args[n] = NULL;
    return harness_hetsim(args);
}

/* The first `what` in buf[from, len), or len: a PDF holds NUL bytes, so no strstr. */
static size_t find(const char *buf, size_t len, size_t from, const char *what)
{
    size_t n = strlen(what);
    for (size_t k = from; k + n <= len; k++)
        if (memcmp(buf + k, what, n) == 0)
            return k;
    return len;
}

/* Every text size in points of the PDF `path`: the scale of each text matrix (a b c d e f
 * Tm, in points: cairo draws at one unit a point) in its content streams, inflated. *n the
 * count; returns the smallest, *largest the largest. */
static double pdf_text_sizes(const char *path, size_t *n, double *largest)
{
    size_t len = 0;
    char *pdf = harness_read(path, &len);
    double smallest = INFINITY;
    *n = 0;
    *largest = 0;
    for (size_t at = find(pdf, len, 0, "stream"); at < len; at = find(pdf, len, at, "stream")) {
        size_t from = at + (pdf[at + 6] == '\r' ? 8 : 7), end = find(pdf, len, from, "endstream");
        if (end == len)
            break;
        uLongf cap = 1 << 22;
        unsigned char *out = malloc(cap + 1);
        if (uncompress(out, &cap, (const Bytef *)pdf + from, (uLong)(end - from)) == Z_OK) {
            out[cap] = '\0';
            for (char *t = strstr((char *)out, " Tm"); t != NULL; t = strstr(t + 3, " Tm")) {
                char *b = t;
                for (int k = 0; k < 6 && b > (char *)out; b--)
                    k += b[-1] == ' ' || b[-1] == '\n';
                double m[6];
                if (sscanf(b, "%lf %lf %lf %lf %lf %lf", &m[0], &m[1], &m[2], &m[3], &m[4],
                           &m[5]) != 6)
                    continue;
                double size = sqrt(m[0] * m[0] + m[1] * m[1]);
                smallest = fmin(smallest, size);
                *largest = fmax(*largest, size);
                (*n)++;
            }
        }
        free(out);
        at = end + 9;
    }
    free(pdf);
    return smallest;
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p != NULL; p = strstr(p + 1, what))
        n++;
    return n;
}

START_TEST(column_figures_have_text_of_eight_points_at_their_final_size_and_no_title)
{
    char *dir = paper_sweep(), out[1100], path[1200];
    snprintf(out, sizeof(out), "%s/paper", dir);
    harness_result r = plot(dir, out,
                            (const char *[]){ "--by", "protocol.name", "--best-over", "workload.lr",
                                              "--size", "column", "--format", "pdf", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    static const char *const figs[] = { "by-protocol.name.pdf", "ttt-by-protocol.name.pdf",
                                        "breakdown-by-protocol.name.pdf" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", out, figs[i]);
        size_t len = 0;
        char *pdf = harness_read(path, &len);
        /* 3.5 inches wide: 252 points */
        ck_assert_msg(find(pdf, len, 0, "/MediaBox [ 0 0 252 ") < len, "%s: not 3.5 in wide",
                      figs[i]);
        free(pdf);
        size_t n = 0;
        double largest = 0, smallest = pdf_text_sizes(path, &n, &largest);
        ck_assert_msg(n > 10, "%s: %zu texts", figs[i], n);
        /* 1e-3: the PDF's printed digits; no title, so nothing but the 8-point text */
        ck_assert_msg(fabs(smallest - 8) < 1e-3 && fabs(largest - 8) < 1e-3,
                      "%s: text from %g to %g points", figs[i], smallest, largest);
    }
    /* The same figure as SVG: its size in points, no title, a title on request at 9 points. */
    r = plot(dir, out,
             (const char *[]){ "--by", "protocol.name", "--best-over", "workload.lr", "--size",
                               "column", "--format", "svg", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    char *svg = harness_slurp(out, "by-protocol.name.svg");
    ck_assert_ptr_nonnull(strstr(svg, "width=\"252\""));
    ck_assert_ptr_null(strstr(svg, "mean and 95% interval"));
    ck_assert_uint_eq(count(svg, "font-size=\"8.00\""), count(svg, "<text"));
    /* The throughput panel's axis label fits beside its tick labels (thousands read 3k). */
    ck_assert_ptr_nonnull(strstr(svg, ">samples / s<"));
    ck_assert_ptr_nonnull(strstr(svg, ">4k<"));
    free(svg);
    r = plot(dir, out,
             (const char *[]){ "--by", "protocol.name", "--best-over", "workload.lr", "--size",
                               "page", "--format", "svg", "--title", "Protocols, tuned", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    svg = harness_slurp(out, "by-protocol.name.svg");
    ck_assert_ptr_nonnull(strstr(svg, "width=\"504\""));
    ck_assert_ptr_nonnull(strstr(svg, ">Protocols, tuned<"));
    ck_assert_uint_eq(count(svg, "font-size=\"9.00\""), 1); /* the title */
    free(svg);
    /* A PNG at 300 pixels an inch: 3.5 x 2.5 inches. */
    r = plot(dir, out,
             (const char *[]){ "--by", "protocol.name", "--where", "workload.lr=0.1", "--size",
                               "3.5x2.5", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    unsigned char head[24];
    snprintf(path, sizeof(path), "%s/by-protocol.name.png", out);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(head, 1, sizeof(head), f), sizeof(head));
    fclose(f);
    ck_assert_uint_eq((unsigned)(head[16] << 24 | head[17] << 16 | head[18] << 8 | head[19]), 1050);
    ck_assert_uint_eq((unsigned)(head[20] << 24 | head[21] << 16 | head[22] << 8 | head[23]), 750);
    static const char *const sizes[] = { "3x", "0.5x2", "wide", "3.5x2.5x1" };
    for (size_t i = 0; i < 4; i++) {
        r = plot(dir, out, (const char *[]){ "--by", "protocol.name", "--size", sizes[i], NULL });
        ck_assert_msg(r.status == 2, "--size %s: exit %d", sizes[i], r.status);
    }
    harness_cleanup(dir);
}
END_TEST

START_TEST(lines_differ_by_dash_and_marker_and_the_legend_names_groups_with_their_runs)
{
    char *dir = paper_sweep(), out[1100], names[1100];
    snprintf(out, sizeof(out), "%s/paper", dir);
    snprintf(names, sizeof(names), "%s/names.txt", dir);
    harness_write(dir, "names.txt", "# display names\nadpsgd=AD-PSGD (ours)\n\nworkload.lr=lr\n");
    harness_result r = plot(dir, out,
                            (const char *[]){ "--by", "protocol.name", "--best-over", "workload.lr",
                                              "--size", "column", "--format", "svg", "--names",
                                              names, "--label", "hpsgd=HP-SGD", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    char *svg = harness_slurp(out, "by-protocol.name.svg");
    /* allreduce's best rate is 0.05 (a mean of 2.67 s to 0.8 against 3), the others' a tie
     * kept at the first value */
    ck_assert_msg(strstr(svg, ">All-Reduce, lr 0.05 (n=3)<") != NULL, "%s", svg);
    ck_assert_ptr_nonnull(strstr(svg, ">AD-PSGD (ours), lr 0.05 (n=3)<"));
    ck_assert_ptr_nonnull(strstr(svg, ">HP-SGD, lr 0.05 (n=3)<"));
    /* Three lines: solid and two dash patterns, three markers, whatever the colours. */
    ck_assert_uint_eq(count(svg, "stroke-dasharray=' 5,8'") > 0, 1);
    ck_assert_uint_eq(count(svg, "stroke-dasharray=' 2,4'") > 0, 1);
    size_t marks = 0;
    for (int k = 0; k < 16; k++) {
        char id[32];
        snprintf(id, sizeof(id), "href='#gpPt%d'", k);
        marks += count(svg, id) > 0;
    }
    ck_assert_msg(marks >= 3, "%zu kinds of marker", marks);
    free(svg);
    r = plot(dir, out, (const char *[]){ "--by", "protocol.name", "--label", "x", NULL });
    ck_assert_int_eq(r.status, 2);
    /* Two values given one name were two bars and two lines of the same name, exit 0. */
    char before[4096], after[4096];
    harness_tree_digest(out, before, sizeof(before));
    r = plot(dir, out,
             (const char *[]){ "--by", "protocol.name", "--best-over", "workload.lr", "--label",
                               "hpsgd=ours", "--label", "adpsgd=ours", NULL });
    ck_assert_msg(r.status == 2, "exit %d\n%s", r.status, r.err);
    ck_assert_msg(
        strstr(r.err,
               "two groups would be drawn as \"ours, learning rate 0.05\" (adpsgd and hpsgd)") !=
            NULL,
        "%s", r.err);
    harness_tree_digest(out, after, sizeof(after));
    ck_assert_str_eq(before, after);
    harness_cleanup(dir);
}
END_TEST

/* allreduce at lr 0.05: one of its three runs stopped at its target at 2 s. Its mean curve is
 * marked at 2 s, the last row before it is a mean over two runs. */
START_TEST(a_mean_curve_marks_where_runs_that_stopped_drop_out)
{
    char *dir = paper_sweep(), out[1100];
    snprintf(out, sizeof(out), "%s/paper", dir);
    harness_result r =
        plot(dir, out, (const char *[]){ "--by", "protocol.name,workload.lr", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    harness_csv c = harness_csv_read(out, "by-protocol.name,workload.lr-0.csv");
    ck_assert_uint_eq(c.nrows, 5);
    ck_assert_str_eq(harness_csv_text(&c, 2, "ends"), "1");
    ck_assert_str_eq(harness_csv_text(&c, 2, "n"), "3");
    ck_assert_str_eq(harness_csv_text(&c, 3, "n"), "2");
    /* 1e-9: %.9g of (0.7 + 0.7 + 0.81) / 3 */
    ck_assert_double_eq_tol(harness_csv_num(&c, 2, "acc_drop"), (0.7 + 0.7 + 0.81) / 3, 1e-9);
    for (size_t i = 0; i < c.nrows; i++)
        if (i != 2)
            ck_assert(isnan(harness_csv_num(&c, i, "acc_drop")));
    harness_csv_free(&c);
    c = harness_csv_read(out, "by-protocol.name,workload.lr-1.csv"); /* no run stopped */
    for (size_t i = 0; i < c.nrows; i++)
        ck_assert_str_eq(harness_csv_text(&c, i, "ends"), "0");
    harness_csv_free(&c);
    harness_cleanup(dir);
}
END_TEST

/* Writes `len` bytes of `text` (NUL bytes and all) to DIR/names.txt; returns its path. */
static const char *names_file(const char *dir, const char *text, size_t len)
{
    static char path[1100];
    snprintf(path, sizeof(path), "%s/names.txt", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

/* A names file is text: a NUL byte is refused at its line (it cut the name shown at it,
 * "adpsgd=AD\0junk" showed "AD", or hid its line's mapping, exit 0), and a UTF-8 byte-order
 * mark may open it, as any text file hetsim reads (the first line's key began with it and
 * matched nothing). */
START_TEST(a_names_file_with_a_nul_byte_or_unread_is_refused_and_one_with_a_bom_is_read)
{
    char *dir = paper_sweep();
    static const char nul_in[] = "# names\nadpsgd=AD\0junk\n";
    static const char nul_first[] = "hpsgd=H\n\0adpsgd=Z\n";
    const char *bad[] = { nul_in, nul_first };
    const size_t lens[] = { sizeof(nul_in) - 1, sizeof(nul_first) - 1 };
    const char *const lines[] = { "names.txt: line 2: a NUL byte",
                                  "names.txt: line 2: a NUL byte" };
    for (size_t i = 0; i < 2; i++) {
        const char *names = names_file(dir, bad[i], lens[i]);
        harness_result r = harness_hetsim(
            (const char *[]){ "report", dir, "--by", "protocol.name", "--where", "workload.lr=0.05",
                              "--format", "tex", "--names", names, NULL });
        ck_assert_msg(r.status == 2 && strstr(r.err, lines[i]) != NULL, "%zu: exit %d: %s", i,
                      r.status, r.err);
        ck_assert_str_eq(r.out, "");
    }
    /* A names file that is missing or a directory is bad usage as a missing scenario is. */
    const char *const unread[] = { "no-such-names.txt", "." };
    for (size_t i = 0; i < 2; i++) {
        char names[1100];
        snprintf(names, sizeof(names), "%s/%s", dir, unread[i]);
        harness_result r = harness_hetsim(
            (const char *[]){ "report", dir, "--by", "protocol.name", "--names", names, NULL });
        ck_assert_msg(r.status == 2 && strstr(r.err, "cannot read") != NULL, "%s: exit %d: %s",
                      unread[i], r.status, r.err);
    }
    static const char bom[] = "\xef\xbb\xbf"
                              "adpsgd=AD-PSGD (ours)\n";
    const char *names = names_file(dir, bom, sizeof(bom) - 1);
    harness_result r = harness_hetsim((const char *[]){ "report", dir, "--by", "protocol.name",
                                                        "--where", "workload.lr=0.05", "--format",
                                                        "tex", "--names", names, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "AD-PSGD (ours) & 3") != NULL, "%s", r.out);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("figures");
    TCase *tc = tcase_create("paper");
    tcase_add_test(tc, column_figures_have_text_of_eight_points_at_their_final_size_and_no_title);
    tcase_add_test(tc, lines_differ_by_dash_and_marker_and_the_legend_names_groups_with_their_runs);
    tcase_add_test(tc, a_mean_curve_marks_where_runs_that_stopped_drop_out);
    tcase_add_test(tc,
                   a_names_file_with_a_nul_byte_or_unread_is_refused_and_one_with_a_bom_is_read);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
