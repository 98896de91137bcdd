/* The tree behind a scenario's sim_cfg (see sim/cfg.h and sim/cfg_state.h): destroying a
 * root and its children, the table of children keyed by node, the marks of keys read, the
 * reads of an array's elements, and the text of messages (error filling, JSON paths, values
 * as messages show them). Calls nothing of sim/cfg_parse.c (parsing the text into the tree),
 * sim/cfg_read.c or sim/cfg_override.c, which build on it. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cfg.h"
#include "sim/cfg_state.h"
#include "sim/err.h"

/* Grows an array to hold at least `need` elements of `elem` bytes; NULL when out of memory
 * (the old block is then untouched). */
void *cfg_reserve(void *p, size_t *cap, size_t need, size_t elem)
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

char *cfg_copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

/* Fills `err` with the root's file name, `path` and a message. Returns `code`. */
int cfg_fail(const sim_cfg *cfg, sim_err *err, int code, const char *path, const char *fmt, ...)
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

int cfg_no_memory(const sim_cfg *cfg, sim_err *err)
{
    return cfg_fail(cfg, err, SIM_ENOMEM, cfg != NULL ? cfg->path : NULL, "out of memory");
}

/* ---- Paths and value descriptions ---------------------------------------------------- */

/* Appends printf-style text to buf (size > 0 bytes, `len` of them used), truncating.
 * Returns the new length. */
size_t cfg_put(char *buf, size_t size, size_t len, const char *fmt, ...)
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
    len = cfg_put(buf, size, len, "\"");
    for (; i < max && p[i] != '\0'; i++) {
        if (p[i] == '"' || p[i] == '\\')
            len = cfg_put(buf, size, len, "\\%c", p[i]);
        else if (p[i] < 0x20 || p[i] == 0x7f)
            len = cfg_put(buf, size, len, "\\u%04x", p[i]);
        else
            len = cfg_put(buf, size, len, "%c", p[i]);
    }
    return cfg_put(buf, size, len, "%s\"", p[i] != '\0' ? "..." : "");
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
void cfg_key_path(char *buf, size_t size, const char *base, const char *key)
{
    size_t len = cfg_put(buf, size, 0, "%s", base);
    if (is_identifier(key)) {
        cfg_put(buf, size, len, ".%s", key);
    } else {
        len = put_quoted(buf, size, cfg_put(buf, size, len, "["), key, SIZE_MAX);
        cfg_put(buf, size, len, "]");
    }
}

bool cfg_is_short(double v)
{
    char buf[40];
    if (!isfinite(v) || (v != 0 && fabs(v) < DBL_MIN))
        return false;
    snprintf(buf, sizeof(buf), "%.15g", v);
    return strtod(buf, NULL) == v;
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v. */
void cfg_fmt_num(char *buf, size_t size, double v)
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
void cfg_describe(const cJSON *v, char *buf, size_t size)
{
    if (cJSON_IsNumber(v) && v->valuestring != NULL) { /* past 2^53, as written */
        char held[40];
        cfg_fmt_num(held, sizeof(held), v->valuedouble);
        snprintf(buf, size, "%s (past 2^53: a double holds %s)", v->valuestring, held);
    } else if (cJSON_IsNumber(v)) {
        cfg_fmt_num(buf, size, v->valuedouble);
    } else if (cJSON_IsString(v))
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

void cfg_nul_escape_text(char *buf, size_t size, const char *key)
{
    size_t len =
        cfg_put(buf, size, 0, "\\u0000 (NUL) is not allowed in a %s", key ? "key" : "string");
    if (key != NULL)
        cfg_put(buf, size, put_quoted(buf, size, cfg_put(buf, size, len, " ("), key, 40),
                " before it)");
}

/* ---- Nodes, children and marks ------------------------------------------------------ */

cJSON *cfg_get(const sim_cfg *cfg, const char *key)
{
    if (!cJSON_IsObject(cfg->node))
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(cfg->node, key);
}

bool cfg_is_known(const sim_cfg *cfg, const char *key)
{
    for (size_t i = 0; i < cfg->nknown; i++)
        if (strcmp(cfg->known[i], key) == 0)
            return true;
    return false;
}

/* Records `key` as read in this object. */
int cfg_mark(sim_cfg *cfg, const char *key, sim_err *err)
{
    if (cfg_is_known(cfg, key))
        return 0;
    char **k = cfg_reserve(cfg->known, &cfg->known_cap, cfg->nknown + 1, sizeof(*k));
    if (k == NULL)
        return cfg_no_memory(cfg, err);
    cfg->known = k;
    if ((k[cfg->nknown] = cfg_copy_string(key)) == NULL)
        return cfg_no_memory(cfg, err);
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
sim_cfg *cfg_child_for(sim_cfg *parent, cJSON *node, char *path)
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

/* ---- Element reads ------------------------------------------------------------------- */

/* The slot of `array` in a table of (mask + 1) indexes: its own, or the empty one where it
 * goes. */
static cfg_index *index_slot(cfg_index *table, size_t mask, const cJSON *array)
{
    size_t i = slot_of(array, mask);
    while (table[i].array != NULL && table[i].array != array)
        i = (i + 1) & mask;
    return &table[i];
}

/* The index of `array` when one is built, else NULL. */
static const cfg_index *built_index(const sim_cfg *root, const cJSON *array)
{
    if (root->index_mask == 0)
        return NULL;
    const cfg_index *e = index_slot(root->index, root->index_mask, array);
    return e->built ? e : NULL;
}

static int grow_index(sim_cfg *root)
{
    size_t old_size = root->index_mask == 0 ? 0 : root->index_mask + 1;
    size_t size = old_size == 0 ? 16 : 2 * old_size;
    cfg_index *table = size <= SIZE_MAX / sizeof(*table) ? calloc(size, sizeof(*table)) : NULL;
    if (table == NULL)
        return SIM_ENOMEM;
    for (size_t i = 0; i < old_size; i++)
        if (root->index[i].array != NULL)
            *index_slot(table, size - 1, root->index[i].array) = root->index[i];
    free(root->index);
    root->index = table;
    root->index_mask = size - 1;
    return 0;
}

/* Builds the index of `array` (a walk of its list, once): NULL when out of memory, the
 * caller then walking as without one. */
static const cfg_index *build_index(sim_cfg *root, const cJSON *array)
{
    cfg_index *e = root->index_mask != 0 ? index_slot(root->index, root->index_mask, array) : NULL;
    if (e == NULL || e->array == NULL) {
        if (2 * (root->nindex + 1) > root->index_mask && grow_index(root) != 0)
            return NULL;
        e = index_slot(root->index, root->index_mask, array);
        e->array = array;
        root->nindex++;
    }
    size_t n = 0, cap = 0;
    const cJSON **item = NULL;
    for (const cJSON *c = array->child; c != NULL; c = c->next, n++) {
        const cJSON **p = cfg_reserve(item, &cap, n + 1, sizeof(*item));
        if (p == NULL) {
            free(item);
            return NULL;
        }
        item = p;
        item[n] = c;
        root->walked += n > 0; /* the first is the array's child, no link */
    }
    *e = (cfg_index){ array, item, n, true };
    return e;
}

/* Element i of `array`: through its index when it has one; else from the array's cursor when
 * at or before i, or nearer than the start; else from the first element. A read more than
 * CFG_WALK_MAX links from both builds the index (a --set per element in a shuffled order
 * walked up to half the array each). */
const cJSON *cfg_item_at(sim_cfg *root, const cJSON *array, size_t i)
{
    const cfg_index *e = built_index(root, array);
    if (e != NULL)
        return i < e->n ? e->item[i] : NULL;
    cfg_cursor *c = NULL, *oldest = &root->cursor[0];
    for (size_t k = 0; k < CFG_CURSORS && c == NULL; k++) {
        if (root->cursor[k].array == array)
            c = &root->cursor[k];
        else if (root->cursor[k].used < oldest->used)
            oldest = &root->cursor[k];
    }
    const cJSON *it = array->child;
    size_t k = 0;
    if (c != NULL && (c->index <= i || c->index - i < i)) {
        it = c->item;
        k = c->index;
    }
    if ((k > i ? k - i : i - k) > CFG_WALK_MAX && (e = build_index(root, array)) != NULL)
        return i < e->n ? e->item[i] : NULL;
    /* Back from the cursor when nearer than the start (elements set last to first walked
     * from the start each), through cJSON's prev links (the first's is the last: k > i). */
    for (; k > i; k--) {
        it = it->prev;
        root->walked++;
    }
    for (; it != NULL && k < i; k++) {
        it = it->next;
        root->walked++;
    }
    if (it != NULL)
        *(c != NULL ? c : oldest) = (cfg_cursor){ array, it, i, ++root->cursor_clock };
    return it;
}

void cfg_forget_elements(sim_cfg *root, const cJSON *array)
{
    for (size_t k = 0; k < CFG_CURSORS; k++)
        if (root->cursor[k].array == array)
            root->cursor[k] = (cfg_cursor){ 0 };
    if (root->index_mask == 0)
        return;
    cfg_index *e = index_slot(root->index, root->index_mask, array);
    if (e->array == NULL)
        return;
    free(e->item); /* the slot stays, as a later one may have been placed past it */
    *e = (cfg_index){ array, NULL, 0, false };
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
    if (root->index != NULL)
        for (size_t i = 0; i <= root->index_mask; i++)
            free(root->index[i].item);
    free(root->index);
    for (size_t i = 0; i < root->ndead; i++)
        cJSON_Delete(root->dead[i]);
    free(root->dead);
    cJSON_Delete(root->tree);
    free(root->file);
    free_cfg(root);
}
