/* Issue 38's tenth probe, classes 1-6 (probe38o): a compute.profile or a trace that is a FIFO
 * named by a sweep's grid value rather than by the base. Every case failed before its fix.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A timing-only scenario of three workers for 0.2 simulated seconds: quick runs. */
static const char scenario_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* A writer that opens the FIFO at `path`, writes `text` once and ends, as a program piping a
 * file in would. */
static pid_t write_once(const char *path, const char *text)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        FILE *f = fopen(path, "w");
        _exit(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0 ? 0 : 1);
    }
    return pid;
}

/* The ninth probe made a sweep refuse a FIFO its base names (the first values of the grid),
 * but a FIFO named by a later grid value was read by the first point that names it, when the
 * points are validated, and waited on forever by the next (seed 6 of the same value): sweep
 * hung (timeout), with a profile as with a trace. Refused, naming the point and the FIFO,
 * exit 2, nothing made. */
START_TEST(a_fifo_named_by_a_later_grid_value_is_refused_by_a_sweep)
{
    static const char *const grids[] = {
        "{\"compute.profile\": [\"p.csv\", \"f.csv\"]}",
        "{\"stragglers\": [[], [{\"kind\": \"trace\", \"file\": \"f.csv\"}]]}",
    };
    static const char *const texts[] = {
        "name,params,forward_flops\nl1,1000,200000\nl2,500,100000\n",
        "0,0,2\n0.1,1,3\n",
    };
    char *dir = harness_tmpdir("probe14");
    char sw[600], o[600], fifo[600], text[400];
    harness_write(dir, "s.json", scenario_json);
    harness_write(dir, "p.csv", texts[0]);
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(fifo, sizeof(fifo), "%s/f.csv", dir);
    ck_assert_int_eq(mkfifo(fifo, 0666), 0);
    for (int c = 0; c < 2; c++) {
        snprintf(text, sizeof(text), "{\"base\": \"s.json\", \"grid\": %s, \"seeds\": 2}\n",
                 grids[c]);
        harness_write(dir, "sw.json", text);
        pid_t writer = write_once(fifo, texts[c]);
        result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
        kill(writer, SIGKILL);
        waitpid(writer, NULL, 0);
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "point 2 (") != NULL &&
                          strstr(res.err, "f.csv: not a regular file (a FIFO)") != NULL,
                      "case %d: %s", c, res.err);
        ck_assert(!harness_exists(o));
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe14");
    TCase *reads = tcase_create("reads");
    tcase_add_test(reads, a_fifo_named_by_a_later_grid_value_is_refused_by_a_sweep);
    tcase_set_timeout(reads, 30);
    suite_add_tcase(s, reads);
    return s;
}
