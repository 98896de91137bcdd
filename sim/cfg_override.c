/* Overrides and printing of a scenario's tree (see sim/cfg.h): `--set PATH=VALUE` applied
 * in place (VALUE parsed as JSON or taken as a bare string, missing objects created, old
 * contents parked on the root until destroy), and the whole tree printed with numbers that
 * read back exactly. Built on sim/cfg_tree.c and sim/cfg_parse.c; calls nothing of
 * sim/cfg_read.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cfg.h"
#include "sim/cfg_state.h"
#include "sim/err.h"
#include "sim/text.h"

/* ---- Overrides -------------------------------------------------------------------------- */

/* Gives `node` the content of `value` in place (node keeps its key and position, so child
 * cfgs pointing at it stay valid); the old content is kept in `value` and parked on the
 * root until destroy. */
static int replace_content(sim_cfg *root, cJSON *node, cJSON *value)
{
    cJSON **d = cfg_reserve(root->dead, &root->dead_cap, root->ndead + 1, sizeof(*d));
    if (d == NULL)
        return SIM_ENOMEM;
    root->dead = d;
    cJSON old = *node;
    int keep = node->type & cJSON_StringIsConst;
    node->type = (value->type & ~cJSON_StringIsConst) | keep;
    node->child = value->child;
    node->valuestring = value->valuestring;
    node->valueint = value->valueint;
    node->valuedouble = value->valuedouble;
    value->type = old.type & ~cJSON_StringIsConst;
    value->child = old.child;
    value->valuestring = old.valuestring;
    value->valueint = old.valueint;
    value->valuedouble = old.valuedouble;
    root->dead[root->ndead++] = value;
    cfg_forget_elements(root, node); /* its elements, if an array, are no longer those */
    return 0;
}

/* Parses VALUE: JSON when it parses, else a bare string. Text that starts like a JSON
 * object, array or string must parse, its numbers JSON's (cfg_bad_number: cJSON reads 01 and
 * 4.) and its \u escapes four hexadecimal digits (cfg_bad_escape); other text with such a
 * number is a string. NULL with *rc set on error. */
static cJSON *parse_value(const sim_cfg *root, const char *text, const char *label,
                          const char *target, int *rc, sim_err *err)
{
    size_t len = strlen(text), n = 0, bad = cfg_bad_number(text, len, &n);
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    bool composite = *p == '{' || *p == '[' || *p == '"';
    if (v != NULL && bad != SIZE_MAX && composite) {
        char what[128];
        cfg_bad_number_text(what, sizeof(what), text + bad, n);
        cJSON_Delete(v);
        *rc = cfg_fail(root, err, SIM_ESCENARIO, label, "%s, at column %zu", what, bad + 1);
        return NULL;
    }
    if (v != NULL && bad != SIZE_MAX) {
        cJSON_Delete(v);
        v = NULL;
    }
    size_t esc = v != NULL ? cfg_bad_escape(text, len) : SIZE_MAX;
    if (esc != SIZE_MAX) {
        cJSON_Delete(v);
        *rc = cfg_fail(root, err, SIM_ESCENARIO, label, "%s, at column %zu", CFG_BAD_ESCAPE_TEXT,
                       esc + 1);
        return NULL;
    }
    if (v == NULL) {
        if (composite) {
            size_t col = end != NULL && end >= text ? (size_t)(end - text) + 1 : 1;
            size_t deep = cfg_too_deep(text, len), half = cfg_lone_surrogate(text, len);
            if (half != SIZE_MAX && half + 1 <= col)
                *rc = cfg_fail(root, err, SIM_ESCENARIO, label, "%s, at column %zu",
                               CFG_LONE_SURROGATE_TEXT, half + 1);
            else if (deep != SIZE_MAX && deep + 1 <= col)
                *rc = cfg_fail(root, err, SIM_ESCENARIO, label,
                               "value nested deeper than %d levels (the parser's limit) at "
                               "column %zu",
                               CJSON_NESTING_LIMIT, deep + 1);
            else
                *rc = cfg_fail(root, err, SIM_ESCENARIO, label, "invalid JSON value at column %zu",
                               col);
            return NULL;
        }
        if ((v = cJSON_CreateString(text)) == NULL)
            *rc = cfg_no_memory(root, err);
        return v;
    }
    char path[PATH_MAX_TEXT], what[128];
    const char *key = NULL;
    if (cfg_find_nul_escape(text, len, v, target, path, sizeof(path), &key)) {
        cfg_nul_escape_text(what, sizeof(what), key);
        cJSON_Delete(v);
        *rc = cfg_fail(root, err, SIM_ESCENARIO, label, "%s, at %s", what, path);
        return NULL;
    }
    int found = cfg_find_duplicate(v, target, path, sizeof(path));
    if (found == 0 && cfg_keep_integer_texts(v, text, len) != 0)
        found = SIM_ENOMEM;
    if (found != 0) {
        cJSON_Delete(v);
        *rc = found == 1
                  ? cfg_fail(root, err, SIM_ESCENARIO, label, "duplicate key %s in the value", path)
                  : cfg_no_memory(root, err);
        return NULL;
    }
    return v;
}

/* One step of an override path: a key, or an index when key is NULL. */
typedef struct step {
    char *key;
    size_t index;
} step;

/* The most digits of an index in a path: 10^19 - 1 fits a size_t, and no array is that long. */
#define INDEX_MAX_DIGITS 19

/* Splits "a.b[2].c" into steps (keys are copied into `keys`, a buffer as long as the
 * path). Returns the number of steps, or 0 for a malformed path; *long_index then points at
 * the digits of an index longer than INDEX_MAX_DIGITS (NULL for another fault), which was
 * "invalid path (expected keys and [index] joined by dots)", a limit not said. */
static size_t split_path(const char *p, size_t len, char *keys, step *steps, size_t max,
                         const char **long_index)
{
    *long_index = NULL;
    size_t n = 0, i = 0;
    if (len >= 2 && p[0] == '$' && p[1] == '.')
        i = 2;
    while (i < len && n < max) {
        size_t start = i;
        while (i < len && p[i] != '.' && p[i] != '[' && p[i] != ']')
            i++;
        if (i == start)
            return 0;
        memcpy(keys, p + start, i - start);
        keys[i - start] = '\0';
        steps[n++] = (step){ keys, 0 };
        keys += i - start + 1;
        while (i < len && p[i] == '[' && n < max) {
            size_t idx = 0, digits = 0;
            for (i++; i < len && p[i] >= '0' && p[i] <= '9'; i++, digits++)
                idx = idx * 10 + (size_t)(p[i] - '0'); /* wraps past 19 digits: refused below */
            if (digits > INDEX_MAX_DIGITS) {
                *long_index = p + i - digits;
                return 0;
            }
            /* Decimal as a seed is written: "[01]" read as [1] let a sweep give one value
             * under two grid paths, its index.csv showing the one the run did not use. */
            if (digits == 0 || (digits > 1 && p[i - digits] == '0') || i >= len || p[i] != ']')
                return 0;
            i++;
            steps[n++] = (step){ NULL, idx };
        }
        if (i < len && p[i] != '.')
            return 0;
        if (i < len && ++i == len)
            return 0; /* a trailing dot */
    }
    return i == len ? n : 0;
}

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsObject(v))
        return "an object";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    return "null";
}

/* Puts `item` under `key` of object `parent` (replacing `existing` in place when not NULL).
 * Always takes over `item`. Returns 0 or SIM_ENOMEM. */
static int set_key(sim_cfg *root, cJSON *parent, const char *key, cJSON *existing, cJSON *item)
{
    if (existing == NULL ? cJSON_AddItemToObject(parent, key, item)
                         : replace_content(root, existing, item) == 0)
        return 0;
    cJSON_Delete(item);
    return SIM_ENOMEM;
}

/* Walks the steps from the root, creating missing objects, and sets the last one to
 * `value`, which it takes over. */
static int apply_steps(sim_cfg *root, const step *steps, size_t n, cJSON *value, const char *label,
                       sim_err *err)
{
    char path[PATH_MAX_TEXT] = "$", here[PATH_MAX_TEXT];
    cJSON *cur = root->tree;
    int rc = 0;
    for (size_t s = 0; s < n && rc == 0; s++) {
        bool last = s + 1 == n;
        const char *key = steps[s].key;
        cJSON *next = NULL;
        if (key != NULL ? !cJSON_IsObject(cur) : !cJSON_IsArray(cur)) {
            rc = cfg_fail(root, err, SIM_ESCENARIO, label, "%s is %s, not %s", path, type_name(cur),
                          key != NULL ? "an object" : "an array");
            break;
        }
        if (key != NULL) {
            cfg_key_path(here, sizeof(here), path, key);
            next = cJSON_GetObjectItemCaseSensitive(cur, key);
            if (last) {
                rc = set_key(root, cur, key, next, value) != 0 ? cfg_no_memory(root, err) : 0;
                value = NULL;
            } else if ((next == NULL || cJSON_IsNull(next)) && steps[s + 1].key == NULL) {
                rc = cfg_fail(root, err, SIM_ESCENARIO, label, "%s is %s, cannot index it", here,
                              next == NULL ? "absent" : "null");
            } else if (next == NULL || cJSON_IsNull(next)) {
                /* A missing intermediate object. */
                if (set_key(root, cur, key, next, cJSON_CreateObject()) != 0)
                    rc = cfg_no_memory(root, err);
                next = cJSON_GetObjectItemCaseSensitive(cur, key);
            }
        } else {
            /* From the array's cursor or index: one --set per element, in any order, walks
             * no more than one link each (a walk from the start made 40,000 straggler rules
             * take 3.4 s). The tree is the root's own, hence the cast. */
            next = (cJSON *)cfg_item_at(root, cur, steps[s].index);
            if (next == NULL) {
                size_t len = 0;
                for (const cJSON *c = cur->child; c != NULL; c = c->next)
                    len++;
                rc = cfg_fail(root, err, SIM_ESCENARIO, label,
                              "index %zu is past the end of %s (length %zu)", steps[s].index, path,
                              len);
                break;
            }
            cfg_put(here, sizeof(here), cfg_put(here, sizeof(here), 0, "%s", path), "[%zu]",
                    steps[s].index);
            if (last) {
                if (replace_content(root, next, value) != 0)
                    rc = cfg_no_memory(root, err);
                else
                    value = NULL;
            }
        }
        memcpy(path, here, sizeof(path));
        cur = next;
    }
    cJSON_Delete(value);
    return rc;
}

/* The levels of arrays and objects v opens (0 for a scalar): at most the parser's limit, as v
 * was parsed. */
static size_t json_depth(const cJSON *v)
{
    size_t deepest = 0;
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        for (const cJSON *c = v->child; c != NULL; c = c->next) {
            size_t d = json_depth(c);
            deepest = d > deepest ? d : deepest;
        }
    return cJSON_IsArray(v) || cJSON_IsObject(v) ? deepest + 1 : 0;
}

int sim_cfg_override(sim_cfg *root, const char *assignment, sim_err *err)
{
    char label[PATH_MAX_TEXT];
    root = root->root;
    const char *eq = strchr(assignment, '=');
    size_t plen = eq != NULL ? (size_t)(eq - assignment) : strlen(assignment);
    size_t bad = sim_text_utf8_bad(assignment, strlen(assignment));
    if (bad != SIZE_MAX) /* its path is not shown: it may hold the byte */
        return cfg_fail(root, err, SIM_ESCENARIO, "--set",
                        "a byte that is no UTF-8 at column %zu (a --set is JSON, which is UTF-8)",
                        bad + 1);
    snprintf(label, sizeof(label), "--set %.*s", (int)(plen < 400 ? plen : 400), assignment);
    if (eq == NULL)
        return cfg_fail(root, err, SIM_ESCENARIO, label, "expected PATH=VALUE");
    char *keys = malloc(plen + 1);
    step *steps = calloc(plen + 1, sizeof(*steps));
    if (keys == NULL || steps == NULL) {
        free(keys);
        free(steps);
        return cfg_no_memory(root, err);
    }
    const char *long_index = NULL;
    size_t n = split_path(assignment, plen, keys, steps, plen + 1, &long_index);
    int rc = 0;
    if (n == 0 && long_index != NULL) {
        rc = cfg_fail(root, err, SIM_ESCENARIO, label,
                      "an index of %zu digits, longer than %d (the longest a path takes; no "
                      "array is that long)",
                      strspn(long_index, "0123456789"), INDEX_MAX_DIGITS);
        goto done;
    }
    if (n == 0) {
        rc = cfg_fail(root, err, SIM_ESCENARIO, label,
                      "invalid path (expected keys and [index] joined by dots)");
        goto done;
    }
    char target[PATH_MAX_TEXT];
    bool dollar = plen >= 2 && assignment[0] == '$' && assignment[1] == '.';
    snprintf(target, sizeof(target), "%s%.*s", dollar ? "" : "$.", (int)(plen < 400 ? plen : 400),
             assignment);
    cJSON *value = parse_value(root, eq + 1, label, target, &rc, err);
    /* The value goes in n levels deep (the root and the path's n - 1 containers): a scenario
     * deeper than a file may be was run, and its run.json refused by every reader. */
    size_t depth = value != NULL ? n + json_depth(value) : 0;
    if (depth > CJSON_NESTING_LIMIT) {
        cJSON_Delete(value);
        rc = cfg_fail(root, err, SIM_ESCENARIO, label,
                      "the scenario would be nested %zu levels deep, deeper than %d (the parser's "
                      "limit)",
                      depth, CJSON_NESTING_LIMIT);
    } else if (value != NULL) {
        rc = apply_steps(root, steps, n, value, label, err);
    }
done:
    free(keys);
    free(steps);
    return rc;
}

int sim_cfg_remove(sim_cfg *cfg, const char *key, sim_err *err)
{
    sim_cfg *root = cfg->root;
    if (cfg_get(cfg, key) == NULL)
        return 0;
    cJSON **d = cfg_reserve(root->dead, &root->dead_cap, root->ndead + 1, sizeof(*d));
    if (d == NULL)
        return cfg_no_memory(cfg, err);
    root->dead = d; /* parked as a replaced value is: no node is freed before destroy */
    root->dead[root->ndead++] = cJSON_DetachItemFromObjectCaseSensitive(cfg->node, key);
    return 0;
}

int sim_cfg_set_json(sim_cfg *cfg, const char *key, const char *json, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    int rc = cfg_mark(cfg, key, err);
    if (rc != 0)
        return rc;
    cJSON *item = cJSON_Parse(json);
    if (item == NULL) {
        cfg_key_path(path, sizeof(path), cfg->path, key);
        return cfg_fail(cfg, err, SIM_EINVAL, path, "value is not JSON: %.100s", json);
    }
    if (!cJSON_IsObject(cfg->node)) {
        cJSON_Delete(item);
        return cfg_fail(cfg, err, SIM_EINVAL, cfg->path, "not an object");
    }
    return set_key(cfg->root, cfg->node, key, cfg_get(cfg, key), item) != 0
               ? cfg_no_memory(cfg, err)
               : 0;
}

/* cJSON prints a number with %.15g whenever that reads back within a relative DBL_EPSILON,
 * which drops the last digits of integers beyond 10^15 (seeds) and of some doubles. Such
 * numbers are printed from a copy of the tree in which they are raw text that reads back
 * exactly, so that the resolved scenario loads again to the same values. */
static bool prints_exactly(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return !isfinite(v->valuedouble) || cfg_is_short(v->valuedouble);
    for (const cJSON *c = v->child; c != NULL; c = c->next)
        if (!prints_exactly(c))
            return false;
    return true;
}

static bool make_exact(cJSON *v)
{
    if (cJSON_IsNumber(v) && !prints_exactly(v)) {
        char text[40];
        cfg_fmt_num(text, sizeof(text), v->valuedouble);
        char *raw = cJSON_malloc(strlen(text) + 1);
        if (raw == NULL)
            return false;
        memcpy(raw, text, strlen(text) + 1);
        cJSON_free(v->valuestring); /* an integer's text as written (cfg_keep_integer_texts) */
        v->type = cJSON_Raw | (v->type & cJSON_StringIsConst);
        v->valuestring = raw;
        return true;
    }
    for (cJSON *c = v->child; c != NULL; c = c->next)
        if (!make_exact(c))
            return false;
    return true;
}

char *cfg_print_json(const cJSON *v, bool pretty)
{
    if (prints_exactly(v))
        return pretty ? cJSON_Print(v) : cJSON_PrintUnformatted(v);
    cJSON *copy = cJSON_Duplicate(v, 1);
    char *text = NULL;
    if (copy != NULL && make_exact(copy))
        text = pretty ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    return text;
}

char *sim_cfg_print(const sim_cfg *root, bool pretty)
{
    return cfg_print_json(root->node, pretty);
}

/* ---- Differences ------------------------------------------------------------------------ */

static bool skipped(const char *path, const char *const *skip, size_t nskip)
{
    for (size_t i = 0; i < nskip; i++)
        if (strcmp(path, skip[i]) == 0)
            return true;
    return false;
}

static void add_diff(const char *path, size_t *n, char *out, size_t size, size_t *len)
{
    if (size > 0)
        *len = cfg_put(out, size, *len, "%s%s", *n > 0 ? ", " : "", path);
    (*n)++;
}

/* Whether x and y hold the same JSON value, numbers compared exactly: cJSON_Compare takes two
 * numbers within a relative DBL_EPSILON as equal, so that a check of workload.lr
 * 0.30000000000000004 against a golden of 0.3 (the runs use each exactly) found the
 * scenario the golden's, and `--exact` then a regression. */
static bool same_json(const cJSON *x, const cJSON *y)
{
    if (cJSON_IsNumber(x) || cJSON_IsNumber(y))
        return cJSON_IsNumber(x) && cJSON_IsNumber(y) && x->valuedouble == y->valuedouble;
    if (cJSON_IsArray(x) && cJSON_IsArray(y)) {
        const cJSON *a = x->child, *b = y->child;
        for (; a != NULL && b != NULL; a = a->next, b = b->next)
            if (!same_json(a, b))
                return false;
        return a == NULL && b == NULL;
    }
    if (cJSON_IsObject(x) && cJSON_IsObject(y)) {
        for (const cJSON *a = x->child; a != NULL; a = a->next) {
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(y, a->string);
            if (b == NULL || !same_json(a, b))
                return false;
        }
        for (const cJSON *b = y->child; b != NULL; b = b->next)
            if (cJSON_GetObjectItemCaseSensitive(x, b->string) == NULL)
                return false;
        return true;
    }
    return cJSON_Compare(x, y, true);
}

/* Walks the keys of `a`, then those of `b` missing from `a` (prefix: their parent's path,
 * "" at the root). */
static void diff_objects(const cJSON *a, const cJSON *b, const char *prefix,
                         const char *const *skip, size_t nskip, size_t *n, char *out, size_t size,
                         size_t *len)
{
    char path[PATH_MAX_TEXT];
    for (const cJSON *x = a->child; x != NULL; x = x->next) {
        snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] != '\0' ? "." : "", x->string);
        if (skipped(path, skip, nskip))
            continue;
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
        if (y != NULL && cJSON_IsObject(x) && cJSON_IsObject(y))
            diff_objects(x, y, path, skip, nskip, n, out, size, len);
        else if (y == NULL || !same_json(x, y))
            add_diff(path, n, out, size, len);
    }
    for (const cJSON *y = b->child; y != NULL; y = y->next) {
        snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] != '\0' ? "." : "", y->string);
        if (!skipped(path, skip, nskip) && cJSON_GetObjectItemCaseSensitive(a, y->string) == NULL)
            add_diff(path, n, out, size, len);
    }
}

size_t sim_cfg_diff(const sim_cfg *a, const sim_cfg *b, const char *const *skip, size_t nskip,
                    char *out, size_t size)
{
    size_t n = 0, len = 0;
    if (size > 0)
        out[0] = '\0';
    diff_objects(a->node, b->node, "", skip, nskip, &n, out, size, &len);
    return n;
}
