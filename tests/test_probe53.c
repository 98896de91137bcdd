/* Issue 38, the eighteenth probe (classes 13-19 and the command line, probe38al): new variants
 * of the old classes. Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* `text` as UTF-16LE with its byte-order mark into dir/name (ASCII text only), as Windows
 * PowerShell 5's `>` saves it. */
static void write_utf16(const char *dir, const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("\xff\xfe", f);
    for (const char *c = text; *c != '\0'; c++) {
        fputc(*c, f);
        fputc(0, f);
    }
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- Encoding oddities -------------------------------------------------------------------- */

/* A golden's seeds file saved as UTF-16 (`5..7 > g\seeds` in PowerShell 5, a hand edit of the
 * seeds to check against) was "g/seeds: line 1: not a seed", exit 2, where golden.json and
 * every other text hetsim reads is named as UTF-16 with the fix. Named so now, exit 2. */
START_TEST(a_golden_seeds_file_saved_as_utf16_is_named_as_such)
{
    char *dir = harness_tmpdir("probe53");
    char s[600], g[600], o[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    char *seeds = harness_slurp(g, "seeds");
    char *crlf = malloc(2 * strlen(seeds) + 1), *q = crlf;
    for (const char *c = seeds; *c != '\0'; c++) {
        if (*c == '\n')
            *q++ = '\r';
        *q++ = *c;
    }
    *q = '\0';
    write_utf16(g, "seeds", crlf);
    snprintf(o, sizeof(o), "%s/c", dir);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "/g/seeds: UTF-16 or UTF-32 text (a UTF-16 or UTF-32 "
                                  "byte-order mark opens the file): hetsim reads UTF-8") != NULL,
                  "%s", res.err);
    free(crlf);
    free(seeds);
    harness_cleanup(dir);
}
END_TEST

/* ---- Removed or damaged run directories -------------------------------------------------- */

/* A golden whose seed directory was removed (`rm -r g/seed-6`) said "g/seed-6: missing (listed
 * in g/seeds)", exit 2, with no fix, where a seed's file removed says "an incomplete golden:
 * write it again with --update" (which replaces such a golden). Said so now, for check and
 * check --exact. */
START_TEST(a_golden_seed_directory_removed_is_an_incomplete_golden)
{
    char *dir = harness_tmpdir("probe53");
    char s[600], g[600], o[700], seed[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    char *seeds = harness_slurp(g, "seeds");
    snprintf(seed, sizeof(seed), "%s/seed-%.*s", g, (int)strcspn(seeds, "\n"), seeds);
    harness_cleanup(strdup(seed));
    snprintf(o, sizeof(o), "%s/c", dir);
    static const char *const modes[] = { "--golden", "--exact" };
    for (size_t m = 0; m < 2; m++) {
        result res =
            m == 0 ? harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL })
                   : harness_hetsim(
                         (const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, NULL });
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", modes[m], res.status, res.err);
        ck_assert_msg(strstr(res.err, "seeds): an incomplete golden (write it again with "
                                      "--update)") != NULL,
                      "%s: %s", modes[m], res.err);
    }
    result res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3", NULL });
    ck_assert_msg(res.status == 0, "update: exit %d\n%s", res.status, res.err);
    free(seeds);
    harness_cleanup(dir);
}
END_TEST

/* ---- Parser limits ------------------------------------------------------------------------ */

/* An index of a --set (or grid) path past what the path parser holds, 20 digits or more, was
 * "invalid path (expected keys and [index] joined by dots)", exit 2, though the path is keys
 * and an index joined so: the limit was not said. 19 digits are read (and found past the
 * array's end), 20 refused naming the limit; a grid path the same. */
START_TEST(a_path_index_past_the_parsers_limit_is_named)
{
    char *dir = harness_tmpdir("probe53");
    harness_write(dir, "s.json", harness_quick_json);
    char s[600], o[700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    result res =
        harness_hetsim((const char *[]){ "validate", s, "--set", "compute.speeds=[1, 1, 1]",
                                         "--set", "compute.speeds[9999999999999999999]=2", NULL });
    ck_assert_msg(res.status == 2, "19 digits: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "index 9999999999999999999 is past the end of $.compute.speeds "
                                  "(length 3)") != NULL,
                  "19 digits: %s", res.err);
    res = harness_hetsim(
        (const char *[]){ "validate", s, "--set", "compute.speeds[18446744073709551615]=2", NULL });
    ck_assert_msg(res.status == 2, "20 digits: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "--set compute.speeds[18446744073709551615]: an index of 20 "
                                  "digits, longer than 19 (the longest a path takes") != NULL,
                  "20 digits: %s", res.err);
    res = harness_sweep_grid(dir, "{\"stragglers[99999999999999999999].slowdown\": [2]}", o,
                             sizeof(o));
    ck_assert_msg(res.status == 2, "grid: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "an index of 20 digits, longer than 19") != NULL, "grid: %s",
                  res.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep point's summary.json nested past the JSON parser's limit (1000 levels), or cut
 * mid-file, made report and plot --by say "index.csv: line N: not its run's results: its
 * summary.json does not parse (DIR/summary.json)", exit 2, naming no cause nor the limit, where
 * plot RUN says the parser's line, column and cause. Said now. */
START_TEST(a_sweep_points_summary_past_the_nesting_limit_is_named)
{
    char *dir = harness_tmpdir("probe53");
    char sw[600], o[600], run[800];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/protocol.name=dpsgd,seed=6", o);
    char *sum = harness_slurp(run, "summary.json");
    char *end = strrchr(sum, '}');
    ck_assert_ptr_nonnull(end);
    size_t head = (size_t)(end - sum), len = head + 16 + 2 * 1001 + 4;
    char *deep = malloc(len);
    size_t at = (size_t)snprintf(deep, len, "%.*s, \"x\": ", (int)head, sum);
    for (int i = 0; i < 1001; i++)
        deep[at++] = '[';
    for (int i = 0; i < 1001; i++)
        deep[at++] = ']';
    snprintf(deep + at, len - at, "}\n");
    harness_write(run, "summary.json", deep);
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 2, "report: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "its summary.json does not parse: line ") != NULL &&
                      strstr(res.err, "nested deeper than 1000 levels (the parser's limit)") !=
                          NULL,
                  "report: %s", res.err);
    harness_write(run, "summary.json", "{\"stop_reason\": \"time\", \"sim_ti");
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 2, "cut: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "its summary.json does not parse: line 1, column ") != NULL,
                  "cut: %s", res.err);
    free(deep);
    free(sum);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe53");
    TCase *enc = tcase_create("encodings");
    tcase_add_test(enc, a_golden_seeds_file_saved_as_utf16_is_named_as_such);
    tcase_set_timeout(enc, 120);
    suite_add_tcase(s, enc);
    TCase *rm = tcase_create("removed");
    tcase_add_test(rm, a_golden_seed_directory_removed_is_an_incomplete_golden);
    tcase_set_timeout(rm, 120);
    suite_add_tcase(s, rm);
    TCase *lim = tcase_create("limits");
    tcase_add_test(lim, a_path_index_past_the_parsers_limit_is_named);
    tcase_add_test(lim, a_sweep_points_summary_past_the_nesting_limit_is_named);
    tcase_set_timeout(lim, 120);
    suite_add_tcase(s, lim);
    return s;
}
