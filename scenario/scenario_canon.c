/* The canonical form of a resolved scenario (see scenario.h, sim_scenario_canonical): the one
 * place that says which spellings of a scenario are one run. A golden's check and a sweep's
 * points and resume compare scenarios in this form; run.json and scenario_hash keep the
 * scenario as it was written, so that no golden's fingerprint moves.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/err.h"

#define CANON_PATH_MAX 4096
#define CANON_GROUP    128 /* a device group as written: {"device": "NAME", "count": K}, */

/* `text`, a path as a scenario gives it, spelt plainly into out[size]: no "." component, no
 * empty one (a doubled or trailing '/'), and "x/.." folded away where x is a name ("a/../p.csv"
 * is "p.csv"; ".." that climbs out of the scenario's folder stays). The folding reads the text
 * alone, not the file system. false when it does not fit. */
static bool plain_path(const char *text, char *out, size_t size)
{
    bool absolute = text[0] == '/';
    size_t len = 0, kept = 0; /* kept: the names after the leading ".." ones */
    for (const char *p = text; *p != '\0';) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        bool dot = n == 1 && p[0] == '.', up = n == 2 && p[0] == '.' && p[1] == '.';
        if (n == 0 || dot) {
            p += n;
            continue;
        }
        if (up && kept > 0) { /* drops the last name */
            while (len > 0 && out[len - 1] != '/')
                len--;
            len -= len > 0;
            kept--;
        } else if (!(up && absolute)) { /* "/.." is "/" */
            if (len + n + 2 > size)
                return false;
            if (len > 0)
                out[len++] = '/';
            memcpy(out + len, p, n);
            len += n;
            kept += !up;
        }
        p += n;
    }
    if (absolute) {
        if (len + 2 > size)
            return false;
        memmove(out + 1, out, len);
        out[0] = '/';
        len++;
    } else if (len == 0) {
        out[len++] = '.';
    }
    out[len] = '\0';
    return true;
}

/* `key` of `c`, a string naming a file, set to its plain spelling (plain_path); `keep_slash`:
 * a spelling that lost its '/' keeps "./" (a compute.profile without one is a shipped
 * profile's name, unless it ends in ".csv"). */
static int plain_key(sim_cfg *c, const char *key, bool keep_slash, sim_err *err)
{
    /* json: each byte of the path at most 6 (\u0001), in quotes */
    char text[CANON_PATH_MAX], plain[CANON_PATH_MAX], json[6 * CANON_PATH_MAX + 8];
    if (c == NULL || !sim_cfg_has(c, key) ||
        sim_cfg_string(c, key, text, sizeof(text), NULL) != SIM_OK ||
        !plain_path(text, plain, sizeof(plain)))
        return SIM_OK; /* no string (null, a hand-made run.json): compared as it is */
    size_t len = strlen(plain);
    if (keep_slash && strchr(plain, '/') == NULL &&
        !(len > 4 && strcmp(plain + len - 4, ".csv") == 0)) {
        if (len + 3 > sizeof(plain))
            return SIM_OK;
        memmove(plain + 2, plain, len + 1);
        memcpy(plain, "./", 2);
    }
    size_t n = 0;
    json[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)plain; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            json[n++] = '\\';
        if (*p < 0x20)
            n += (size_t)snprintf(json + n, 7, "\\u%04x", *p);
        else
            json[n++] = (char)*p;
    }
    json[n++] = '"';
    json[n] = '\0';
    return strcmp(text, plain) != 0 ? sim_cfg_set_json(c, key, json, err) : SIM_OK;
}

/* compute.speeds of equal factors as the one factor they broadcast ([1, 1, 1, 1] is [1]). */
static int broadcast_speeds(sim_cfg *c, sim_err *err)
{
    size_t n = 0;
    double first = 0.0, v = 0.0;
    if (c == NULL || sim_cfg_array_len(c, "speeds", &n, NULL) != SIM_OK || n < 2 ||
        sim_cfg_at_double(c, "speeds", 0, -1e308, 1e308, false, &first, NULL) != SIM_OK)
        return SIM_OK;
    for (size_t i = 1; i < n; i++)
        if (sim_cfg_at_double(c, "speeds", i, -1e308, 1e308, false, &v, NULL) != SIM_OK ||
            v != first)
            return SIM_OK;
    char *item = NULL, json[64];
    int rc = sim_cfg_at_json(c, "speeds", 0, &item, err);
    if (rc == SIM_OK && snprintf(json, sizeof(json), "[%s]", item) < (int)sizeof(json))
        rc = sim_cfg_set_json(c, "speeds", json, err);
    free(item);
    return rc;
}

/* compute.device as a list of groups [{"device": D, "count": K}, ...]: adjacent groups of one
 * device as one, and a single group (every worker's) as the name alone, "D". A list holding
 * anything else is left as it is. */
static int one_device(sim_cfg *c, sim_err *err)
{
    size_t n = 0;
    if (c == NULL || sim_cfg_array_len(c, "device", &n, NULL) != SIM_OK || n == 0)
        return SIM_OK;
    char *json = malloc(n * CANON_GROUP + 4), name[64], last[64] = "";
    if (json == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    size_t len = 0, groups = 0;
    int64_t count = 0, sum = 0;
    bool plain = true;
    json[len++] = '[';
    for (size_t i = 0; i <= n && plain; i++) {
        sim_cfg *g = NULL;
        if (i < n)
            plain = sim_cfg_at(c, "device", i, &g, NULL) == SIM_OK && g != NULL &&
                    sim_cfg_nkeys(g) == 2 &&
                    sim_cfg_string(g, "device", name, sizeof(name), NULL) == SIM_OK &&
                    strchr(name, '"') == NULL && strchr(name, '\\') == NULL &&
                    sim_cfg_int(g, "count", 1, INT32_MAX, &count, NULL) == SIM_OK;
        if (plain && i > 0 && (i == n || strcmp(name, last) != 0)) { /* `last` ends */
            len += (size_t)sprintf(json + len, "%s{\"device\": \"%s\", \"count\": %lld}",
                                   groups > 0 ? ", " : "", last, (long long)sum);
            groups++;
            sum = 0;
        }
        if (plain && i < n) {
            snprintf(last, sizeof(last), "%s", name);
            sum += count;
        }
    }
    int rc = SIM_OK;
    if (plain && groups == 1)
        snprintf(json, n * CANON_GROUP + 4, "\"%s\"", last);
    else if (plain)
        snprintf(json + len, n * CANON_GROUP + 4 - len, "]");
    if (plain && (groups < n || groups == 1))
        rc = sim_cfg_set_json(c, "device", json, err);
    free(json);
    return rc;
}

int sim_scenario_canonical(sim_cfg *tree, sim_err *err)
{
    sim_cfg *compute = NULL, *network = NULL, *workload = NULL, *dataset = NULL, *model = NULL;
    sim_cfg_child(tree, "compute", &compute, NULL);
    sim_cfg_child(tree, "network", &network, NULL);
    sim_cfg_child(tree, "workload", &workload, NULL);
    if (workload != NULL) {
        sim_cfg_child(workload, "dataset", &dataset, NULL);
        sim_cfg_child(workload, "model", &model, NULL);
    }
    int rc = broadcast_speeds(compute, err);
    if (rc == SIM_OK)
        rc = one_device(compute, err);
    /* Lists whose default is empty: absent is []. */
    if (rc == SIM_OK && !sim_cfg_has(tree, "stragglers"))
        rc = sim_cfg_default_json(tree, "stragglers", "[]", err);
    if (rc == SIM_OK && network != NULL && !sim_cfg_has(network, "overrides"))
        rc = sim_cfg_default_json(network, "overrides", "[]", err);
    /* The files it names. */
    char profile[CANON_PATH_MAX] = "";
    if (compute != NULL && sim_cfg_has(compute, "profile"))
        sim_cfg_string(compute, "profile", profile, sizeof(profile), NULL);
    size_t plen = strlen(profile);
    if (rc == SIM_OK &&
        (strchr(profile, '/') != NULL || (plen > 4 && strcmp(profile + plen - 4, ".csv") == 0)))
        rc = plain_key(compute, "profile", true, err);
    static const char *const data_keys[] = { "file", "test_file", "dir" };
    for (size_t i = 0; i < 3 && rc == SIM_OK; i++)
        rc = plain_key(dataset, data_keys[i], false, err);
    if (rc == SIM_OK)
        rc = plain_key(model, "module", false, err);
    size_t n = 0;
    if (sim_cfg_array_len(tree, "stragglers", &n, NULL) != SIM_OK)
        n = 0;
    for (size_t i = 0; i < n && rc == SIM_OK; i++) {
        sim_cfg *rule = NULL;
        if (sim_cfg_at(tree, "stragglers", i, &rule, NULL) == SIM_OK)
            rc = plain_key(rule, "file", false, err);
    }
    return rc;
}
