/* A row of a sweep's index.csv held to its run's run.json (see app/index_state.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/index_state.h"
#include "sim/cfg.h"

/* True when the dotted path `key` is absent from the scenario `sc` (a run.json of hetsim
 * holds every resolved key; a path with an array index counts as present). */
static bool key_absent(sim_cfg *sc, const char *key)
{
    char part[256];
    if (strchr(key, '[') != NULL)
        return false;
    for (const char *dot = strchr(key, '.'); dot != NULL; dot = strchr(key, '.')) {
        if ((size_t)(dot - key) >= sizeof(part))
            return true;
        snprintf(part, sizeof(part), "%.*s", (int)(dot - key), key);
        if (!sim_cfg_has(sc, part) || sim_cfg_child(sc, part, &sc, NULL) != SIM_OK || sc == NULL)
            return true;
        key = dot + 1;
    }
    return !sim_cfg_has(sc, key);
}

/* Whether the run's value at `key` (a dotted path of the resolved scenario `sc`, present) is
 * a JSON string: its index cell is then the string's text as JSON writes it inside quotes
 * (app/sweep.c's sw_plain_value), which a string "1", "[1]" or "true" shares with a number, an
 * array or a boolean, and "q\"uote" is no JSON text at all. */
static bool string_at(sim_cfg *sc, const char *key)
{
    char part[256], *json = NULL;
    for (const char *dot = strchr(key, '.'); dot != NULL; dot = strchr(key, '.')) {
        if ((size_t)(dot - key) >= sizeof(part))
            return false;
        snprintf(part, sizeof(part), "%.*s", (int)(dot - key), key);
        if (sim_cfg_child(sc, part, &sc, NULL) != SIM_OK || sc == NULL)
            return false;
        key = dot + 1;
    }
    bool string = strchr(key, '[') == NULL && sim_cfg_json(sc, key, &json, NULL) == SIM_OK &&
                  json != NULL && json[0] == '"';
    free(json);
    return string;
}

/* The length of the array at the dotted path `path` of `b` (keys alone, no index), or
 * SIZE_MAX when there is none there. */
static size_t array_len_at(sim_cfg *b, const char *path)
{
    char part[256];
    size_t n = 0;
    for (const char *dot = strchr(path, '.'); dot != NULL; dot = strchr(path, '.')) {
        if ((size_t)(dot - path) >= sizeof(part))
            return SIZE_MAX;
        snprintf(part, sizeof(part), "%.*s", (int)(dot - path), path);
        if (sim_cfg_child(b, part, &b, NULL) != SIM_OK || b == NULL)
            return SIZE_MAX;
        path = dot + 1;
    }
    if (strchr(path, '[') != NULL || !sim_cfg_has(b, path) ||
        sim_cfg_array_len(b, path, &n, NULL) != SIM_OK)
        return SIZE_MAX;
    return n;
}

static bool set_value(sim_cfg *b, const char *path, const char *value, int depth);

#define ITEMS_MAX 1024

/* Sets the array `value` (JSON text) at `path` of `b` item by item when `b` holds an array of
 * its length there, so that the defaults the run resolved into its objects stay (a swept
 * "stragglers" rule without recover_s is resolved with "recover_s": null). Else -1: set it
 * whole; 0 when an item cannot be set, 1 when all are. A sweep's directory names bound its
 * arrays to a few dozen items; past ITEMS_MAX (an index or a run.json of no sweep), whole:
 * each item is reached from the array's start. */
static int set_items(sim_cfg *b, const char *path, const char *value, int depth)
{
    size_t len = strlen(value), n = 0;
    char *wrap = malloc(len + 8);
    if (wrap == NULL)
        return -1;
    snprintf(wrap, len + 8, "{\"v\":%s}", value);
    sim_cfg *w = sim_cfg_parse(wrap, strlen(wrap), NULL, NULL);
    free(wrap);
    int rc = -1;
    if (w != NULL && sim_cfg_array_len(w, "v", &n, NULL) == SIM_OK && n > 0 && n <= ITEMS_MAX &&
        array_len_at(b, path) == n) {
        rc = 1;
        for (size_t i = 0; i < n && rc == 1; i++) {
            char *item = NULL, at[1024];
            rc = sim_cfg_at_json(w, "v", i, &item, NULL) == SIM_OK && item != NULL &&
                 snprintf(at, sizeof(at), "%s[%zu]", path, i) < (int)sizeof(at) &&
                 set_value(b, at, item, depth + 1);
            free(item);
        }
    }
    sim_cfg_destroy(w);
    return rc;
}

/* The node at the dotted path `path` of `b`, whose parts are keys or key[i], or NULL. */
static sim_cfg *node_at(sim_cfg *b, const char *path)
{
    char part[256];
    while (b != NULL && *path != '\0') {
        size_t len = strcspn(path, "."), i = 0;
        if (len >= sizeof(part))
            return NULL;
        snprintf(part, sizeof(part), "%.*s", (int)len, path);
        char *open = strchr(part, '[');
        if (open != NULL) {
            *open = '\0';
            i = strtoul(open + 1, NULL, 10);
        }
        if ((open != NULL ? sim_cfg_at(b, part, i, &b, NULL) : sim_cfg_child(b, part, &b, NULL)) !=
            SIM_OK)
            return NULL;
        path += len + (path[len] == '.');
    }
    return b;
}

/* True when `path` is a straggler rule's "count" of `value` workers that the run drew and a
 * run.json of hetsim before issue 38 holds with "count": null and that many "workers", which
 * setting the count would change (run.json now keeps the count beside the workers drawn, which
 * setting it changes nothing in). */
static bool count_drawn(sim_cfg *b, const char *path, const char *value)
{
    const char *dot = strrchr(path, '.');
    char at[1024];
    sim_cfg *rule =
        dot != NULL && strcmp(dot, ".count") == 0 &&
                snprintf(at, sizeof(at), "%.*s", (int)(dot - path), path) < (int)sizeof(at)
            ? node_at(b, at)
            : NULL;
    size_t n = 0;
    char *end = NULL;
    double k = strtod(value, &end);
    return rule != NULL && sim_cfg_has(rule, "count") && sim_cfg_is_null(rule, "count") &&
           sim_cfg_has(rule, "workers") && sim_cfg_array_len(rule, "workers", &n, NULL) == SIM_OK &&
           end != value && *end == '\0' && k == (double)n;
}

/* Sets `value` (an index cell: JSON text, or a bare string) at `path` of `b`: an object key
 * by key, so that the defaults the run resolved into it stay (a swept "protocol":
 * {"name": "allreduce"} is resolved with the ring's bucket sizes), and an array of the run's
 * length item by item (set_items), a rule's count of workers the run drew left as drawn
 * (count_drawn). False when it cannot be. */
static bool set_value(sim_cfg *b, const char *path, const char *value, int depth)
{
    char set[4096];
    if (count_drawn(b, path, value))
        return true;
    int items = value[0] == '[' && depth < 16 ? set_items(b, path, value, depth) : -1;
    if (items >= 0)
        return items == 1;
    sim_cfg *v =
        value[0] == '{' && depth < 16 ? sim_cfg_parse(value, strlen(value), NULL, NULL) : NULL;
    if (v == NULL)
        return snprintf(set, sizeof(set), "%s=%s", path, value) < (int)sizeof(set) &&
               sim_cfg_override(b, set, NULL) == SIM_OK;
    bool ok = true;
    for (size_t i = 0; ok && i < sim_cfg_nkeys(v); i++) {
        const char *key = sim_cfg_key(v, i);
        char *sub = NULL, at[1024];
        ok = sim_cfg_json(v, key, &sub, NULL) == SIM_OK && sub != NULL &&
             snprintf(at, sizeof(at), "%s.%s", path, key) < (int)sizeof(at) &&
             set_value(b, at, sub, depth + 1);
        free(sub);
    }
    sim_cfg_destroy(v);
    return ok;
}

/* Whether `value` (JSON text) is printed as the sweep writes a swept value (sim_cfg_at_json:
 * compact, each number's shortest exact spelling): "0.050" or "5e-2" for the sweep's 0.05
 * read back as the same number, but report and plot --by group by the text, and drew one
 * grid value as two rows of one run each. Text that is no JSON is left to set_value. */
static bool as_written(const char *value)
{
    size_t len = strlen(value);
    char *wrap = malloc(len + 8), *back = NULL;
    if (wrap == NULL)
        return true;
    snprintf(wrap, len + 8, "{\"v\":%s}", value);
    sim_cfg *v = sim_cfg_parse(wrap, strlen(wrap), NULL, NULL);
    bool same = v == NULL || sim_cfg_json(v, "v", &back, NULL) != SIM_OK || back == NULL ||
                strcmp(back, value) == 0;
    free(back);
    sim_cfg_destroy(v);
    free(wrap);
    return same;
}

/* Row r's swept values and seed set into a second reading of its run.json (`text`, n bytes)
 * change nothing in the resolved scenario: the paths that differ into diff[size] (empty when
 * none). A run.json that is not JSON with a scenario is left to app_index_run_facts. */
void ix_row_diff(const app_index *ix, size_t r, const char *text, size_t n, char *diff, size_t size)
{
    char path[1024];
    sim_cfg *a = sim_cfg_parse(text, n, NULL, NULL), *b = sim_cfg_parse(text, n, NULL, NULL);
    sim_cfg *sa = NULL, *sb = NULL;
    diff[0] = '\0';
    if (a == NULL || b == NULL || sim_cfg_child(a, "scenario", &sa, NULL) != SIM_OK ||
        sim_cfg_child(b, "scenario", &sb, NULL) != SIM_OK || sa == NULL || sb == NULL)
        sa = NULL;
    for (size_t c = 2; sa != NULL && c < ix->nkeys + 3 && diff[0] == '\0'; c++) {
        const char *key = ix->csv.head[c], *cell = app_index_cell(ix, r, c);
        /* A run.json of hetsim holds every swept key: one missing ("Lr") is a damaged file,
         * whatever the cell (no sweep writes an empty one: an empty string is no value). */
        if (key_absent(sa, key)) {
            snprintf(diff, size, "%s (\"%s\"; no such key there)", key, cell);
            continue;
        }
        size_t klen = strlen(key);
        if (klen + sizeof("scenario.") > sizeof(path)) {
            snprintf(diff, size, "%.200s... (a key of %zu bytes)", key, klen);
            continue;
        }
        memcpy(path, "scenario.", sizeof("scenario.") - 1);
        memcpy(path + sizeof("scenario.") - 1, key, klen + 1);
        char *quoted = string_at(sa, key) ? malloc(strlen(cell) + 3) : NULL;
        if (quoted != NULL) /* the cell as the JSON string it was written from */
            snprintf(quoted, strlen(cell) + 3, "\"%s\"", cell);
        const char *value = quoted != NULL ? quoted : cell;
        if (c < ix->nkeys + 2 && !as_written(value)) /* the seed column is read as a seed */
            snprintf(diff, size, "%s (\"%s\", not as the sweep writes it)", key, cell);
        else if (!set_value(b, path, value, 0))
            snprintf(diff, size, "%s", key);
        free(quoted);
    }
    if (sa != NULL && diff[0] == '\0')
        sim_cfg_diff(sa, sb, NULL, 0, diff, size);
    sim_cfg_destroy(a);
    sim_cfg_destroy(b);
}
