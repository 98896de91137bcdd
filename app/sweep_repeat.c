/* Sweeps: the sweep's repeats (seeds given twice, points sharing a run directory or a run),
 * found in one pass over a hash table, the compact JSON scanning they and the points' names
 * share, and the small helpers of the sweep's four files (see sweep_state.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/sweep_state.h"
#include "outputs/output.h"
#include "scenario/scenario.h"
#include "sim/fnv.h"

int sw_oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* "a/b" into out[size]; a path too long for it is cut (sizes are checked at loading). */
void sw_join(char *out, size_t size, const char *a, const char *b)
{
    if (snprintf(out, size, "%s/%s", a, b) < 0)
        out[0] = '\0';
}

/* A JSON value as plain text: strings lose their quotes. */
void sw_plain_value(const char *json, char *out, size_t size)
{
    size_t len = strlen(json);
    if (len >= 2 && json[0] == '"' && json[len - 1] == '"')
        snprintf(out, size, "%.*s", (int)(len - 2), json + 1);
    else
        snprintf(out, size, "%s", json);
}

sim_cfg *sw_read_json(const char *dir, const char *name)
{
    char path[PATH_TEXT];
    sw_join(path, sizeof(path), dir, name);
    size_t len = 0;
    char *text = sim_output_read_own(path, &len); /* a point's: a FIFO there is no result */
    if (text == NULL)
        return NULL;
    sim_cfg *cfg = sim_cfg_parse(text, len, path, NULL);
    free(text);
    return cfg;
}

/* The end of the compact JSON value (cJSON's unformatted print: no blank outside strings)
 * starting at p. */
const char *sw_json_end(const char *p)
{
    if (*p == '"') {
        for (p++; *p != '\0' && *p != '"'; p++)
            p += *p == '\\' && p[1] != '\0';
        return *p == '"' ? p + 1 : p;
    }
    if (*p != '{' && *p != '[') {
        while (*p != '\0' && *p != ',' && *p != '}' && *p != ']')
            p++;
        return p;
    }
    int depth = 0;
    do {
        if (*p == '"')
            p = sw_json_end(p) - 1;
        depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
        p++;
    } while (*p != '\0' && depth > 0);
    return p;
}

/* The first key i (of n) equal to an earlier key j, with *earlier = j; n if none. Expected
 * time linear in n: an open-addressing table of a power of two >= 2n slots. SIZE_MAX when
 * out of memory. */
size_t sw_first_repeat(const void *keys, size_t n, key_hash_fn hash, key_same_fn same,
                       size_t *earlier)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = calloc(cap, sizeof(*slot)); /* key index + 1, or 0 */
    if (slot == NULL)
        return SIZE_MAX;
    size_t i = 0;
    for (; i < n; i++) {
        size_t at = (size_t)hash(keys, i) & (cap - 1);
        while (slot[at] != 0 && !same(keys, slot[at] - 1, i))
            at = (at + 1) & (cap - 1);
        if (slot[at] != 0) {
            *earlier = slot[at] - 1;
            break;
        }
        slot[at] = i + 1;
    }
    free(slot);
    return i;
}

static uint64_t mix64(uint64_t x) /* SplitMix64's finalizer */
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

uint64_t sw_seed_hash(const void *keys, size_t i)
{
    return mix64(((const uint64_t *)keys)[i]);
}

bool sw_seed_same(const void *keys, size_t i, size_t j)
{
    return ((const uint64_t *)keys)[i] == ((const uint64_t *)keys)[j];
}

uint64_t sw_name_hash(const void *keys, size_t i)
{
    return mix64(sim_fnv_text(SIM_FNV_OFFSET, ((const point *)keys)[i].name));
}

bool sw_name_same(const void *keys, size_t i, size_t j)
{
    return strcmp(((const point *)keys)[i].name, ((const point *)keys)[j].name) == 0;
}

/* The hash of compact JSON text [p, end) with every object's members in any order: an
 * object's members are combined by a sum, which does not depend on their order; arrays and
 * other values in order, as their text (cJSON's compact print writes a number one way). */
static uint64_t canon(const char *p, const char *end)
{
    if (*p != '{' && *p != '[')
        return mix64(sim_fnv_bytes(SIM_FNV_OFFSET, p, (size_t)(end - p)));
    bool object = *p == '{';
    uint64_t sum = 0, h = SIM_FNV_OFFSET;
    for (const char *q = p + 1; q < end - 1;) {
        const char *val = object ? sw_json_end(q) + 1 : q, *vend = sw_json_end(val);
        uint64_t m = canon(val, vend);
        if (object) /* the key's text, then the value: one member */
            m = mix64(canon(q, val - 1) * UINT64_C(31) + m);
        else
            h = mix64(h * UINT64_C(31) + m);
        sum += m;
        q = vend + 1;
    }
    return object ? mix64(sum ^ UINT64_C(0x9e3779b97f4a7c15)) : mix64(h ^ 0x5bd1e995);
}

uint64_t sw_run_hash(const char *json)
{
    return canon(json, json + strlen(json));
}

uint64_t sw_run_key(const void *keys, size_t i)
{
    return ((const point *)keys)[i].run;
}

bool sw_run_same(const void *keys, size_t i, size_t j)
{
    return ((const point *)keys)[i].run == ((const point *)keys)[j].run;
}

uint64_t sw_run_of(sim_cfg *tree)
{
    char *text = sim_scenario_canonical(tree, NULL) == SIM_OK ? sim_cfg_print(tree, false) : NULL;
    uint64_t run = text != NULL ? sw_run_hash(text) : 0;
    free(text);
    return run;
}

bool sw_run_is(sim_cfg *run, const point *p)
{
    char hash[32], want[32];
    snprintf(want, sizeof(want), "%016" PRIx64, p->hash);
    if (run == NULL)
        return false;
    if (sim_cfg_string(run, "scenario_hash", hash, sizeof(hash), NULL) == 0 &&
        strcmp(hash, want) == 0)
        return true;
    sim_cfg *sc = NULL;
    return p->run != 0 && sim_cfg_child(run, "scenario", &sc, NULL) == 0 && sc != NULL &&
           sw_run_of(sc) == p->run;
}
