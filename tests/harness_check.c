/* Shared helpers of the check suites (tests/harness_check.h). */
#include "harness_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "harness.h"

static char base[64]; /* the golden made once: base/golden */
const char *chkt_scenario = CHKT_SCENARIO;

harness_result chkt_check(const char *const *args)
{
    const char *argv[31] = { "check",         chkt_scenario, "--set",
                             "stop.time_s=2", "--set",       "eval.every_s=0.25" };
    size_t n = 6;
    for (size_t i = 0; args[i] != NULL && n < 30; i++)
        argv[n++] = args[i];
    return harness_hetsim(argv);
}

/* Runs the shell command `tmpl` with every "%s" in it replaced by `dir`. */
void chkt_sh(const char *tmpl, const char *dir)
{
    char cmd[4096];
    size_t len = 0;
    for (const char *p = tmpl; *p != '\0' && len + 600 < sizeof(cmd);) {
        if (p[0] == '%' && p[1] == 's') {
            len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s", dir);
            p += 2;
        } else {
            cmd[len++] = *p++;
        }
    }
    cmd[len] = '\0';
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

bool chkt_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void make_base(void)
{
    char out[] = "/tmp/hetsim-check-base-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(out));
    snprintf(base, sizeof(base), "%s", out);
}

/* A copy of the base golden at DIR/golden (DIR fresh); returns DIR (caller frees). */
char *chkt_copy_golden(void)
{
    char *dir = harness_tmpdir("check");
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "cp -r %s/golden %s/golden", base, dir);
    ck_assert_int_eq(system(cmd), 0);
    return dir;
}

void chkt_path_of(char *buf, size_t size, const char *dir, const char *rest)
{
    snprintf(buf, size, "%s/%s", dir, rest);
}

harness_result chkt_check_golden(const char *dir)
{
    char g[512], o[512];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    return chkt_check((const char *[]){ "--golden", g, "-o", o, NULL });
}

void chkt_setup_base(void)
{
    make_base();
    char g[512];
    chkt_path_of(g, sizeof(g), base, "golden");
    harness_result r =
        chkt_check((const char *[]){ "--golden", g, "--update", "--seeds", "3", NULL });
    if (r.status != 0) {
        fprintf(stderr, "cannot make the base golden: %s", r.err);
        exit(1);
    }
}

void chkt_teardown_base(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", base);
}
