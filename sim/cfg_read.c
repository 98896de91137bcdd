/* The readers of sim/cfg.h: what a caller asks of one section (typed values with their
 * ranges, children, arrays and their elements, keys, the check for unknown keys, the
 * caller's own errors), on the tree of sim/cfg_tree.c (a number's text checked by
 * sim/cfg_parse.c).
 *
 * Defaults: a reader that finds its key absent writes *out into the tree, unless *out lies
 * outside [lo, hi] (or is NaN). A caller thus marks an optional key that has no default by
 * passing an out-of-range sentinel: the key becomes valid but nothing is written.
 *
 * Open bounds: readers take closed ranges [lo, hi]. For doubles, [nextafter(x, INFINITY),
 * hi] is exactly (x, hi], and messages print it so ("must be a number > 0").
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/cfg.h"
#include "sim/cfg_state.h"
#include "sim/err.h"

#define INT_LIMIT 9007199254740992.0 /* 2^53: larger JSON numbers are not exact integers */

void sim_cfg_num_text(char *buf, size_t size, double v)
{
    cfg_fmt_num(buf, size, v);
}

/* Prints a bound; returns true (and prints x) when the bound is the double next to a short
 * decimal x in the direction `away` from the range, i.e. the bound is open at x. */
static bool fmt_bound(char *buf, size_t size, double v, double away)
{
    double x = nextafter(v, away);
    if (cfg_is_short(x) && !cfg_is_short(v)) {
        cfg_fmt_num(buf, size, x);
        return true;
    }
    cfg_fmt_num(buf, size, v);
    return false;
}

/* " >= 1", " > 0", " in [0, 1)", " <= 5" or "" for the doubles in [lo, hi]. */
static void range_text(char *buf, size_t size, double lo, double hi)
{
    char a[40], b[40];
    bool has_lo = lo > -DBL_MAX, has_hi = hi < DBL_MAX;
    bool open_lo = has_lo && fmt_bound(a, sizeof(a), lo, -INFINITY);
    bool open_hi = has_hi && fmt_bound(b, sizeof(b), hi, INFINITY);
    if (has_lo && has_hi)
        snprintf(buf, size, " in %c%s, %s%c", open_lo ? '(' : '[', a, b, open_hi ? ')' : ']');
    else if (has_lo)
        snprintf(buf, size, " %s %s", open_lo ? ">" : ">=", a);
    else if (has_hi)
        snprintf(buf, size, " %s %s", open_hi ? "<" : "<=", b);
    else
        buf[0] = '\0';
}

/* Checks a JSON number against [lo, hi] (and integrality when asked; lo and hi are then
 * within +-2^53). Returns 0 or fills err for `path`. */
/* The description of a value that is no number in range, into got[size]: a string that is
 * one number JSON refuses (a bare --set value such as 1e-400, too small for a double, which
 * --set takes as the text "1e-400") says why, or "got \"1e-400\"" named no cause. */
static void describe_not_number(const cJSON *v, char *got, size_t size)
{
    cfg_describe(v, got, size);
    size_t n = 0, len = cJSON_IsString(v) ? strlen(v->valuestring) : 0;
    if (len > 0 && cfg_bad_number(v->valuestring, len, &n) == 0 && n == len) {
        size_t used = strlen(got);
        if (used + 3 < size) {
            memcpy(got + used, ": ", 3);
            cfg_bad_number_text(got + used + 2, size - used - 2, v->valuestring, n);
        }
    }
}

static int check_number(const sim_cfg *cfg, const char *path, const cJSON *v, double lo, double hi,
                        bool integer, sim_err *err)
{
    char got[200], range[96];
    /* An integer written past 2^53 that a double rounds (9007199254740993) is no integer: it
     * was taken as 2^53 where the range reaches it (cfg_keep_integer_texts). */
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= lo &&
        v->valuedouble <= hi &&
        (!integer || (floor(v->valuedouble) == v->valuedouble && v->valuestring == NULL)))
        return 0;
    describe_not_number(v, got, sizeof(got));
    if (integer) {
        char a[40], b[40];
        cfg_fmt_num(a, sizeof(a), lo);
        cfg_fmt_num(b, sizeof(b), hi);
        return cfg_fail(cfg, err, SIM_ESCENARIO, path, "must be an integer in [%s, %s], got %s", a,
                        b, got);
    }
    range_text(range, sizeof(range), lo, hi);
    return cfg_fail(cfg, err, SIM_ESCENARIO, path, "must be a number%s, got %s", range, got);
}

const char *sim_cfg_path(const sim_cfg *cfg)
{
    return cfg->path;
}

const char *sim_cfg_file(const sim_cfg *cfg)
{
    return cfg->root->file;
}

bool sim_cfg_has(const sim_cfg *cfg, const char *key)
{
    return cfg_get(cfg, key) != NULL;
}

bool sim_cfg_is_null(sim_cfg *cfg, const char *key)
{
    cfg_mark(cfg, key, NULL); /* out of memory only makes the key "unknown" later */
    return cJSON_IsNull(cfg_get(cfg, key));
}

int sim_cfg_allow(sim_cfg *cfg, const char *key, sim_err *err)
{
    return cfg_mark(cfg, key, err);
}

/* ---- Readers ---------------------------------------------------------------------------- */

/* Marks `key`, then returns its value, or NULL when absent. *rc receives 0 or an error. */
static const cJSON *lookup(sim_cfg *cfg, const char *key, char *path, size_t size, int *rc,
                           sim_err *err)
{
    cfg_key_path(path, size, cfg->path, key);
    *rc = cfg_mark(cfg, key, err);
    return *rc != 0 ? NULL : cfg_get(cfg, key);
}

/* Appends `item` (a default) to this object under `key`. */
static int add_default(sim_cfg *cfg, const char *key, cJSON *item, sim_err *err)
{
    if (item == NULL || !cJSON_AddItemToObject(cfg->node, key, item)) {
        cJSON_Delete(item);
        return cfg_no_memory(cfg, err);
    }
    return 0;
}

int sim_cfg_default_json(sim_cfg *cfg, const char *key, const char *json, sim_err *err)
{
    int rc = cfg_mark(cfg, key, err);
    if (rc != 0 || cfg_get(cfg, key) != NULL)
        return rc;
    cJSON *item = cJSON_Parse(json);
    if (item == NULL) {
        char path[PATH_MAX_TEXT];
        cfg_key_path(path, sizeof(path), cfg->path, key);
        return cfg_fail(cfg, err, SIM_EINVAL, path, "default is not JSON: %s", json);
    }
    return add_default(cfg, key, item, err);
}

int sim_cfg_double(sim_cfg *cfg, const char *key, double lo, double hi, double *out, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    int rc = 0;
    const cJSON *v = lookup(cfg, key, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    if (v == NULL) {
        if (isfinite(*out) && *out >= lo && *out <= hi)
            return add_default(cfg, key, cJSON_CreateNumber(*out), err);
        return 0;
    }
    if ((rc = check_number(cfg, path, v, lo, hi, false, err)) != 0)
        return rc;
    *out = v->valuedouble;
    if (*out == 0.0) { /* -0 is 0: recorded so, the scenario's hash (and a sweep's run) that of 0 */
        cJSON_SetNumberValue(cfg_get(cfg, key), 0.0);
        *out = 0.0;
    }
    return 0;
}

int sim_cfg_int(sim_cfg *cfg, const char *key, int64_t lo, int64_t hi, int64_t *out, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    int rc = 0;
    const cJSON *v = lookup(cfg, key, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    double dlo = (double)lo < -INT_LIMIT ? -INT_LIMIT : (double)lo;
    double dhi = (double)hi > INT_LIMIT ? INT_LIMIT : (double)hi;
    if (v == NULL) {
        if ((double)*out >= dlo && (double)*out <= dhi && *out >= lo && *out <= hi)
            return add_default(cfg, key, cJSON_CreateNumber((double)*out), err);
        return 0;
    }
    if ((rc = check_number(cfg, path, v, dlo, dhi, true, err)) != 0)
        return rc;
    *out = (int64_t)v->valuedouble; /* exact: an integer within +-2^53 */
    if (*out == 0)                  /* -0 is 0: recorded so, the scenario's hash that of 0 */
        cJSON_SetNumberValue(cfg_get(cfg, key), 0.0);
    return 0;
}

int sim_cfg_bool(sim_cfg *cfg, const char *key, bool *out, sim_err *err)
{
    char path[PATH_MAX_TEXT], got[96];
    int rc = 0;
    const cJSON *v = lookup(cfg, key, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    if (v == NULL)
        return add_default(cfg, key, cJSON_CreateBool(*out), err);
    if (!cJSON_IsBool(v)) {
        cfg_describe(v, got, sizeof(got));
        return cfg_fail(cfg, err, SIM_ESCENARIO, path, "must be true or false, got %s", got);
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

int sim_cfg_string(sim_cfg *cfg, const char *key, char *out, size_t size, sim_err *err)
{
    char path[PATH_MAX_TEXT], got[96];
    int rc = 0;
    const cJSON *v = lookup(cfg, key, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    if (v == NULL) {
        if (size > 0 && out[0] != '\0' && memchr(out, '\0', size) != NULL)
            return add_default(cfg, key, cJSON_CreateString(out), err);
        return 0;
    }
    if (!cJSON_IsString(v)) {
        cfg_describe(v, got, sizeof(got));
        return cfg_fail(cfg, err, SIM_ESCENARIO, path, "must be a string, got %s", got);
    }
    size_t len = strlen(v->valuestring);
    if (len == 0)
        return cfg_fail(cfg, err, SIM_ESCENARIO, path, "must not be empty");
    if (len >= size)
        return cfg_fail(cfg, err, SIM_ESCENARIO, path, "must be at most %zu bytes long, got %zu",
                        size > 0 ? size - 1 : 0, len);
    memcpy(out, v->valuestring, len + 1);
    return 0;
}

int sim_cfg_choice(sim_cfg *cfg, const char *key, const char *const *names, size_t n, int *out,
                   sim_err *err)
{
    char path[PATH_MAX_TEXT], got[96], list[200];
    int rc = 0;
    const cJSON *v = lookup(cfg, key, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    if (v == NULL) {
        if (*out >= 0 && (size_t)*out < n)
            return add_default(cfg, key, cJSON_CreateString(names[*out]), err);
        return 0;
    }
    if (cJSON_IsString(v))
        for (size_t i = 0; i < n; i++)
            if (strcmp(v->valuestring, names[i]) == 0) {
                *out = (int)i;
                return 0;
            }
    size_t len = cfg_put(list, sizeof(list), 0, "%s", "");
    for (size_t i = 0; i < n; i++)
        len = cfg_put(list, sizeof(list), len, "%s%s", i > 0 ? ", " : "", names[i]);
    cfg_describe(v, got, sizeof(got));
    return cfg_fail(cfg, err, SIM_ESCENARIO, path, "must be one of %s, got %s", list, got);
}

int sim_cfg_require(const sim_cfg *cfg, const char *key, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    if (cfg_get(cfg, key) != NULL)
        return 0;
    cfg_key_path(path, sizeof(path), cfg->path, key);
    return cfg_fail(cfg, err, SIM_ESCENARIO, path, "missing required key");
}

/* *out, a configuration for the object v found at `path`; refused naming the path when v is
 * not an object. */
static int child_object(sim_cfg *cfg, cJSON *v, const char *path, sim_cfg **out, sim_err *err)
{
    if (!cJSON_IsObject(v)) {
        char got[96];
        cfg_describe(v, got, sizeof(got));
        return cfg_fail(cfg, err, SIM_ESCENARIO, path, "expected an object, got %s", got);
    }
    if ((*out = cfg_child_for(cfg, v, cfg_copy_string(path))) == NULL)
        return cfg_no_memory(cfg, err);
    return 0;
}

int sim_cfg_child(sim_cfg *cfg, const char *key, sim_cfg **out, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    int rc = 0;
    *out = NULL;
    cJSON *v = (cJSON *)lookup(cfg, key, path, sizeof(path), &rc, err);
    if (rc != 0 || v == NULL || cJSON_IsNull(v))
        return rc;
    return child_object(cfg, v, path, out, err);
}

/* The array under `key` (marked), or NULL with *n = 0 when absent; error if not an array. */
static cJSON *get_array(sim_cfg *cfg, const char *key, size_t *n, sim_err *err, int *rc)
{
    char path[PATH_MAX_TEXT], got[96];
    *n = 0;
    cJSON *v = (cJSON *)lookup(cfg, key, path, sizeof(path), rc, err);
    if (*rc != 0 || v == NULL)
        return NULL;
    if (!cJSON_IsArray(v)) {
        cfg_describe(v, got, sizeof(got));
        *rc = cfg_fail(cfg, err, SIM_ESCENARIO, path, "expected an array, got %s", got);
        return NULL;
    }
    for (const cJSON *c = v->child; c != NULL; c = c->next)
        (*n)++;
    return v;
}

int sim_cfg_array_len(sim_cfg *cfg, const char *key, size_t *n, sim_err *err)
{
    int rc = 0;
    get_array(cfg, key, n, err, &rc);
    return rc;
}

/* Element i of the array under `key`, with its path; NULL and *rc set on error. */
static const cJSON *element(sim_cfg *cfg, const char *key, size_t i, char *path, size_t size,
                            int *rc, sim_err *err)
{
    char got[96];
    cfg_key_path(path, size, cfg->path, key);
    *rc = cfg_mark(cfg, key, err);
    if (*rc != 0)
        return NULL;
    const cJSON *array = cfg_get(cfg, key);
    if (!cJSON_IsArray(array)) {
        cfg_describe(array, got, sizeof(got));
        *rc = cfg_fail(cfg, err, SIM_ESCENARIO, path, "expected an array, got %s", got);
        return NULL;
    }
    const cJSON *v = cfg_item_at(cfg->root, array, i);
    if (v == NULL) {
        *rc = cfg_fail(cfg, err, SIM_EINVAL, path, "index %zu is past the end of the array", i);
        return NULL;
    }
    cfg_put(path, size, strlen(path), "[%zu]", i);
    return v;
}

int sim_cfg_at(sim_cfg *cfg, const char *key, size_t i, sim_cfg **out, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    int rc = 0;
    *out = NULL;
    cJSON *v = (cJSON *)element(cfg, key, i, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    return child_object(cfg, v, path, out, err);
}

int sim_cfg_at_double(sim_cfg *cfg, const char *key, size_t i, double lo, double hi, bool integer,
                      double *out, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    int rc = 0;
    const cJSON *v = element(cfg, key, i, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    if (integer) {
        lo = lo < -INT_LIMIT ? -INT_LIMIT : lo;
        hi = hi > INT_LIMIT ? INT_LIMIT : hi;
    }
    if ((rc = check_number(cfg, path, v, lo, hi, integer, err)) != 0)
        return rc;
    *out = v->valuedouble;
    if (*out == 0.0) { /* -0 is 0, as sim_cfg_int and sim_cfg_double record it (cfg's tree) */
        cJSON_SetNumberValue((cJSON *)v, 0.0);
        *out = 0.0;
    }
    return 0;
}

size_t sim_cfg_nkeys(const sim_cfg *cfg)
{
    size_t n = 0;
    if (cJSON_IsObject(cfg->node))
        for (const cJSON *c = cfg->node->child; c != NULL; c = c->next)
            n++;
    return n;
}

const char *sim_cfg_key(const sim_cfg *cfg, size_t i)
{
    if (!cJSON_IsObject(cfg->node))
        return NULL;
    const cJSON *c = cfg->node->child;
    for (; c != NULL && i > 0; c = c->next)
        i--;
    return c != NULL ? c->string : NULL;
}

int sim_cfg_at_json(sim_cfg *cfg, const char *key, size_t i, char **out, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    int rc = 0;
    *out = NULL;
    const cJSON *v = element(cfg, key, i, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    if ((*out = cfg_print_json(v, false)) == NULL)
        return cfg_no_memory(cfg, err);
    return 0;
}

int sim_cfg_json(sim_cfg *cfg, const char *key, char **out, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    int rc = 0;
    *out = NULL;
    const cJSON *v = lookup(cfg, key, path, sizeof(path), &rc, err);
    if (rc != 0 || v == NULL)
        return rc;
    if ((*out = cfg_print_json(v, false)) == NULL)
        return cfg_no_memory(cfg, err);
    return 0;
}

int sim_cfg_check_unused(const sim_cfg *cfg, sim_err *err)
{
    char path[PATH_MAX_TEXT], valid[sizeof(err->msg)];
    if (!cJSON_IsObject(cfg->node))
        return 0;
    for (const cJSON *c = cfg->node->child; c != NULL; c = c->next) {
        if (cfg_is_known(cfg, c->string))
            continue;
        size_t len = cfg_put(valid, sizeof(valid), 0, "%s", cfg->nknown > 0 ? "" : "none");
        for (size_t i = 0; i < cfg->nknown; i++)
            len = cfg_put(valid, sizeof(valid), len, "%s%s", i > 0 ? ", " : "", cfg->known[i]);
        cfg_key_path(path, sizeof(path), cfg->path, c->string);
        return cfg_fail(cfg, err, SIM_ESCENARIO, path, "unknown key (valid: %s)", valid);
    }
    return 0;
}

int sim_cfg_fail(const sim_cfg *cfg, const char *key, sim_err *err, const char *fmt, ...)
{
    char path[PATH_MAX_TEXT], msg[sizeof(err->msg)];
    snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(cfg), key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return sim_err_set(err, SIM_ESCENARIO, path, "%s", msg);
}
