/* Issue 38's eleventh probe, classes 13-19 (probe38q): a golden's path past its
 * seeds' paths, messages that quote a field or a path cut inside a UTF-8
 * character or with its control bytes made '?', a name's limit counted in bytes
 * but called characters, a golden.json key missing read as its zero. Every case
 * failed before its fix.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* Makes folders under `base` (of 200 bytes, the last shorter) until their path,
 * into deep[size], is `want` bytes long. */
static void make_deep(const char *base, size_t want, char *deep, size_t size)
{
    char name[201];
    size_t len = (size_t)snprintf(deep, size, "%s", base);
    ck_assert_uint_lt(want, size);
    while (len < want) {
        size_t n = want - len - 1 > 200 ? 200 : want - len - 1;
        memset(name, 'd', n);
        name[n] = '\0';
        len += (size_t)snprintf(deep + len, size - len, "/%s", name);
        ck_assert_int_eq(mkdir(deep, 0777), 0);
    }
    ck_assert_uint_eq(len, want);
}

/* Whether the folder at `path` holds nothing. */
static bool empty_dir(const char *path)
{
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n == 0;
}

/* A golden's seeds' paths hold its path (GOLDEN/seed-S/FILE, GOLDEN.partial/... while an
 * update writes it) in 1,024 bytes, but -o's 4,000 bytes were taken for --golden: an update
 * into a golden 999 bytes deep ran its seeds, then said "a file the scenario names changed
 * during the update, no golden written: ...fingerprint: missing or unreadable", exit 1; a
 * check of a golden moved 1,100 bytes deep said "no golden here (write one with --update)",
 * exit 2. An update into a name of 248 to 255 bytes said "cannot create directory G.partial:
 * File name too long", exit 1. Each is refused before anything runs, naming --golden and its
 * limit, exit 2, nothing made. */
START_TEST(a_golden_too_long_for_its_seeds_paths_is_refused_first)
{
    char *dir = harness_tmpdir("probe18");
    char s[600], g[600], o[600], a[1100], b[1200], place[1300], name[260];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(place, sizeof(place), "%s/a", dir);
    ck_assert_int_eq(mkdir(place, 0777), 0);
    make_deep(place, 997, a, sizeof(a)); /* a golden of 999 bytes: an update ran, then failed */
    snprintf(place, sizeof(place), "%s/g", a);
    result res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", place, "--update", "--seeds", "3", NULL });
    ck_assert_msg(res.status == 2, "update: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "too long for a golden (at most 959 bytes") != NULL, "%s",
                  res.err);
    ck_assert_msg(empty_dir(a), "the update made something");
    snprintf(place, sizeof(place), "%s/b", dir);
    ck_assert_int_eq(mkdir(place, 0777), 0);
    make_deep(place, 1098, b, sizeof(b)); /* a golden of 1,100 bytes: "no golden here" */
    snprintf(place, sizeof(place), "%s/g", b);
    ck_assert_int_eq(rename(g, place), 0);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", place, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "check: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "too long for a golden") != NULL, "%s", res.err);
    ck_assert_msg(!harness_exists(o), "the check ran");
    memset(name, 'n', 250);
    name[250] = '\0';
    snprintf(place, sizeof(place), "%s/%s", dir, name);
    res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", place, "--update", "--seeds", "3", NULL });
    ck_assert_msg(res.status == 2, "a long name: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "--golden: a name in the directory's path is too long") != NULL,
                  "%s", res.err);
    ck_assert_msg(!harness_exists(place), "the update made its golden");
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe18");
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, a_golden_too_long_for_its_seeds_paths_is_refused_first);
    tcase_set_timeout(limits, 60);
    suite_add_tcase(s, limits);
    return s;
}
