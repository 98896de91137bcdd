/* Strict, path-aware access to a scenario's JSON tree (see cfg.h).
 *
 * A root sim_cfg owns the cJSON document, the children it hands out (kept in a table keyed
 * by node, so that asking twice for the same object gives the same sim_cfg and its marks),
 * and the old contents of values replaced by overrides (kept until destroy, so a child never
 * points into freed memory). Each sim_cfg records the keys read or defaulted in its object;
 * sim_cfg_check_unused rejects the others.
 *
 * Defaults: a reader that finds its key absent writes *out into the tree, unless *out lies
 * outside [lo, hi] (or is NaN). A caller thus marks an optional key that has no default by
 * passing an out-of-range sentinel: the key becomes valid but nothing is written.
 *
 * Open bounds: readers take closed ranges [lo, hi]. For doubles, [nextafter(x, INFINITY),
 * hi] is exactly (x, hi], and messages print it so ("must be a number > 0").
 */
#include "sim/cfg.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/err.h"

#define INT_LIMIT     9007199254740992.0 /* 2^53: larger JSON numbers are not exact integers */
#define PATH_MAX_TEXT 512                /* paths in messages are truncated to this */

struct sim_cfg {
    cJSON *node;   /* this object; borrowed from the root's tree */
    char *path;    /* "$", "$.network", "$.stragglers[2]"; owned */
    sim_cfg *root; /* the root (itself for the root) */
    char **known;  /* (nknown) keys read or defaulted here, in that order; owned */
    size_t nknown, known_cap;
    /* Root only. */
    cJSON *tree;             /* the document; owned */
    char *file;              /* owned */
    sim_cfg **kids;          /* (kids_mask + 1) open-addressing table keyed by node */
    size_t kids_mask, nkids; /* table size - 1 (0: no table yet), children in it */
    cJSON **dead;            /* (ndead) replaced contents, deleted at destroy */
    size_t ndead, dead_cap;  /* */
    const cJSON *cur_array;  /* array cursor: makes sequential element reads O(1) */
    const cJSON *cur_item;   /* element cur_index of cur_array */
    size_t cur_index;        /* */
};

/* Grows an array to hold at least `need` elements of `elem` bytes; NULL when out of memory
 * (the old block is then untouched). */
static void *reserve(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t c = *cap != 0 ? *cap : 8;
    while (c < need)
        c *= 2;
    if (c > SIZE_MAX / elem)
        return NULL;
    void *q = realloc(p, c * elem);
    if (q != NULL)
        *cap = c;
    return q;
}

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

/* Fills `err` with the root's file name, `path` and a message. Returns `code`. */
__attribute__((format(printf, 5, 6))) static int fail(const sim_cfg *cfg, sim_err *err, int code,
                                                      const char *path, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    char msg[sizeof(err->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sim_err_set(err, code, path, "%s", msg);
    const char *file = cfg != NULL ? cfg->root->file : NULL;
    snprintf(err->file, sizeof(err->file), "%s", file != NULL ? file : "");
    return code;
}

static int no_memory(const sim_cfg *cfg, sim_err *err)
{
    return fail(cfg, err, SIM_ENOMEM, cfg != NULL ? cfg->path : NULL, "out of memory");
}

/* ---- Paths and value descriptions ---------------------------------------------------- */

/* Appends printf-style text to buf (size > 0 bytes, `len` of them used), truncating.
 * Returns the new length. */
__attribute__((format(printf, 4, 5))) static size_t put(char *buf, size_t size, size_t len,
                                                        const char *fmt, ...)
{
    if (len + 1 >= size)
        return len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return len;
    return len + (size_t)n < size ? len + (size_t)n : size - 1;
}

/* Appends s (at most `max` bytes of it) as a quoted, escaped JSON-like string. */
static size_t put_quoted(char *buf, size_t size, size_t len, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    len = put(buf, size, len, "\"");
    for (; i < max && p[i] != '\0'; i++) {
        if (p[i] == '"' || p[i] == '\\')
            len = put(buf, size, len, "\\%c", p[i]);
        else if (p[i] < 0x20 || p[i] == 0x7f)
            len = put(buf, size, len, "\\u%04x", p[i]);
        else
            len = put(buf, size, len, "%c", p[i]);
    }
    return put(buf, size, len, "%s\"", p[i] != '\0' ? "..." : "");
}

static bool is_identifier(const char *key)
{
    for (const char *p = key; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
              (p != key && *p >= '0' && *p <= '9')))
            return false;
    return *key != '\0';
}

/* Writes base + ".key" (or base + ["key"] for a key that is not an identifier). */
static void key_path(char *buf, size_t size, const char *base, const char *key)
{
    size_t len = put(buf, size, 0, "%s", base);
    if (is_identifier(key)) {
        put(buf, size, len, ".%s", key);
    } else {
        len = put_quoted(buf, size, put(buf, size, len, "["), key, SIZE_MAX);
        put(buf, size, len, "]");
    }
}

static bool is_short(double v)
{
    char buf[40];
    if (!isfinite(v) || (v != 0 && fabs(v) < DBL_MIN))
        return false;
    snprintf(buf, sizeof(buf), "%.15g", v);
    return strtod(buf, NULL) == v;
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v. */
static void fmt_num(char *buf, size_t size, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, size, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* A value as messages show it after "got": 2.5, "ring", true, null, array, object. */
static void describe(const cJSON *v, char *buf, size_t size)
{
    if (cJSON_IsNumber(v))
        fmt_num(buf, size, v->valuedouble);
    else if (cJSON_IsString(v))
        put_quoted(buf, size, 0, v->valuestring, 40);
    else
        snprintf(buf, size, "%s",
                 cJSON_IsTrue(v)     ? "true"
                 : cJSON_IsFalse(v)  ? "false"
                 : cJSON_IsNull(v)   ? "null"
                 : cJSON_IsArray(v)  ? "array"
                 : cJSON_IsObject(v) ? "object"
                                     : "nothing");
}

/* Prints a bound; returns true (and prints x) when the bound is the double next to a short
 * decimal x in the direction `away` from the range, i.e. the bound is open at x. */
static bool fmt_bound(char *buf, size_t size, double v, double away)
{
    double x = nextafter(v, away);
    if (is_short(x) && !is_short(v)) {
        fmt_num(buf, size, x);
        return true;
    }
    fmt_num(buf, size, v);
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
static int check_number(const sim_cfg *cfg, const char *path, const cJSON *v, double lo, double hi,
                        bool integer, sim_err *err)
{
    char got[96], range[96];
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= lo &&
        v->valuedouble <= hi && (!integer || floor(v->valuedouble) == v->valuedouble))
        return 0;
    describe(v, got, sizeof(got));
    if (integer) {
        char a[40], b[40];
        fmt_num(a, sizeof(a), lo);
        fmt_num(b, sizeof(b), hi);
        return fail(cfg, err, SIM_ESCENARIO, path, "must be an integer in [%s, %s], got %s", a, b,
                    got);
    }
    range_text(range, sizeof(range), lo, hi);
    return fail(cfg, err, SIM_ESCENARIO, path, "must be a number%s, got %s", range, got);
}

/* ---- Nodes, children and marks ------------------------------------------------------ */

static cJSON *get(const sim_cfg *cfg, const char *key)
{
    if (!cJSON_IsObject(cfg->node))
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(cfg->node, key);
}

static bool is_known(const sim_cfg *cfg, const char *key)
{
    for (size_t i = 0; i < cfg->nknown; i++)
        if (strcmp(cfg->known[i], key) == 0)
            return true;
    return false;
}

/* Records `key` as read in this object. */
static int mark(sim_cfg *cfg, const char *key, sim_err *err)
{
    if (is_known(cfg, key))
        return 0;
    char **k = reserve(cfg->known, &cfg->known_cap, cfg->nknown + 1, sizeof(*k));
    if (k == NULL)
        return no_memory(cfg, err);
    cfg->known = k;
    if ((k[cfg->nknown] = copy_string(key)) == NULL)
        return no_memory(cfg, err);
    cfg->nknown++;
    return 0;
}

static size_t slot_of(const void *node, size_t mask)
{
    uint64_t h = (uint64_t)(uintptr_t)node * UINT64_C(0x9e3779b97f4a7c15);
    return (size_t)(h >> 24) & mask;
}

static sim_cfg **find_slot(sim_cfg *root, const cJSON *node)
{
    size_t i = slot_of(node, root->kids_mask);
    while (root->kids[i] != NULL && root->kids[i]->node != node)
        i = (i + 1) & root->kids_mask;
    return &root->kids[i];
}

static int grow_kids(sim_cfg *root)
{
    size_t size = root->kids_mask == 0 ? 16 : 2 * (root->kids_mask + 1);
    sim_cfg **old = root->kids;
    size_t old_size = root->kids_mask == 0 ? 0 : root->kids_mask + 1;
    if (size > SIZE_MAX / sizeof(*old))
        return SIM_ENOMEM;
    root->kids = calloc(size, sizeof(*root->kids));
    if (root->kids == NULL) {
        root->kids = old;
        return SIM_ENOMEM;
    }
    root->kids_mask = size - 1;
    for (size_t i = 0; i < old_size; i++)
        if (old[i] != NULL)
            *find_slot(root, old[i]->node) = old[i];
    free(old);
    return 0;
}

static void free_cfg(sim_cfg *cfg)
{
    for (size_t i = 0; i < cfg->nknown; i++)
        free(cfg->known[i]);
    free(cfg->known);
    free(cfg->path);
    free(cfg);
}

/* The child cfg for object `node`, created on first use with path `path` (which it takes
 * over; it is freed when the child already exists). NULL when out of memory. */
static sim_cfg *child_for(sim_cfg *parent, cJSON *node, char *path)
{
    sim_cfg *root = parent->root;
    if (path == NULL)
        return NULL;
    if (2 * (root->nkids + 1) > root->kids_mask && grow_kids(root) != 0) {
        free(path);
        return NULL;
    }
    sim_cfg **slot = find_slot(root, node);
    if (*slot != NULL) {
        free(path);
        return *slot;
    }
    sim_cfg *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        free(path);
        return NULL;
    }
    c->node = node;
    c->path = path;
    c->root = root;
    *slot = c;
    root->nkids++;
    return c;
}

/* Element i of `array`, O(1) when elements are read in order. */
static const cJSON *item_at(sim_cfg *root, const cJSON *array, size_t i)
{
    const cJSON *it = NULL;
    size_t k = 0;
    if (root->cur_array == array && root->cur_item != NULL && root->cur_index <= i) {
        it = root->cur_item;
        k = root->cur_index;
    } else {
        it = array->child;
    }
    for (; it != NULL && k < i; k++)
        it = it->next;
    if (it != NULL) {
        root->cur_array = array;
        root->cur_item = it;
        root->cur_index = i;
    }
    return it;
}

/* ---- Parsing ---------------------------------------------------------------------------- */

/* True when the text ends inside a string or an open object or array, or holds nothing. */
static bool is_truncated(const char *s, size_t len)
{
    size_t depth = 0;
    bool in_string = false, any = false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && depth > 0)
            depth--;
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            any = true;
    }
    return in_string || depth > 0 || !any;
}

/* cJSON reports a key that does not start with '"' one character late, and a few errors at
 * the end of the text: point at the offending character instead. */
static size_t fix_position(const char *s, size_t len, size_t pos)
{
    if (pos > len)
        pos = len;
    if (pos > 0 && s[pos - 1] != '"' && (unsigned char)s[pos - 1] > ' ') {
        size_t k = pos - 1;
        while (k > 0 && (unsigned char)s[k - 1] <= ' ')
            k--;
        if (k > 0 && (s[k - 1] == '{' || s[k - 1] == ','))
            return pos - 1; /* a key was expected at pos - 1 */
    }
    while (pos >= len && pos > 0 && (unsigned char)s[pos - 1] <= ' ')
        pos--;
    return pos >= len && pos > 0 ? pos - 1 : pos;
}

static int syntax_error(const sim_cfg *root, const char *text, size_t len, size_t pos,
                        const char *what, sim_err *err)
{
    size_t line = 1, col = 1;
    if (pos > len)
        pos = len;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return fail(root, err, SIM_ESCENARIO, NULL, "line %zu, column %zu: %s", line, col, what);
}

/* One level of the path from the root down to a node, for duplicate-key messages. */
typedef struct frame {
    const struct frame *up;
    const char *key; /* NULL for an array element */
    size_t index;
} frame;

static void frame_path(char *buf, size_t size, const char *base, const frame *f)
{
    char up[PATH_MAX_TEXT];
    if (f == NULL) {
        snprintf(buf, size, "%s", base);
        return;
    }
    frame_path(up, sizeof(up), base, f->up);
    if (f->key != NULL)
        key_path(buf, size, up, f->key);
    else
        put(buf, size, put(buf, size, 0, "%s", up), "[%zu]", f->index);
}

typedef struct key_ref {
    const char *key;
    size_t index;
} key_ref;

static int cmp_key_ref(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c != 0)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The index of the first child of object `node` whose key repeats an earlier one, or the
 * number of children when none does; SIZE_MAX when out of memory. Sorting keeps objects
 * with many keys from costing O(n^2). */
static size_t first_duplicate(const cJSON *node)
{
    size_t n = 0, i = 0;
    for (const cJSON *c = node->child; c != NULL; c = c->next)
        n++;
    key_ref *refs = calloc(n > 0 ? n : 1, sizeof(*refs));
    if (refs == NULL)
        return SIZE_MAX;
    for (const cJSON *c = node->child; c != NULL; c = c->next, i++)
        refs[i] = (key_ref){ c->string, i };
    qsort(refs, n, sizeof(*refs), cmp_key_ref);
    size_t first = n;
    for (i = 1; i < n; i++)
        if (strcmp(refs[i].key, refs[i - 1].key) == 0 && refs[i].index < first)
            first = refs[i].index;
    free(refs);
    return first;
}

/* Finds the first duplicate key in document order below `node` and writes its path.
 * Returns 1 if found, 0 if not, or SIM_ENOMEM. */
static int find_duplicate(const cJSON *node, const frame *f, const char *base, char *path,
                          size_t size)
{
    bool object = cJSON_IsObject(node);
    if (!object && !cJSON_IsArray(node))
        return 0;
    size_t dup = object ? first_duplicate(node) : SIZE_MAX - 1;
    if (dup == SIZE_MAX)
        return SIM_ENOMEM;
    size_t i = 0;
    const cJSON *c = node->child;
    for (; c != NULL && i < dup; c = c->next, i++) {
        frame here = { f, object ? c->string : NULL, i };
        int rc = find_duplicate(c, &here, base, path, size);
        if (rc != 0)
            return rc;
    }
    if (c == NULL)
        return 0;
    frame here = { f, c->string, dup };
    frame_path(path, size, base, &here);
    return 1;
}

sim_cfg *sim_cfg_parse(const char *text, size_t len, const char *file, sim_err *err)
{
    sim_cfg *root = calloc(1, sizeof(*root));
    if (root == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        sim_err_file(err, file);
        return NULL;
    }
    root->root = root;
    root->file = copy_string(file != NULL ? file : "");
    root->path = copy_string("$");
    char *buf = len < SIZE_MAX ? malloc(len + 1) : NULL;
    if (root->file == NULL || root->path == NULL || buf == NULL) {
        free(buf);
        no_memory(root, err);
        sim_err_file(err, file);
        goto fail_root;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    const char *nul = memchr(buf, '\0', len);
    if (nul != NULL) {
        syntax_error(root, buf, len, (size_t)(nul - buf), "unexpected NUL byte", err);
        free(buf);
        goto fail_root;
    }
    const char *end = NULL;
    root->tree = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
    if (root->tree == NULL) {
        bool eof = is_truncated(buf, len);
        size_t pos = eof || end == NULL ? len : (size_t)(end - buf);
        if (!eof)
            pos = fix_position(buf, len, pos);
        syntax_error(root, buf, len, pos, eof ? "unexpected end of file" : "invalid JSON", err);
        free(buf);
        goto fail_root;
    }
    free(buf);
    root->node = root->tree;
    if (!cJSON_IsObject(root->tree)) {
        char got[96];
        describe(root->tree, got, sizeof(got));
        fail(root, err, SIM_ESCENARIO, "$", "expected an object, got %s", got);
        goto fail_root;
    }
    char path[PATH_MAX_TEXT];
    int rc = find_duplicate(root->tree, NULL, "$", path, sizeof(path));
    if (rc == SIM_ENOMEM) {
        no_memory(root, err);
        goto fail_root;
    }
    if (rc == 1) {
        fail(root, err, SIM_ESCENARIO, path, "duplicate key");
        goto fail_root;
    }
    return root;
fail_root:
    sim_cfg_destroy(root);
    return NULL;
}

void sim_cfg_destroy(sim_cfg *cfg)
{
    if (cfg == NULL || cfg->root != cfg)
        return; /* children live as long as their root */
    sim_cfg *root = cfg;
    if (root->kids != NULL)
        for (size_t i = 0; i <= root->kids_mask; i++)
            if (root->kids[i] != NULL)
                free_cfg(root->kids[i]);
    free(root->kids);
    for (size_t i = 0; i < root->ndead; i++)
        cJSON_Delete(root->dead[i]);
    free(root->dead);
    cJSON_Delete(root->tree);
    free(root->file);
    free_cfg(root);
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
    return get(cfg, key) != NULL;
}

bool sim_cfg_is_null(sim_cfg *cfg, const char *key)
{
    mark(cfg, key, NULL); /* out of memory only makes the key "unknown" later */
    return cJSON_IsNull(get(cfg, key));
}

/* ---- Readers ---------------------------------------------------------------------------- */

/* Marks `key`, then returns its value, or NULL when absent. *rc receives 0 or an error. */
static const cJSON *lookup(sim_cfg *cfg, const char *key, char *path, size_t size, int *rc,
                           sim_err *err)
{
    key_path(path, size, cfg->path, key);
    *rc = mark(cfg, key, err);
    return *rc != 0 ? NULL : get(cfg, key);
}

/* Appends `item` (a default) to this object under `key`. */
static int add_default(sim_cfg *cfg, const char *key, cJSON *item, sim_err *err)
{
    if (item == NULL || !cJSON_AddItemToObject(cfg->node, key, item)) {
        cJSON_Delete(item);
        return no_memory(cfg, err);
    }
    return 0;
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
        describe(v, got, sizeof(got));
        return fail(cfg, err, SIM_ESCENARIO, path, "must be true or false, got %s", got);
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
        describe(v, got, sizeof(got));
        return fail(cfg, err, SIM_ESCENARIO, path, "must be a string, got %s", got);
    }
    size_t len = strlen(v->valuestring);
    if (len == 0)
        return fail(cfg, err, SIM_ESCENARIO, path, "must not be empty");
    if (len >= size)
        return fail(cfg, err, SIM_ESCENARIO, path, "must be at most %zu characters long, got %zu",
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
    size_t len = put(list, sizeof(list), 0, "%s", "");
    for (size_t i = 0; i < n; i++)
        len = put(list, sizeof(list), len, "%s%s", i > 0 ? ", " : "", names[i]);
    describe(v, got, sizeof(got));
    return fail(cfg, err, SIM_ESCENARIO, path, "must be one of %s, got %s", list, got);
}

int sim_cfg_require(const sim_cfg *cfg, const char *key, sim_err *err)
{
    char path[PATH_MAX_TEXT];
    if (get(cfg, key) != NULL)
        return 0;
    key_path(path, sizeof(path), cfg->path, key);
    return fail(cfg, err, SIM_ESCENARIO, path, "missing required key");
}

int sim_cfg_child(sim_cfg *cfg, const char *key, sim_cfg **out, sim_err *err)
{
    char path[PATH_MAX_TEXT], got[96];
    int rc = 0;
    *out = NULL;
    cJSON *v = (cJSON *)lookup(cfg, key, path, sizeof(path), &rc, err);
    if (rc != 0 || v == NULL || cJSON_IsNull(v))
        return rc;
    if (!cJSON_IsObject(v)) {
        describe(v, got, sizeof(got));
        return fail(cfg, err, SIM_ESCENARIO, path, "expected an object, got %s", got);
    }
    if ((*out = child_for(cfg, v, copy_string(path))) == NULL)
        return no_memory(cfg, err);
    return 0;
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
        describe(v, got, sizeof(got));
        *rc = fail(cfg, err, SIM_ESCENARIO, path, "expected an array, got %s", got);
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
    key_path(path, size, cfg->path, key);
    *rc = mark(cfg, key, err);
    if (*rc != 0)
        return NULL;
    const cJSON *array = get(cfg, key);
    if (!cJSON_IsArray(array)) {
        describe(array, got, sizeof(got));
        *rc = fail(cfg, err, SIM_ESCENARIO, path, "expected an array, got %s", got);
        return NULL;
    }
    const cJSON *v = item_at(cfg->root, array, i);
    if (v == NULL) {
        *rc = fail(cfg, err, SIM_EINVAL, path, "index %zu is past the end of the array", i);
        return NULL;
    }
    put(path, size, strlen(path), "[%zu]", i);
    return v;
}

int sim_cfg_at(sim_cfg *cfg, const char *key, size_t i, sim_cfg **out, sim_err *err)
{
    char path[PATH_MAX_TEXT], got[96];
    int rc = 0;
    *out = NULL;
    cJSON *v = (cJSON *)element(cfg, key, i, path, sizeof(path), &rc, err);
    if (rc != 0)
        return rc;
    if (!cJSON_IsObject(v)) {
        describe(v, got, sizeof(got));
        return fail(cfg, err, SIM_ESCENARIO, path, "expected an object, got %s", got);
    }
    if ((*out = child_for(cfg, v, copy_string(path))) == NULL)
        return no_memory(cfg, err);
    return 0;
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
    if ((*out = cJSON_PrintUnformatted(v)) == NULL)
        return no_memory(cfg, err);
    return 0;
}

int sim_cfg_check_unused(const sim_cfg *cfg, sim_err *err)
{
    char path[PATH_MAX_TEXT], valid[sizeof(err->msg)];
    if (!cJSON_IsObject(cfg->node))
        return 0;
    for (const cJSON *c = cfg->node->child; c != NULL; c = c->next) {
        if (is_known(cfg, c->string))
            continue;
        size_t len = put(valid, sizeof(valid), 0, "%s", cfg->nknown > 0 ? "" : "none");
        for (size_t i = 0; i < cfg->nknown; i++)
            len = put(valid, sizeof(valid), len, "%s%s", i > 0 ? ", " : "", cfg->known[i]);
        key_path(path, sizeof(path), cfg->path, c->string);
        return fail(cfg, err, SIM_ESCENARIO, path, "unknown key (valid: %s)", valid);
    }
    return 0;
}

/* ---- Overrides -------------------------------------------------------------------------- */

/* Gives `node` the content of `value` in place (node keeps its key and position, so child
 * cfgs pointing at it stay valid); the old content is kept in `value` and parked on the
 * root until destroy. */
static int replace_content(sim_cfg *root, cJSON *node, cJSON *value)
{
    cJSON **d = reserve(root->dead, &root->dead_cap, root->ndead + 1, sizeof(*d));
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
    root->cur_array = NULL;
    root->cur_item = NULL;
    return 0;
}

/* Parses VALUE: JSON when it parses, else a bare string. Text that starts like a JSON
 * object, array or string must parse. NULL with *rc set on error. */
static cJSON *parse_value(const sim_cfg *root, const char *text, const char *label,
                          const char *target, int *rc, sim_err *err)
{
    size_t len = strlen(text);
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (v == NULL) {
        const char *p = text;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '{' || *p == '[' || *p == '"') {
            size_t col = end != NULL && end >= text ? (size_t)(end - text) + 1 : 1;
            *rc = fail(root, err, SIM_ESCENARIO, label, "invalid JSON value at column %zu", col);
            return NULL;
        }
        if ((v = cJSON_CreateString(text)) == NULL)
            *rc = no_memory(root, err);
        return v;
    }
    char path[PATH_MAX_TEXT];
    int found = find_duplicate(v, NULL, target, path, sizeof(path));
    if (found != 0) {
        cJSON_Delete(v);
        *rc = found == 1
                  ? fail(root, err, SIM_ESCENARIO, label, "duplicate key %s in the value", path)
                  : no_memory(root, err);
        return NULL;
    }
    return v;
}

/* One step of an override path: a key, or an index when key is NULL. */
typedef struct step {
    char *key;
    size_t index;
} step;

/* Splits "a.b[2].c" into steps (keys are copied into `keys`, a buffer as long as the
 * path). Returns the number of steps, or 0 for a malformed path. */
static size_t split_path(const char *p, size_t len, char *keys, step *steps, size_t max)
{
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
            for (i++; i < len && p[i] >= '0' && p[i] <= '9'; i++, digits++) {
                if (idx > (SIZE_MAX - 9) / 10)
                    return 0;
                idx = idx * 10 + (size_t)(p[i] - '0');
            }
            if (digits == 0 || i >= len || p[i] != ']')
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
            rc = fail(root, err, SIM_ESCENARIO, label, "%s is %s, not %s", path, type_name(cur),
                      key != NULL ? "an object" : "an array");
            break;
        }
        if (key != NULL) {
            key_path(here, sizeof(here), path, key);
            next = cJSON_GetObjectItemCaseSensitive(cur, key);
            if (last) {
                rc = set_key(root, cur, key, next, value) != 0 ? no_memory(root, err) : 0;
                value = NULL;
            } else if ((next == NULL || cJSON_IsNull(next)) && steps[s + 1].key == NULL) {
                rc = fail(root, err, SIM_ESCENARIO, label, "%s is %s, cannot index it", here,
                          next == NULL ? "absent" : "null");
            } else if (next == NULL || cJSON_IsNull(next)) {
                /* A missing intermediate object. */
                if (set_key(root, cur, key, next, cJSON_CreateObject()) != 0)
                    rc = no_memory(root, err);
                next = cJSON_GetObjectItemCaseSensitive(cur, key);
            }
        } else {
            size_t len = 0;
            for (const cJSON *c = cur->child; c != NULL; c = c->next)
                len++;
            if (steps[s].index >= len) {
                rc =
                    fail(root, err, SIM_ESCENARIO, label,
                         "index %zu is past the end of %s (length %zu)", steps[s].index, path, len);
                break;
            }
            next = cur->child;
            for (size_t k = 0; k < steps[s].index; k++)
                next = next->next;
            put(here, sizeof(here), put(here, sizeof(here), 0, "%s", path), "[%zu]",
                steps[s].index);
            if (last) {
                if (replace_content(root, next, value) != 0)
                    rc = no_memory(root, err);
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

int sim_cfg_override(sim_cfg *root, const char *assignment, sim_err *err)
{
    char label[PATH_MAX_TEXT];
    root = root->root;
    const char *eq = strchr(assignment, '=');
    size_t plen = eq != NULL ? (size_t)(eq - assignment) : strlen(assignment);
    snprintf(label, sizeof(label), "--set %.*s", (int)(plen < 400 ? plen : 400), assignment);
    if (eq == NULL)
        return fail(root, err, SIM_ESCENARIO, label, "expected PATH=VALUE");
    char *keys = malloc(plen + 1);
    step *steps = calloc(plen + 1, sizeof(*steps));
    if (keys == NULL || steps == NULL) {
        free(keys);
        free(steps);
        return no_memory(root, err);
    }
    size_t n = split_path(assignment, plen, keys, steps, plen + 1);
    int rc = 0;
    if (n == 0) {
        rc = fail(root, err, SIM_ESCENARIO, label,
                  "invalid path (expected keys and [index] joined by dots)");
        goto done;
    }
    char target[PATH_MAX_TEXT];
    bool dollar = plen >= 2 && assignment[0] == '$' && assignment[1] == '.';
    snprintf(target, sizeof(target), "%s%.*s", dollar ? "" : "$.", (int)(plen < 400 ? plen : 400),
             assignment);
    cJSON *value = parse_value(root, eq + 1, label, target, &rc, err);
    if (value != NULL)
        rc = apply_steps(root, steps, n, value, label, err);
done:
    free(keys);
    free(steps);
    return rc;
}

/* cJSON prints a number with %.15g whenever that reads back within a relative DBL_EPSILON,
 * which drops the last digits of integers beyond 10^15 (seeds) and of some doubles. Such
 * numbers are printed from a copy of the tree in which they are raw text that reads back
 * exactly, so that the resolved scenario loads again to the same values. */
static bool prints_exactly(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return !isfinite(v->valuedouble) || is_short(v->valuedouble);
    for (const cJSON *c = v->child; c != NULL; c = c->next)
        if (!prints_exactly(c))
            return false;
    return true;
}

static bool make_exact(cJSON *v)
{
    if (cJSON_IsNumber(v) && !prints_exactly(v)) {
        char text[40];
        fmt_num(text, sizeof(text), v->valuedouble);
        char *raw = cJSON_malloc(strlen(text) + 1);
        if (raw == NULL)
            return false;
        memcpy(raw, text, strlen(text) + 1);
        v->type = cJSON_Raw | (v->type & cJSON_StringIsConst);
        v->valuestring = raw;
        return true;
    }
    for (cJSON *c = v->child; c != NULL; c = c->next)
        if (!make_exact(c))
            return false;
    return true;
}

char *sim_cfg_print(const sim_cfg *root, bool pretty)
{
    if (prints_exactly(root->node))
        return pretty ? cJSON_Print(root->node) : cJSON_PrintUnformatted(root->node);
    cJSON *copy = cJSON_Duplicate(root->node, 1);
    char *text = NULL;
    if (copy != NULL && make_exact(copy))
        text = pretty ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    return text;
}

int sim_cfg_fail(const sim_cfg *cfg, const char *key, sim_err *err, const char *fmt, ...)
{
    char path[sizeof(err->path)], msg[sizeof(err->msg)];
    snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(cfg), key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return sim_err_set(err, SIM_ESCENARIO, path, "%s", msg);
}
