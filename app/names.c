/* Display names for tables and figures (see names.h). */
#include "app/names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uninorm.h>

#include "outputs/output.h"
#include "sim/file.h"
#include "sim/fnv.h"
#include "sim/text.h"

#define NAME_MAX_BYTES 200
#define NAME_MAX_TEXT  "200" /* NAME_MAX_BYTES, spelt for messages */

/* Protocols as their papers name them (docs/scenario.md's protocol table). */
static const char *const protocol_names[][2] = {
    { "allreduce", "All-Reduce" },
    { "localsgd", "Local SGD" },
    { "ps", "PS" },
    { "ps-bsp", "PS (BSP)" },
    { "ps-asp", "PS (ASP)" },
    { "syncswitch", "Sync-Switch" },
    { "dpsgd", "D-PSGD" },
    { "adpsgd", "AD-PSGD" },
    { "gossip", "Gossip" },
    { "hop", "Hop" },
    { "hpsgd", "HPSGD" },
    { "ripples", "Ripples" },
    { "moshpit", "Moshpit SGD" },
    { "sgp", "SGP" },
    { "easgd", "EASGD" },
    { "diloco", "DiLoCo" },
};

/* Swept keys as a paper's axis or column names them. */
static const char *const key_names[][2] = {
    { "protocol.name", "protocol" },
    { "name", "protocol" },
    { "workload.lr", "learning rate" },
    { "workload.batch", "batch size" },
    { "workload.momentum", "momentum" },
    { "workers", "workers" },
    { "seed", "seed" },
    { "network.bandwidth_gbps", "bandwidth (Gbit/s)" },
    { "network.latency_us", "latency (us)" },
    { "compute.iteration_ms", "iteration (ms)" },
    { "protocol.local_steps", "local steps" },
    { "stragglers[0].slowdown", "slowdown" },
};

/* s in NFC (Unicode's canonical composition, libunistring: a precomposed "é" and "e" with a
 * combining acute accent are one text), newly allocated; a copy of s when it is no UTF-8;
 * NULL when memory runs out. Keys are held and looked up in this form. */
static char *nfc_dup(const char *s)
{
    size_t len = 0;
    if (!sim_text_utf8(s))
        return strdup(s);
    uint8_t *nfc = u8_normalize(UNINORM_NFC, (const uint8_t *)s, strlen(s), NULL, &len);
    char *out = nfc != NULL ? malloc(len + 1) : NULL;
    if (out != NULL) {
        memcpy(out, nfc, len);
        out[len] = '\0';
    }
    free(nfc);
    return out;
}

/* The slot of `from` (in NFC) in n's table: the one holding it, or the empty one where it
 * goes. */
static size_t slot_of(const app_names *n, const char *from)
{
    size_t i = (size_t)sim_fnv_text(SIM_FNV_OFFSET, from) & (n->nslot - 1);
    while (n->slot[i] != 0 && strcmp(n->from[n->slot[i] - 1], from) != 0)
        i = (i + 1) & (n->nslot - 1);
    return i;
}

static const char *user_name(const app_names *n, const char *from)
{
    char *key = n->nslot != 0 ? nfc_dup(from) : NULL;
    if (key == NULL)
        return NULL;
    size_t i = slot_of(n, key);
    free(key);
    return n->slot[i] != 0 ? n->to[n->slot[i] - 1] : NULL;
}

/* Room in n for one more mapping: its arrays doubled when full, its table kept at most half
 * full. SIM_OK or SIM_ENOMEM. */
static int make_room(app_names *n)
{
    if (n->n == n->cap) {
        size_t cap = n->cap != 0 ? 2 * n->cap : 16;
        char **from = realloc(n->from, cap * sizeof(*from));
        if (from != NULL)
            n->from = from;
        char **to = from != NULL ? realloc(n->to, cap * sizeof(*to)) : NULL;
        if (to == NULL)
            return SIM_ENOMEM;
        n->to = to;
        n->cap = cap;
    }
    if (2 * (n->n + 1) <= n->nslot)
        return SIM_OK;
    size_t nslot = n->nslot != 0 ? 2 * n->nslot : 32;
    size_t *slot = calloc(nslot, sizeof(*slot));
    if (slot == NULL)
        return SIM_ENOMEM;
    free(n->slot);
    n->slot = slot;
    n->nslot = nslot;
    for (size_t k = 0; k < n->n; k++)
        n->slot[slot_of(n, n->from[k])] = k + 1;
    return SIM_OK;
}

/* buf[size] (UTF-8 throughout) in NFC, cut by whole characters to fit; left as it is when it
 * is no UTF-8 or memory runs out. */
static void compose(char *buf, size_t size)
{
    char *nfc = nfc_dup(buf);
    if (nfc == NULL)
        return;
    snprintf(buf, size, "%s", nfc);
    sim_text_utf8_trim(buf);
    free(nfc);
}

void app_names_shown(char *buf, size_t size)
{
    size_t n = 0, len;
    for (size_t i = 0; buf[i] != '\0'; i += len) {
        len = sim_text_utf8_len(buf + i);
        if (len == 0) { /* no UTF-8: kept as it is, a byte */
            buf[n++] = buf[i];
            len = 1;
            continue;
        }
        unsigned c = sim_text_code_point(buf + i, len);
        if (sim_text_invisible(c))
            continue;
        if (c == ' ' || sim_text_wide_space(c)) {
            if (n > 0 && buf[n - 1] != ' ')
                buf[n++] = ' ';
            continue;
        }
        memmove(buf + n, buf + i, len);
        n += len;
    }
    n -= n > 0 && buf[n - 1] == ' ';
    buf[n] = '\0';
    compose(buf, size);
}

/* Why the part s[len] of a display name spec (a key, or the text shown) cannot be one, or
 * NULL when it can. */
static const char *fault(const char *s, size_t len)
{
    if (len == 0)
        return "is empty";
    if (len > NAME_MAX_BYTES)
        return "is longer than " NAME_MAX_TEXT " bytes";
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return s[i] == '\t' ? "holds a tab, a control character" : "holds a control character";
    /* A byte that is no UTF-8 (--label allreduce=$'\xff') went into the bar charts' CSVs,
     * which pandas then refused. */
    for (size_t i = 0, n; i < len; i += n) {
        if ((n = sim_text_utf8_len(s + i)) == 0)
            return "is not UTF-8";
        /* U+0080-U+009F, the C1 controls (NEL, CSI), went into TeX and the figures as is. */
        if (n == 2 && (unsigned char)s[i] == 0xc2 && (unsigned char)s[i + 1] < 0xa0)
            return "holds a control character";
    }
    return NULL;
}

/* True when the n-byte character at s is a space a reader takes for none or for U+0020: an
 * invisible format character (a byte-order mark, a zero width space) or a wide space. */
static bool blank_char(const char *s, size_t n)
{
    unsigned c = sim_text_code_point(s, n);
    return c == ' ' || sim_text_wide_space(c) || sim_text_invisible(c);
}

/* Why the key s[len] of a display name spec cannot be one, or NULL when it can: as fault,
 * and no space at either end (`allreduce = AR` mapped "allreduce ", which names nothing,
 * silently; the text shown may keep its spaces, `dpsgd= #2`), nor a wide space or an
 * invisible character (a --names file made by `cat a.txt b.txt`, b.txt opening with a
 * byte-order mark, mapped "\ufeff0.02", which named nothing, exit 0; so did a key ending with a
 * zero width space or a no-break space). */
static const char *key_fault(const char *s, size_t len)
{
    const char *f = fault(s, len);
    if (f != NULL)
        return f;
    size_t first = sim_text_utf8_len(s), last = 0;
    for (size_t i = 0, n; i < len; i += n)
        last = n = sim_text_utf8_len(s + i);
    if (blank_char(s, first))
        return s[0] == ' ' ? "starts with a space"
                           : "starts with an invisible character or a space other than U+0020";
    if (blank_char(s + len - last, last))
        return s[len - 1] == ' ' ? "ends with a space"
                                 : "ends with an invisible character or a space other than U+0020";
    return NULL;
}

/* The '=' that ends FROM in `spec`, or NULL: the first one not written `\=`, which stands for
 * an '=' of FROM (--label 'k\=3=K' names the value k=3; index.csv never holds that pair, as
 * it writes a backslash as `\\`, whose pair is passed over whole). */
static const char *split_at(const char *spec)
{
    for (const char *p = spec; *p != '\0'; p++)
        if (p[0] == '\\' && (p[1] == '\\' || p[1] == '='))
            p++;
        else if (p[0] == '=')
            return p;
    return NULL;
}

/* FROM, spec[len] with each `\=` read as '=', malloc'd; NULL when out of memory. */
static char *from_text(const char *spec, size_t len)
{
    char *f = malloc(len + 1), *q = f;
    for (size_t i = 0; f != NULL && i < len; i++) {
        if (spec[i] == '\\' && i + 1 < len && spec[i + 1] == '\\')
            *q++ = spec[i++];
        else if (spec[i] == '\\' && i + 1 < len && spec[i + 1] == '=')
            i++;
        *q++ = spec[i];
    }
    if (f != NULL)
        *q = '\0';
    return f;
}

/* Why `spec` is no FROM=TO into why[size]; false when it is one. */
static bool spec_fault(const char *spec, char *why, size_t size)
{
    const char *eq = split_at(spec);
    const char *key = eq != NULL ? key_fault(spec, (size_t)(eq - spec)) : NULL;
    const char *text = eq != NULL && key == NULL ? fault(eq + 1, strlen(eq + 1)) : NULL;
    if (eq == NULL)
        snprintf(why, size, "no '='");
    else if (key != NULL || text != NULL)
        snprintf(why, size, "the %s %s", key != NULL ? "key" : "text", key != NULL ? key : text);
    return eq == NULL || key != NULL || text != NULL;
}

int app_names_add(app_names *n, const char *spec, sim_err *err)
{
    char why[128];
    if (spec_fault(spec, why, sizeof(why)))
        return sim_err_set(
            err, SIM_EINVAL, NULL,
            "a display name is FROM=TO, a key or a value as index.csv writes it "
            "and the text shown (each 1 to %d bytes of UTF-8, no control character; the key "
            "with no space at either end), got "
            "\"%.200s\" (%s)",
            NAME_MAX_BYTES, spec, why);
    const char *eq = split_at(spec);
    char *typed = make_room(n) == SIM_OK ? from_text(spec, (size_t)(eq - spec)) : NULL;
    char *f = typed != NULL ? nfc_dup(typed) : NULL;
    free(typed);
    /* A key mapped twice took the later text silently (--label ps=PS --label ps=Ours showed
     * "Ours"): as an option of one value given twice, it is refused. */
    const char *had = f != NULL ? user_name(n, f) : NULL;
    if (had != NULL) {
        sim_err_set(err, SIM_EINVAL, NULL,
                    "the key \"%s\" is given a display name twice (\"%s\", then \"%s\"; "
                    "--label and --names map each key once)",
                    f, had, eq + 1);
        free(f);
        return SIM_EINVAL;
    }
    char *t = f != NULL ? strdup(eq + 1) : NULL;
    if (t == NULL) {
        free(f);
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    n->slot[slot_of(n, f)] = n->n + 1;
    n->from[n->n] = f;
    n->to[n->n++] = t;
    return SIM_OK;
}

int app_names_load(app_names *n, const char *path, sim_err *err)
{
    size_t len = 0;
    errno = 0;
    char *text = sim_output_read(path, &len);
    if (text == NULL && errno == EFBIG) /* a FIFO fed forever: refused at the cap */
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: %s", path, sim_file_cap_text());
    if (text == NULL)
        return sim_err_set(err, errno == ENOMEM ? SIM_ENOMEM : SIM_EINVAL, NULL,
                           "cannot read %s: %s", path, strerror(errno != 0 ? errno : EIO));
    if (sim_text_wide(text, len)) {
        free(text);
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: %s", path, SIM_TEXT_WIDE_TEXT);
    }
    int rc = SIM_OK;
    size_t line = 0;
    char *p = text;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte-order mark */
        p += 3;
    for (char *end; rc == SIM_OK && p < text + len; p = end + 1) {
        end = memchr(p, '\n', (size_t)(text + len - p));
        end = end != NULL ? end : text + len;
        line++;
        if (memchr(p, '\0', (size_t)(end - p)) != NULL) {
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: a NUL byte", path, line);
            break;
        }
        *end = '\0';
        if (end > p && end[-1] == '\r')
            end[-1] = '\0';
        if (p[0] == '\0' || p[0] == '#')
            continue;
        char why[128];
        if (spec_fault(p, why, sizeof(why)))
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s: line %zu: not FROM=TO (a key or value, '=', the text shown, "
                             "each 1 to %d bytes of UTF-8, no control character; the key with "
                             "no space at either end): %s",
                             path, line, NAME_MAX_BYTES, why);
        else if ((rc = app_names_add(n, p, err)) == SIM_EINVAL) {
            char msg[sizeof(err->msg)];
            snprintf(msg, sizeof(msg), "%s", err->msg);
            sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %s", path, line, msg);
        }
    }
    free(text);
    return rc;
}

void app_names_fini(app_names *n)
{
    for (size_t i = 0; i < n->n; i++) {
        free(n->from[i]);
        free(n->to[i]);
    }
    free(n->from);
    free(n->to);
    free(n->slot);
    memset(n, 0, sizeof(*n));
}

const char *app_names_key(const app_names *n, const char *key)
{
    const char *u = user_name(n, key);
    if (u != NULL)
        return u;
    for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
        if (strcmp(key_names[i][0], key) == 0)
            return key_names[i][1];
    return key;
}

const char *app_names_value(const app_names *n, const char *key, const char *value)
{
    const char *u = user_name(n, value);
    if (u != NULL)
        return u;
    if (strcmp(key, "protocol.name") != 0 && strcmp(key, "name") != 0)
        return value;
    for (size_t i = 0; i < sizeof(protocol_names) / sizeof(protocol_names[0]); i++)
        if (strcmp(protocol_names[i][0], value) == 0)
            return protocol_names[i][1];
    return value;
}
