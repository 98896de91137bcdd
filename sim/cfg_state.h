/* The internals of sim_cfg (sim/cfg.h), shared by sim/cfg_tree.c (the tree of children,
 * marks, element reads, message text), sim/cfg_parse.c (parsing, the scanners of JSON's
 * grammar), sim/cfg_read.c (the readers) and sim/cfg_override.c (overrides, printing). Not a
 * public header: only those four files include it (and the tests). cfg_tree.c calls nothing
 * of the three others; cfg_parse.c calls only cfg_tree.c; cfg_read.c and cfg_override.c call
 * both and nothing of each other.
 *
 * A root sim_cfg owns the cJSON document, the children it hands out (kept in a table keyed
 * by node, so that asking twice for the same object gives the same sim_cfg and its marks),
 * and the old contents of values replaced by overrides (kept until destroy, so a child never
 * points into freed memory). Each sim_cfg records the keys read or defaulted in its object;
 * sim_cfg_check_unused rejects the others. */
#ifndef SIM_CFG_STATE_H
#define SIM_CFG_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "sim/cfg.h"
#include "sim/err.h"

/* Paths in messages are cut to this, beyond sim_err's room: sim_err_set then marks the cut. */
#define PATH_MAX_TEXT (2 * SIM_ERR_PATH_MAX)
#define CFG_CURSORS   4  /* arrays read in turn with O(1) steps (a list, the lists in it) */
#define CFG_WALK_MAX  32 /* links walked from a cursor or the start before an index is built */

/* Where the last read of an array's elements stopped, so that the next one in order starts
 * there: element `index` of `array` is `item`. */
typedef struct cfg_cursor {
    const cJSON *array; /* NULL when unused */
    const cJSON *item;
    size_t index;
    unsigned long used; /* when last used: the least recently used cursor is taken over */
} cfg_cursor;

/* An array's elements in order, built on the first read that would walk more than
 * CFG_WALK_MAX links (one --set per element in a shuffled order walked up to half the array
 * each): element i is item[i], read without a walk. An edit that replaces the array's
 * elements (replace_content, the only edit of an array's list: objects alone gain keys, and
 * no node of the tree is freed before destroy) forgets it; the next far read builds it again. */
typedef struct cfg_index {
    const cJSON *array; /* NULL: an empty slot of the table */
    const cJSON **item; /* (n) owned; NULL when not built (or forgotten) */
    size_t n;
    bool built;
} cfg_index;

struct sim_cfg {
    cJSON *node;   /* this object; borrowed from the root's tree */
    char *path;    /* "$", "$.network", "$.stragglers[2]"; owned */
    sim_cfg *root; /* the root (itself for the root) */
    char **known;  /* (nknown) keys read or defaulted here, in that order; owned */
    size_t nknown, known_cap;
    /* Root only. */
    cJSON *tree;                    /* the document; owned */
    char *file;                     /* owned */
    sim_cfg **kids;                 /* (kids_mask + 1) open-addressing table keyed by node */
    size_t kids_mask, nkids;        /* table size - 1 (0: no table yet), children in it */
    cJSON **dead;                   /* (ndead) replaced contents, deleted at destroy */
    size_t ndead, dead_cap;         /* */
    cfg_cursor cursor[CFG_CURSORS]; /* makes element reads in order O(1) for each of the
                                       arrays read in turn (stragglers and each rule's
                                       workers) */
    unsigned long cursor_clock;     /* */
    cfg_index *index;               /* (index_mask + 1) open-addressing table keyed by array */
    size_t index_mask, nindex;      /* table size - 1 (0: no table yet), arrays in it */
    unsigned long walked;           /* links cfg_item_at followed, an index's building included
                                       (tests/test_cfg_structure.c checks that reads and sets in
                                       any order stay linear) */
};

/* Grows an array to hold at least `need` elements of `elem` bytes; NULL when out of memory
 * (the old block is then untouched). */
void *cfg_reserve(void *p, size_t *cap, size_t need, size_t elem);

/* A malloc'd copy of `s`, or NULL. */
char *cfg_copy_string(const char *s);

/* Fills `err` with the root's file name, `path` and a message. Returns `code`. */
__attribute__((format(printf, 5, 6))) int cfg_fail(const sim_cfg *cfg, sim_err *err, int code,
                                                   const char *path, const char *fmt, ...);

/* SIM_ENOMEM "out of memory" at this node's path. */
int cfg_no_memory(const sim_cfg *cfg, sim_err *err);

/* Appends printf-style text to buf (size > 0 bytes, `len` of them used), truncating.
 * Returns the new length. */
__attribute__((format(printf, 4, 5))) size_t cfg_put(char *buf, size_t size, size_t len,
                                                     const char *fmt, ...);

/* Writes base + ".key" (or base + ["key"] for a key that is not an identifier). */
void cfg_key_path(char *buf, size_t size, const char *base, const char *key);

/* True when %.15g reads back as v (finite, not subnormal). */
bool cfg_is_short(double v);

/* The shortest of %.15g, %.16g, %.17g that reads back as v ("nan", "inf", "-inf"). */
void cfg_fmt_num(char *buf, size_t size, double v);

/* v printed as JSON (a malloc'd string, NULL when out of memory), every number as it reads
 * back: cJSON alone prints 0.30000000000000004 as 0.3 and 9007199254740989 as
 * 9.00719925474099e+15 (sim/cfg_override.c). */
char *cfg_print_json(const cJSON *v, bool pretty);

/* A value as messages show it after "got": 2.5, "ring", true, null, array, object. */
void cfg_describe(const cJSON *v, char *buf, size_t size);

/* The value under `key` of this object, or NULL. Marks nothing. */
cJSON *cfg_get(const sim_cfg *cfg, const char *key);

/* True when `key` has been read or defaulted in this object. */
bool cfg_is_known(const sim_cfg *cfg, const char *key);

/* Records `key` as read in this object: 0, or SIM_ENOMEM (err may be NULL). */
int cfg_mark(sim_cfg *cfg, const char *key, sim_err *err);

/* The child cfg for object `node`, created on first use with path `path` (which it takes
 * over; it is freed when the child already exists). NULL when out of memory. */
sim_cfg *cfg_child_for(sim_cfg *parent, cJSON *node, char *path);

/* Element i of `array`, NULL past the end: O(1) when elements are read in order, first to
 * last or last to first (from a cursor, also when up to CFG_CURSORS arrays are read in turn),
 * and in any order once the array is indexed (an index built on the first read that lies more
 * than CFG_WALK_MAX links from the cursor and the start). */
const cJSON *cfg_item_at(sim_cfg *root, const cJSON *array, size_t i);

/* Forgets the cursor and the index of `array` (its elements were replaced). */
void cfg_forget_elements(sim_cfg *root, const cJSON *array);

/* The offset in s[0..len) of the first '{' or '[' (outside strings) that opens a level past
 * CJSON_NESTING_LIMIT, where cJSON stops, or SIZE_MAX. */
size_t cfg_too_deep(const char *s, size_t len);

/* The offset in s[0..len) of the first number (outside strings) that JSON's grammar refuses
 * but cJSON reads (it takes what strtod reads of the run of characters [0-9.eE+-] that starts
 * a number: 01, -00, 4., -.5 and 1.e3), with the run's length in *n; SIZE_MAX when there is
 * none; or a JSON number out of a double's range (1e309, read as infinity; 1e-400, read as
 * 0). In text cJSON parsed, every such run is a number strtod read whole. */
size_t cfg_bad_number(const char *s, size_t len, size_t *n);

/* Keeps, on each number of `node` (parsed from s[0..len), which JSON's grammar accepted)
 * that is an integer written past 2^53 and not as a double holds it (9007199254740993, read
 * as 9007199254740992), its text as written in the node's valuestring (unused by cJSON for a
 * number, freed with the node): cfg_describe shows it, and an integer read refuses the number.
 * 0 or SIM_ENOMEM. */
int cfg_keep_integer_texts(cJSON *node, const char *s, size_t len);

/* The message for such a number, number[0..n): "01 is not a JSON number (...)", "1e309 is
 * too large for a double (read as infinity)". */
void cfg_bad_number_text(char *buf, size_t size, const char *number, size_t n);

/* The offset in s[0..len) of the first \u escape inside a string that is not followed by four
 * hexadecimal digits (JSON's grammar refuses it; cJSON decodes it to a NUL that cuts the
 * string: "allreduce\uZZZZjunk" ran allreduce); SIZE_MAX when there is none. */
size_t cfg_bad_escape(const char *s, size_t len);

/* The message for such an escape. */
#define CFG_BAD_ESCAPE_TEXT "\\u escape without four hexadecimal digits"

/* The offset of the first \u escape that is half of a UTF-16 surrogate pair without its
 * other half (\ud800 not followed by \udc00 to \udfff, or one of those alone), which cJSON
 * refuses as any invalid text ("invalid JSON" at a column); SIZE_MAX when there is none. */
size_t cfg_lone_surrogate(const char *s, size_t len);
#define CFG_LONE_SURROGATE_TEXT                                                               \
    "\\u escape of half a UTF-16 surrogate pair without the other half (write the character " \
    "as UTF-8, or as both halves: \\ud83d\\ude00)"

/* The message for a byte of a JSON text (a file, a --set) that opens no well-formed UTF-8
 * character (sim_text_utf8_bad): cJSON took any bytes inside a string, so an output.dir
 * "o\xff" went into run.json, which Python's json module then refused to read. */
#define CFG_NOT_UTF8_TEXT                                                             \
    "a byte that is no UTF-8 (JSON text is UTF-8: convert a file written in another " \
    "encoding, such as Latin-1)"

/* Finds the first string of `node`, parsed from text[0..len), that holds the escape \u0000
 * (cJSON cuts the string there): writes its path below `base` (a key's: its object's, with
 * *key the key as cut) and returns true; false when none does. */
bool cfg_find_nul_escape(const char *text, size_t len, const cJSON *node, const char *base,
                         char *path, size_t size, const char **key);

/* The message for such a string: "\u0000 (NUL) is not allowed in a string" (or a key). */
void cfg_nul_escape_text(char *buf, size_t size, const char *key);

/* Finds the first duplicate key in document order below `node` and writes its path, which
 * starts with `base` ("$"). Returns 1 if found, 0 if not, or SIM_ENOMEM. */
int cfg_find_duplicate(const cJSON *node, const char *base, char *path, size_t size);

#endif
