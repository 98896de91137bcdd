/* The architecture's rules as the source files state them (DESIGN §6, STYLE §2): read from the
 * source tree (the suite runs from its root), include by include.
 *
 * A protocol, and the kit it shares, reaches the run only through runtime/proto.h and
 * runtime/ctx.h: no file under protocols/ or kit/ includes, directly or through another project
 * header, the scenario's headers, the cluster's or the network's, the runtime's internals or a
 * model's.
 *
 * Each folder includes only the folders below it (the rule's table, docs/layout.md).
 *
 * The recipe (docs/layout.md, "Adding a protocol") is the truth: every registered protocol stands
 * in each place it names outside the registry-driven suites. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "protocols/registry.h"
#include "suite.h"

/* Headers a protocol must not reach, as prefixes of the include's path. */
static const char *const forbidden[] = {
    "scenario/",         /* the scenario, its loader, the cluster, devices and rooflines */
    "net/",              /* the network model, its internal headers and hosts' fabrics */
    "sim/engine_net.h",  /* the engine's hooks for the network */
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

/* Whether a directory entry is a C source or header (not hidden). */
static bool is_source(const char *name)
{
    size_t len = strlen(name);
    return len >= 3 && name[0] != '.' &&
           (strcmp(name + len - 2, ".c") == 0 || strcmp(name + len - 2, ".h") == 0);
}

/* Walks every source file of `dir` and returns how many it walked. */
static size_t walk_folder(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no %s/ here (run from the source root)", dir);
    static walk wk; /* large: not on the stack */
    size_t files = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_source(e->d_name))
            continue;
        char path[300];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        memset(&wk, 0, sizeof(wk));
        follow(&wk, path);
        ck_assert_msg(wk.found[0] == '\0', "%s", wk.found);
        files++;
    }
    closedir(d);
    return files;
}

START_TEST(no_protocol_file_reaches_the_scenario_the_cluster_the_network_or_a_model)
{
    ck_assert_uint_gt(walk_folder("protocols"), 30); /* the walk saw the folder: 40-odd files */
    ck_assert_uint_gt(walk_folder("kit"), 15);       /* and the kit's: 19 files */
}
END_TEST

/* The check itself: a forbidden header is found through a chain of project headers. */
START_TEST(the_include_walk_finds_a_forbidden_header_behind_another)
{
    static walk wk;
    memset(&wk, 0, sizeof(wk));
    follow(&wk, "runtime/run.h"); /* run.h includes scenario/scenario.h */
    ck_assert_str_eq(wk.found, "runtime/run.h -> scenario/scenario.h");
    memset(&wk, 0, sizeof(wk));
    follow(&wk, "runtime/proto.h");
    ck_assert_str_eq(wk.found, "");
}
END_TEST

/* The folders' dependency rule (docs/layout.md): the folders each folder's files may include,
 * its own among them. sim <- net <- scenario <- models <- runtime <- kit <- protocols <- app,
 * with outputs on sim alone; the kit and the protocols skip the network, the scenario and the
 * models (the walk above follows that rule through headers too). */
static const struct {
    const char *folder;
    const char *may[10];
} rule[] = {
    { "sim", { "sim" } },
    { "net", { "sim", "net" } },
    { "scenario", { "sim", "net", "scenario" } },
    { "outputs", { "sim", "outputs" } },
    { "models", { "sim", "scenario", "models" } },
    { "runtime", { "sim", "net", "scenario", "outputs", "models", "runtime" } },
    { "kit", { "sim", "outputs", "runtime", "kit" } },
    { "protocols", { "sim", "outputs", "runtime", "kit", "protocols" } },
    { "app",
      { "sim", "net", "scenario", "outputs", "models", "runtime", "kit", "protocols", "app" } },
};

/* Whether `inc` (a quoted include) names a folder of the rule that rule[r] may not include;
 * an include without a folder is its own folder's. */
static bool crosses_the_rule(size_t r, const char *inc)
{
    const char *slash = strchr(inc, '/');
    if (slash == NULL)
        return false;
    size_t len = (size_t)(slash - inc);
    for (size_t m = 0; m < 10 && rule[r].may[m] != NULL; m++)
        if (strlen(rule[r].may[m]) == len && strncmp(inc, rule[r].may[m], len) == 0)
            return false;
    return true;
}

/* Checks every include of every source file of rule[r]'s folder; returns the files read. */
static size_t check_folder(size_t r)
{
    DIR *d = opendir(rule[r].folder);
    ck_assert_msg(d != NULL, "no %s/ here (run from the source root)", rule[r].folder);
    size_t files = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_source(e->d_name))
            continue;
        char path[300], line[512], inc[128];
        snprintf(path, sizeof(path), "%s/%s", rule[r].folder, e->d_name);
        FILE *f = fopen(path, "r");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        while (fgets(line, sizeof(line), f) != NULL)
            ck_assert_msg(sscanf(line, " # include \"%127[^\"]\"", inc) != 1 ||
                              !crosses_the_rule(r, inc),
                          "%s includes %s, which its folder may not (docs/layout.md)", path, inc);
        fclose(f);
        files++;
    }
    closedir(d);
    return files;
}

START_TEST(every_folder_includes_only_the_folders_the_rule_gives_it)
{
    for (size_t r = 0; r < sizeof(rule) / sizeof(rule[0]); r++)
        ck_assert_msg(check_folder(r) > 3, "%s/ holds almost nothing", rule[r].folder);
}
END_TEST

/* The check itself: an include of a folder the rule does not give is caught. */
START_TEST(the_folder_rule_refuses_an_include_that_runs_up)
{
    ck_assert(crosses_the_rule(0, "net/net.h"));         /* sim/ includes the network */
    ck_assert(crosses_the_rule(6, "scenario/device.h")); /* the kit reads a device */
    ck_assert(!crosses_the_rule(2, "net/fabric.h"));     /* the loader reads the fabrics */
    ck_assert(!crosses_the_rule(0, "heap.h"));           /* its own folder's */
}
END_TEST

/* The whole of a source file, malloc'd, NUL-terminated. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s (run from the source root)", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    ck_assert_int_ge(len, 0);
    rewind(f);
    char *text = malloc((size_t)len + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    text[len] = '\0';
    fclose(f);
    return text;
}

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Fails unless `text` (the file `path`) holds `want`, which names protocol `name`. */
static void expect_in(const char *text, const char *path, const char *want, const char *name)
{
    ck_assert_msg(strstr(text, want) != NULL,
                  "%s: protocol %s has no %s there (docs/layout.md: Adding a protocol)", path, name,
                  want);
}

START_TEST(every_registered_protocol_stands_where_the_recipe_says)
{
    static const char *const files[] = { "meson.build", "tests/meson.build", "docs/scenario.md",
                                         "docs/model.md" };
    char *text[4];
    for (size_t f = 0; f < 4; f++)
        text[f] = slurp(files[f]);
    /* docs/model.md: the protocols' bullet of what is modelled, up to the blank line that ends it
     */
    char *list = strstr(text[3], "* **Protocols**"), *end = list ? strstr(list, "\n\n") : NULL;
    ck_assert_msg(list != NULL && end != NULL, "docs/model.md: no \"* **Protocols**\" bullet");
    *end = '\0';
    memmove(text[3], list, (size_t)(end - list) + 1);
    size_t n;
    const proto_ops *const *all = proto_list(&n);
    for (size_t i = 0; i < n; i++) {
        const char *name = all[i]->name;
        char want[4][160];
        snprintf(want[0], sizeof(want[0]), "'protocols/%s.c'", name);
        snprintf(want[1], sizeof(want[1]), "'%s': ['test_%s.c']", name, name);
        snprintf(want[2], sizeof(want[2]), "\n| `%s` |", name);
        snprintf(want[3], sizeof(want[3]), "`%s`", name);
        for (size_t f = 0; f < 4; f++)
            expect_in(text[f], files[f], want[f], name);
        char path[160], papers[160];
        snprintf(path, sizeof(path), "scenarios/%s.json", name);
        snprintf(papers, sizeof(papers), "scenarios/papers/%s", name);
        ck_assert_msg(exists(path) || exists(papers), "protocol %s: neither %s nor %s/", name, path,
                      papers);
        snprintf(path, sizeof(path), "tests/golden/curves/%s/scenario.json", name);
        ck_assert_msg(exists(path), "protocol %s: no %s", name, path);
    }
    for (size_t f = 0; f < 4; f++)
        free(text[f]);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("protocols");
    tcase_add_test(tc, no_protocol_file_reaches_the_scenario_the_cluster_the_network_or_a_model);
    tcase_add_test(tc, the_include_walk_finds_a_forbidden_header_behind_another);
    suite_add_tcase(s, tc);
    tc = tcase_create("folders");
    tcase_add_test(tc, every_folder_includes_only_the_folders_the_rule_gives_it);
    tcase_add_test(tc, the_folder_rule_refuses_an_include_that_runs_up);
    suite_add_tcase(s, tc);
    tc = tcase_create("recipe");
    tcase_add_test(tc, every_registered_protocol_stands_where_the_recipe_says);
    suite_add_tcase(s, tc);
    return s;
}
