/* Parsing a scenario's text into the tree of sim/cfg_tree.c (see sim/cfg.h and
 * sim/cfg_state.h): syntax errors with their line and column, the tokens JSON's grammar
 * refuses but cJSON reads (numbers, \u escapes, bytes that are no UTF-8, NUL escapes), and
 * duplicate keys found by path. Built on sim/cfg_tree.c, which calls nothing of it;
 * sim/cfg_override.c checks a --set's value with its scanners. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cfg.h"
#include "sim/cfg_state.h"
#include "sim/err.h"
#include "sim/text.h"

/* Steps over s[*i] when it lies inside a JSON string, its quotes included (an escape takes the
 * next character with it), and says so; *in_string follows the strings. */
static bool in_json_string(const char *s, size_t *i, bool *in_string)
{
    if (!*in_string) {
        *in_string = s[*i] == '"';
        return *in_string;
    }
    if (s[*i] == '\\')
        (*i)++;
    else if (s[*i] == '"')
        *in_string = false;
    return true;
}

/* True when the text ends inside a string or an open object or array, or holds nothing. */
static bool is_truncated(const char *s, size_t len)
{
    size_t depth = 0;
    bool in_string = false, any = false;
    /* The mark is no text (cJSON skips it): a file of it alone was "invalid JSON". */
    for (size_t i = sim_text_bom(s, len); i < len; i++) {
        if (in_json_string(s, &i, &in_string)) {
            any = true; /* a string is something */
            continue;
        }
        char c = s[i];
        if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && depth > 0)
            depth--;
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            any = true;
    }
    return in_string || depth > 0 || !any;
}

size_t cfg_too_deep(const char *s, size_t len)
{
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        if (in_json_string(s, &i, &in_string))
            continue;
        if (s[i] == '{' || s[i] == '[') {
            if (++depth > CJSON_NESTING_LIMIT)
                return i;
        } else if ((s[i] == '}' || s[i] == ']') && depth > 0) {
            depth--;
        }
    }
    return SIZE_MAX;
}

/* True when s[0..n) is a number of JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
 */
static bool json_number(const char *s, size_t n)
{
    size_t i = s[0] == '-';
    if (i < n && s[i] == '0')
        i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9')
        i += strspn(s + i, "0123456789");
    else
        return false;
    if (i < n && s[i] == '.') {
        size_t d = strspn(s + i + 1, "0123456789");
        if (d == 0)
            return false;
        i += 1 + d;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i += 1 + (i + 1 < n && (s[i + 1] == '+' || s[i + 1] == '-'));
        size_t d = strspn(s + i, "0123456789");
        if (d == 0)
            return false;
        i += d;
    }
    return i == n;
}

/* Whether JSON number s[0..n) is out of a double's range: read as infinity, too large
 * (1e309: cJSON took it as inf, and a key that must be > 0 said "got inf"), or read as 0
 * with a digit other than 0 before its exponent, too small (1e-400). strtod stops where the
 * number does (the character after it is none of a number's). Reads s[0..n) alone: a search
 * past it for the exponent went on through the rest of the text, each number's, quadratic in
 * an array of numbers. */
static bool out_of_range(const char *s, size_t n)
{
    double v = strtod(s, NULL);
    if (isinf(v))
        return true;
    bool nonzero = false;
    for (size_t i = 0; i < n && s[i] != 'e' && s[i] != 'E' && !nonzero; i++)
        nonzero = s[i] >= '1' && s[i] <= '9';
    return nonzero && v == 0.0;
}

size_t cfg_bad_number(const char *s, size_t len, size_t *n)
{
    static const char chars[] = "0123456789.eE+-";
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        if (in_json_string(s, &i, &in_string) || (s[i] != '-' && (s[i] < '0' || s[i] > '9')))
            continue;
        size_t j = i;
        while (j < len && s[j] != '\0' && strchr(chars, s[j]) != NULL)
            j++;
        if (!json_number(s + i, j - i) || out_of_range(s + i, j - i)) {
            *n = j - i;
            return i;
        }
        i = j - 1;
    }
    return SIZE_MAX;
}

/* The next number token of s[*pos..len) (outside strings), moving *pos past it; NULL when
 * there is none. Its length in *n. */
static const char *next_number(const char *s, size_t len, size_t *pos, size_t *n, bool *in_string)
{
    for (size_t i = *pos; i < len; i++) {
        if (in_json_string(s, &i, in_string) || (s[i] != '-' && (s[i] < '0' || s[i] > '9')))
            continue;
        size_t j = i + 1; /* s need not end in a NUL: the fuzz target's does not */
        while (j < len && s[j] != '\0' && strchr("0123456789.eE+-", s[j]) != NULL)
            j++;
        *pos = j;
        *n = j - i;
        return s + i;
    }
    *pos = len;
    return NULL;
}

/* Whether t[0..n) is an integer's token: a sign or digits only (no fraction, no exponent). */
static bool integer_token(const char *t, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (t[k] != '-' && (t[k] < '0' || t[k] > '9'))
            return false;
    return true;
}

/* Walks the numbers of `node` in document order beside their tokens in s (a number's token is
 * the next one in the text: keys are strings) and keeps on the node (valuestring) the text of
 * an integer that a double does not hold, past 2^53. Returns false when out of memory. */
static bool keep_texts(cJSON *node, const char *s, size_t len, size_t *pos, bool *in_string)
{
    if (cJSON_IsNumber(node)) {
        size_t n = 0;
        const char *t = next_number(s, len, pos, &n, in_string);
        char held[48];
        if (t == NULL || !(fabs(node->valuedouble) >= 9007199254740992.0) || n >= sizeof(held) ||
            !integer_token(t, n))
            return true;
        snprintf(held, sizeof(held), "%.0f", node->valuedouble);
        if (strlen(held) == n && memcmp(held, t, n) == 0)
            return true; /* written as the double holds it (2^54) */
        if ((node->valuestring = cJSON_malloc(n + 1)) == NULL)
            return false;
        memcpy(node->valuestring, t, n);
        node->valuestring[n] = '\0';
        return true;
    }
    for (cJSON *c = node->child; c != NULL; c = c->next)
        if (!keep_texts(c, s, len, pos, in_string))
            return false;
    return true;
}

int cfg_keep_integer_texts(cJSON *node, const char *s, size_t len)
{
    size_t pos = 0;
    bool in_string = false;
    return keep_texts(node, s, len, &pos, &in_string) ? 0 : SIM_ENOMEM;
}

/* The value of the four hexadecimal digits at s (which cfg_bad_escape checked). */
static unsigned hex4(const char *s)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++)
        v = v * 16 + (unsigned)(s[k] <= '9' ? s[k] - '0' : (s[k] | 0x20) - 'a' + 10);
    return v;
}

size_t cfg_lone_surrogate(const char *s, size_t len)
{
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        size_t at = i;
        if (!in_json_string(s, &i, &in_string) || s[at] != '\\' || s[i] != 'u' || len - i < 5 ||
            strspn(s + i + 1, "0123456789abcdefABCDEF") < 4)
            continue;
        unsigned u = hex4(s + i + 1);
        if (u >= 0xdc00 && u <= 0xdfff)
            return at;
        if (u < 0xd800 || u > 0xdbff)
            continue;
        if (len - i < 11 || s[i + 5] != '\\' || s[i + 6] != 'u' ||
            strspn(s + i + 7, "0123456789abcdefABCDEF") < 4 || hex4(s + i + 7) < 0xdc00 ||
            hex4(s + i + 7) > 0xdfff)
            return at;
        i += 10; /* the low half, inside the string */
    }
    return SIZE_MAX;
}

size_t cfg_bad_escape(const char *s, size_t len)
{
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        size_t at = i;
        if (!in_json_string(s, &i, &in_string) || s[at] != '\\' || s[i] != 'u')
            continue;
        if (len - i < 5 || strspn(s + i + 1, "0123456789abcdefABCDEF") < 4)
            return at;
    }
    return SIZE_MAX;
}

/* The index, among the strings of `s` (keys and values, in document order), of the first
 * that holds the escape \u0000, which cJSON decodes to a NUL that cuts the string: true and
 * *token, or false. */
static bool nul_escape(const char *s, size_t len, size_t *token)
{
    size_t k = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        if (!in_string) {
            in_string = s[i] == '"';
        } else if (s[i] == '"') {
            in_string = false;
            k++;
        } else if (s[i] == '\\') {
            if (i + 5 < len && s[i + 1] == 'u' && memcmp(s + i + 2, "0000", 4) == 0) {
                *token = k;
                return true;
            }
            i++;
        }
    }
    return false;
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
    /* A byte-order mark is no column an editor shows (it made line 1's three further). */
    for (size_t i = sim_text_bom(text, len); i < pos; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return cfg_fail(root, err, SIM_ESCENARIO, NULL, "line %zu, column %zu: %s", line, col, what);
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
        cfg_key_path(buf, size, up, f->key);
    else
        cfg_put(buf, size, cfg_put(buf, size, 0, "%s", up), "[%zu]", f->index);
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

int cfg_find_duplicate(const cJSON *node, const char *base, char *path, size_t size)
{
    return find_duplicate(node, NULL, base, path, size);
}

/* Finds string number *left of `node`'s subtree in document order (a member's key, then its
 * value) and writes its path: the value's, or for a key its object's, with *key the key.
 * Returns true if found. */
static bool find_string(const cJSON *node, const frame *f, const char *base, size_t *left,
                        char *path, size_t size, const char **key)
{
    if (cJSON_IsString(node)) {
        if (*left == 0) {
            frame_path(path, size, base, f);
            return true;
        }
        (*left)--;
        return false;
    }
    bool object = cJSON_IsObject(node);
    if (!object && !cJSON_IsArray(node))
        return false;
    size_t i = 0;
    for (const cJSON *c = node->child; c != NULL; c = c->next, i++) {
        if (object && *left == 0) {
            *key = c->string;
            frame_path(path, size, base, f);
            return true;
        }
        if (object)
            (*left)--;
        frame here = { f, object ? c->string : NULL, i };
        if (find_string(c, &here, base, left, path, size, key))
            return true;
    }
    return false;
}

bool cfg_find_nul_escape(const char *text, size_t len, const cJSON *node, const char *base,
                         char *path, size_t size, const char **key)
{
    size_t token = 0;
    *key = NULL;
    return nul_escape(text, len, &token) && find_string(node, NULL, base, &token, path, size, key);
}

void cfg_bad_number_text(char *buf, size_t size, const char *number, size_t n)
{
    const char *why = "is not a JSON number (no leading zero, a digit on each side of a point)";
    if (json_number(number, n))
        why = isinf(strtod(number, NULL)) ? "is too large for a double (read as infinity)"
                                          : "is too small for a double (read as 0)";
    cfg_put(buf, size, 0, "%.*s%s %s", n > 40 ? 40 : (int)n, number, n > 40 ? "..." : "", why);
}

/* The offset of the first token of parsed text that JSON's grammar refuses but cJSON read (a
 * number, cfg_bad_number; a \u escape, cfg_bad_escape; a byte that is no UTF-8), its message
 * in what[size]; SIZE_MAX when there is none. */
static size_t bad_token(const char *buf, size_t len, char *what, size_t size)
{
    size_t n = 0, bad = cfg_bad_number(buf, len, &n);
    if (bad != SIZE_MAX)
        cfg_bad_number_text(what, size, buf + bad, n);
    else if ((bad = cfg_bad_escape(buf, len)) != SIZE_MAX)
        snprintf(what, size, "%s", CFG_BAD_ESCAPE_TEXT);
    else if ((bad = sim_text_utf8_bad(buf, len)) != SIZE_MAX)
        snprintf(what, size, "%s", CFG_NOT_UTF8_TEXT);
    return bad;
}

/* The code point of the character at buf[pos] when it is a space other than U+0020 or an
 * invisible format character, which JSON takes for no blank (a no-break space pasted from a
 * page, a second byte-order mark): "invalid JSON" at a column that showed a space, or
 * nothing. 0 for any other character. buf[len] is a NUL. */
static unsigned odd_blank(const char *buf, size_t len, size_t pos)
{
    size_t n = pos < len ? sim_text_utf8_len(buf + pos) : 0;
    unsigned c = n > 1 ? sim_text_code_point(buf + pos, n) : 0;
    return sim_text_wide_space(c) || sim_text_invisible(c) ? c : 0;
}

/* Why cJSON refused buf[len], stopping at `end` (or NULL), into err: the first bad byte or lone
 * surrogate up to there (a byte that is no UTF-8 outside a string was "invalid JSON"). */
static void parse_failure(sim_cfg *root, const char *buf, size_t len, const char *end, sim_err *err)
{
    bool eof = is_truncated(buf, len);
    size_t pos = eof ? len : fix_position(buf, len, end == NULL ? len : (size_t)(end - buf));
    size_t half = eof ? SIZE_MAX : cfg_lone_surrogate(buf, len);
    size_t bad = sim_text_utf8_bad(buf, len);
    if (bad != SIZE_MAX && bad <= pos && (half == SIZE_MAX || bad < half))
        syntax_error(root, buf, len, bad, CFG_NOT_UTF8_TEXT, err);
    else if (half != SIZE_MAX && half <= pos) /* cJSON stops at or after the escape */
        syntax_error(root, buf, len, half, CFG_LONE_SURROGATE_TEXT, err);
    else if (!eof && odd_blank(buf, len, pos) != 0) {
        unsigned c = odd_blank(buf, len, pos);
        char what[200];
        snprintf(what, sizeof(what),
                 "invalid JSON: U+%04X (%s) outside a string, where JSON's blanks are the space "
                 "U+0020, tab, CR and LF",
                 c,
                 c == 0xfeff              ? "a byte-order mark"
                 : sim_text_wide_space(c) ? "a space other than U+0020"
                                          : "an invisible format character");
        syntax_error(root, buf, len, pos, what, err);
    } else
        syntax_error(root, buf, len, pos, eof ? "unexpected end of file" : "invalid JSON", err);
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
    root->file = cfg_copy_string(file != NULL ? file : "");
    root->path = cfg_copy_string("$");
    char *buf = len < SIZE_MAX ? malloc(len + 1) : NULL;
    if (root->file == NULL || root->path == NULL || buf == NULL) {
        free(buf);
        cfg_no_memory(root, err);
        sim_err_file(err, file);
        goto fail_root;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    const char *nul = memchr(buf, '\0', len);
    if (nul != NULL && sim_text_wide(buf, len)) {
        syntax_error(root, buf, len, 0, SIM_TEXT_WIDE_TEXT, err);
        free(buf);
        goto fail_root;
    }
    if (nul != NULL) {
        syntax_error(root, buf, len, (size_t)(nul - buf), "unexpected NUL byte", err);
        free(buf);
        goto fail_root;
    }
    const char *end = NULL;
    root->tree = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
    size_t deep = root->tree == NULL ? cfg_too_deep(buf, len) : SIZE_MAX;
    char bad_what[128];
    if (deep != SIZE_MAX && (end == NULL || (size_t)(end - buf) >= deep)) {
        snprintf(bad_what, sizeof(bad_what), "nested deeper than %d levels (the parser's limit)",
                 CJSON_NESTING_LIMIT);
        syntax_error(root, buf, len, deep, bad_what, err);
        free(buf);
        goto fail_root;
    }
    if (root->tree == NULL) {
        parse_failure(root, buf, len, end, err);
        free(buf);
        goto fail_root;
    }
    size_t bad = bad_token(buf, len, bad_what, sizeof(bad_what));
    if (bad != SIZE_MAX) {
        syntax_error(root, buf, len, bad, bad_what, err);
        free(buf);
        goto fail_root;
    }
    free(buf);
    root->node = root->tree;
    if (cfg_keep_integer_texts(root->tree, text, len) != 0) {
        cfg_no_memory(root, err);
        goto fail_root;
    }
    if (!cJSON_IsObject(root->tree)) {
        char got[96];
        cfg_describe(root->tree, got, sizeof(got));
        cfg_fail(root, err, SIM_ESCENARIO, "$", "expected an object, got %s", got);
        goto fail_root;
    }
    char path[PATH_MAX_TEXT], what[128];
    const char *key = NULL;
    if (cfg_find_nul_escape(text, len, root->tree, "$", path, sizeof(path), &key)) {
        cfg_nul_escape_text(what, sizeof(what), key);
        cfg_fail(root, err, SIM_ESCENARIO, path, "%s", what);
        goto fail_root;
    }
    int rc = cfg_find_duplicate(root->tree, "$", path, sizeof(path));
    if (rc == SIM_ENOMEM) {
        cfg_no_memory(root, err);
        goto fail_root;
    }
    if (rc == 1) {
        cfg_fail(root, err, SIM_ESCENARIO, path, "duplicate key");
        goto fail_root;
    }
    return root;
fail_root:
    sim_cfg_destroy(root);
    return NULL;
}
