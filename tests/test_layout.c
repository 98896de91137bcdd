/* The architecture's rules as the source files state them (DESIGN §6, STYLE §2): read from the
 * source tree (the suite runs from its root), include by include.
 *
 * A protocol, and the kit it shares, reaches the run only through runtime/proto.h and
 * runtime/ctx.h: no file under protocols/ includes, directly or through another project
 * header, the scenario's headers, the cluster's or the network's, the runtime's internals or a
 * model's. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "suite.h"

/* Headers a protocol must not reach, as prefixes of the include's path. */
static const char *const forbidden[] = {
    "sim/scenario",      /* the scenario and its loader's internal headers */
    "sim/net",           /* the network model and its internal headers */
    "sim/engine_net.h",  /* the engine's hooks for the network */
    "sim/cluster.h",     /* compute times, stragglers, failures */
    "sim/fabric.h",      /* hosts' fabrics */
    "sim/device.h",      /* accelerators */
    "sim/cfg_state.h",   /* cJSON, the cfg module's own */
    "runtime/state.h",   /* the runtime's internals: the context's state, ... */
    "runtime/run.h",     /* ... the run's set-up, ... */
    "runtime/snap.h",    /* ... snapshots, ... */
    "runtime/jobs.h",    /* ... the pool's jobs ... */
    "runtime/outputs.h", /* ... and outputs */
    "models/",           /* the models: parameters and steps go through the context */
};

enum {
    MAX_DEPTH = 16,
    MAX_SEEN = 256
};

/* The headers visited from one file (each once), and the chain to the current one. */
typedef struct walk {
    char seen[MAX_SEEN][128];
    size_t nseen;
    const char *chain[MAX_DEPTH];
    size_t depth;
    char found[1024]; /* the first forbidden chain, "" when none */
} walk;

static bool is_forbidden(const char *path)
{
    for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++)
        if (strncmp(path, forbidden[i], strlen(forbidden[i])) == 0)
            return true;
    return false;
}

static bool seen_before(walk *wk, const char *path)
{
    for (size_t i = 0; i < wk->nseen; i++)
        if (strcmp(wk->seen[i], path) == 0)
            return true;
    ck_assert_uint_lt(wk->nseen, MAX_SEEN);
    snprintf(wk->seen[wk->nseen++], sizeof(wk->seen[0]), "%s", path);
    return false;
}

/* Writes the chain to `path` into wk->found. */
static void record(walk *wk, const char *path)
{
    size_t len = 0;
    for (size_t i = 0; i < wk->depth; i++)
        len += (size_t)snprintf(wk->found + len, sizeof(wk->found) - len, "%s -> ", wk->chain[i]);
    snprintf(wk->found + len, sizeof(wk->found) - len, "%s", path);
}

/* Follows the project includes ("dir/name.h") of `path`, depth first, until a forbidden one. */
static void follow(walk *wk, const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s (run from the source root)", path);
    ck_assert_uint_lt(wk->depth, MAX_DEPTH);
    wk->chain[wk->depth++] = path;
    char line[512];
    while (wk->found[0] == '\0' && fgets(line, sizeof(line), f) != NULL) {
        char inc[128];
        if (sscanf(line, " # include \"%127[^\"]\"", inc) != 1)
            continue;
        if (is_forbidden(inc)) {
            record(wk, inc);
        } else if (strchr(inc, '/') != NULL && !seen_before(wk, inc)) {
            char *copy = wk->seen[wk->nseen - 1]; /* lives as long as the walk */
            follow(wk, copy);
        }
    }
    wk->depth--;
    fclose(f);
}

START_TEST(no_protocol_file_reaches_the_scenario_the_cluster_the_network_or_a_model)
{
    DIR *d = opendir("protocols");
    ck_assert_msg(d != NULL, "no protocols/ here (run from the source root)");
    static walk wk; /* large: not on the stack */
    size_t files = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 3 || e->d_name[0] == '.' ||
            (strcmp(e->d_name + len - 2, ".c") != 0 && strcmp(e->d_name + len - 2, ".h") != 0))
            continue;
        char path[300];
        snprintf(path, sizeof(path), "protocols/%s", e->d_name);
        memset(&wk, 0, sizeof(wk));
        follow(&wk, path);
        ck_assert_msg(wk.found[0] == '\0', "%s", wk.found);
        files++;
    }
    closedir(d);
    ck_assert_uint_gt(files, 40); /* the walk saw the folder: 60-odd files */
}
END_TEST

/* The check itself: a forbidden header is found through a chain of project headers. */
START_TEST(the_include_walk_finds_a_forbidden_header_behind_another)
{
    static walk wk;
    memset(&wk, 0, sizeof(wk));
    follow(&wk, "runtime/run.h"); /* run.h includes sim/scenario.h */
    ck_assert_str_eq(wk.found, "runtime/run.h -> sim/scenario.h");
    memset(&wk, 0, sizeof(wk));
    follow(&wk, "runtime/proto.h");
    ck_assert_str_eq(wk.found, "");
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("protocols");
    tcase_add_test(tc, no_protocol_file_reaches_the_scenario_the_cluster_the_network_or_a_model);
    tcase_add_test(tc, the_include_walk_finds_a_forbidden_header_behind_another);
    suite_add_tcase(s, tc);
    return s;
}
