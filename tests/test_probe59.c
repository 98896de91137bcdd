/* Issue 38, the nineteenth probe (classes 13 to 19 and the command line): a LIBSVM file saved
 * as UTF-16 is named so; limits said in their messages. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* Four workers training a softmax on a LIBSVM file, data.txt beside the scenario. */
static const char svm_json[] =
    "{\"seed\": 7, \"workers\": 2, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"dataset\": {\"name\": \"libsvm\", \"file\": \"data.txt\",\n"
    "   \"test_fraction\": 0.5}, \"model\": {\"name\": \"softmax\"}, \"batch\": 1, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.05}}\n";

/* data.txt of the text `text`, written as UTF-16 (little-endian, with its byte-order mark). */
static void write_utf16(const char *dir, const char *name, const char *text)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert(f != NULL);
    fputc(0xff, f);
    fputc(0xfe, f);
    for (const char *p = text; *p != '\0'; p++) {
        fputc(*p, f);
        fputc(0, f);
    }
    ck_assert(fclose(f) == 0);
}

/* A LIBSVM file saved as UTF-16 was "data.txt: line 1, column 4: a NUL byte" (the profile,
 * the trace, the scenario, the --names file, index.csv and a golden's seeds file say
 * "UTF-16 text": save the file as UTF-8). It is named so now, and the same text in UTF-8
 * runs. */
START_TEST(a_libsvm_file_saved_as_utf16_is_named_so)
{
    static const char data[] = "# two classes\n1 1:0.5 2:1\n0 1:-0.5 3:2\n1 2:0.25\n0 3:-1\n";
    char *dir = harness_tmpdir("probe59");
    char s[600], o[600];
    harness_write(dir, "s.json", svm_json);
    write_utf16(dir, "data.txt", data);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(o, sizeof(o), "%s/out", dir);
    result r = harness_hetsim((const char *[]){ "run", s, "-o", o, "--quiet", NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "data.txt: UTF-16 text") != NULL &&
                      strstr(r.err, "NUL") == NULL,
                  "exit %d\n%s", r.status, r.err);
    ck_assert(!harness_exists(o));
    harness_write(dir, "data.txt", data);
    r = harness_hetsim((const char *[]){ "run", s, "-o", o, "--quiet", NULL });
    ck_assert_msg(r.status == 0, "UTF-8: exit %d\n%s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe59");
    TCase *enc = tcase_create("encodings");
    tcase_add_test(enc, a_libsvm_file_saved_as_utf16_is_named_so);
    tcase_set_timeout(enc, 120);
    suite_add_tcase(s, enc);
    return s;
}
