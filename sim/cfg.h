/* Strict, path-aware access to one JSON object of a scenario (a "section").
 *
 * A sim_cfg is an object node of a scenario's JSON tree plus the file name and the JSON
 * path of that node ("$.protocol"). Readers look a key up, check its type and range, and on
 * any mistake fill `err` with the file, the path of the key ("$.protocol.alpha") and what
 * was expected: "must be a number in [0, 1], got 1.5". A key that is absent leaves `*out`
 * untouched, so callers put the default in `*out` first; the default is then written into
 * the tree, which thereby becomes the fully resolved scenario (run.json).
 *
 * Every key read is marked; sim_cfg_check_unused then rejects the keys nobody read, listing
 * the valid ones, which makes every section strict without a separate schema. Duplicate keys
 * are rejected when the file is parsed (cJSON would silently keep the first one).
 *
 * Ownership: a sim_cfg from sim_cfg_parse owns its tree; children from sim_cfg_child and
 * sim_cfg_at are owned by the parent and live until the root is destroyed. This module and
 * scenario/scenario_load.c are the only ones that include cJSON.h.
 */
#ifndef SIM_CFG_H
#define SIM_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

typedef struct sim_cfg sim_cfg;

/* Parses `text` (length `len`) as JSON; the root must be an object. `file` names the source
 * in errors. A syntax error is reported as "line L, column C: ...", a duplicate key as
 * "$.a.b: duplicate key". Returns NULL and fills `err` (SIM_ESCENARIO, or SIM_ENOMEM). */
sim_cfg *sim_cfg_parse(const char *text, size_t len, const char *file, sim_err *err);

/* Destroys a root and every child handed out from it. NULL is a no-op. */
void sim_cfg_destroy(sim_cfg *cfg);

/* The JSON path of this node ("$" for the root, "$.network", "$.stragglers[2]"). */
const char *sim_cfg_path(const sim_cfg *cfg);

/* The file name given to sim_cfg_parse. */
const char *sim_cfg_file(const sim_cfg *cfg);

/* True if `key` is present (null counts as present). Does not mark the key as read. */
bool sim_cfg_has(const sim_cfg *cfg, const char *key);

/* True if `key` is present and null. Marks the key as read. */
bool sim_cfg_is_null(sim_cfg *cfg, const char *key);

/* Marks `key` as one the object may hold without reading it: sim_cfg_check_unused lists it
 * among the valid keys. For an optional key read only when present (asked about with
 * sim_cfg_has, which marks nothing), so that a misspelt key's message names it. Returns 0 or
 * SIM_ENOMEM. */
int sim_cfg_allow(sim_cfg *cfg, const char *key, sim_err *err);

/* Typed readers. Each returns 0, or SIM_ESCENARIO with the key's path when the value has the
 * wrong type or lies outside [lo, hi]. An absent key keeps *out and records it as default. */
int sim_cfg_double(sim_cfg *cfg, const char *key, double lo, double hi, double *out, sim_err *err);
int sim_cfg_int(sim_cfg *cfg, const char *key, int64_t lo, int64_t hi, int64_t *out,
                sim_err *err); /* a JSON number with no fractional part */
int sim_cfg_bool(sim_cfg *cfg, const char *key, bool *out, sim_err *err);

/* A string copied into out[size] (error if longer than size - 1 or empty). */
int sim_cfg_string(sim_cfg *cfg, const char *key, char *out, size_t size, sim_err *err);

/* A string that must be one of `names[0..n-1]`; *out receives its index. The error lists
 * the valid names: "must be one of star, racks, got \"ring\"". */
int sim_cfg_choice(sim_cfg *cfg, const char *key, const char *const *names, size_t n, int *out,
                   sim_err *err);

/* Writes the JSON text `json` (an array, null, ...) under `key` as its default when the key
 * is absent, for defaults the typed readers cannot write (a computed array, a null that
 * means "unbounded"); marks the key. Nothing is written when the key is present. Returns 0,
 * SIM_EINVAL if `json` does not parse, or SIM_ENOMEM. */
int sim_cfg_default_json(sim_cfg *cfg, const char *key, const char *json, sim_err *err);

/* Sets `key` of this object to the JSON text `json`, in place when present (the key keeps
 * its position and children handed out stay valid) or appended; marks the key. For values
 * the loader resolves into the tree (a rule's drawn workers): unlike sim_cfg_override, which
 * walks from the root, it costs nothing for the object's place in the tree. Returns 0,
 * SIM_EINVAL if `json` does not parse, or SIM_ENOMEM. */
int sim_cfg_set_json(sim_cfg *cfg, const char *key, const char *json, sim_err *err);

/* Removes `key` from this object (nothing when absent); a child handed out under it stays
 * valid memory until the root is destroyed, but is no longer in the tree. For the canonical
 * form of a scenario (scenario/scenario_canon.c), which drops keys that change no run.
 * Returns 0 or SIM_ENOMEM. */
int sim_cfg_remove(sim_cfg *cfg, const char *key, sim_err *err);

/* Requires `key` to be present: SIM_ESCENARIO "missing required key" with its path if not. */
int sim_cfg_require(const sim_cfg *cfg, const char *key, sim_err *err);

/* The object under `key`: *out is NULL if the key is absent (or null), else a child cfg.
 * Error if present but not an object. Marks the key as read. */
int sim_cfg_child(sim_cfg *cfg, const char *key, sim_cfg **out, sim_err *err);

/* The array under `key`: *n receives its length (0 if absent). Error if not an array.
 * Marks the key as read. */
int sim_cfg_array_len(sim_cfg *cfg, const char *key, size_t *n, sim_err *err);

/* Element i of the array under `key` as an object (error if not an object). */
int sim_cfg_at(sim_cfg *cfg, const char *key, size_t i, sim_cfg **out, sim_err *err);

/* The number of keys of this object, and key i of them in file order (NULL past the end):
 * for sections whose keys are names chosen by the user (a sweep's grid). Marks nothing. */
size_t sim_cfg_nkeys(const sim_cfg *cfg);
const char *sim_cfg_key(const sim_cfg *cfg, size_t i);

/* Element i of the array under `key`, any JSON type, printed compactly into a malloc'd
 * string the caller frees (*out), each number as it reads back (cJSON alone printed
 * 0.30000000000000004 as 0.3); for values handed on as `--set PATH=VALUE`. */
int sim_cfg_at_json(sim_cfg *cfg, const char *key, size_t i, char **out, sim_err *err);

/* The value under `key`, any JSON type, printed compactly into a malloc'd string the caller
 * frees (*out; NULL when the key is absent); marks the key. For values handed on untouched
 * (a torch module's arguments). */
int sim_cfg_json(sim_cfg *cfg, const char *key, char **out, sim_err *err);

/* Element i of the array under `key` as a number in [lo, hi] (integer when `integer`). */
int sim_cfg_at_double(sim_cfg *cfg, const char *key, size_t i, double lo, double hi, bool integer,
                      double *out, sim_err *err);

/* v into buf[size] as the shortest of %.15g, %.16g and %.17g that reads back as v ("inf",
 * "-inf", "nan" when not finite): a value shown in a message, as the scenario's readers show
 * theirs (%.15g showed 1000000000.0000001 as the bound 1000000000 it passes). */
void sim_cfg_num_text(char *buf, size_t size, double v);

/* Reports a value that passed its reader but fails a check of the caller's (a constraint
 * between keys, a value the scenario cannot support): SIM_ESCENARIO with the path of `key`
 * under this object and the printf-style message. Returns SIM_ESCENARIO. */
__attribute__((format(printf, 4, 5))) int sim_cfg_fail(const sim_cfg *cfg, const char *key,
                                                       sim_err *err, const char *fmt, ...);

/* Rejects the first key of this object (not its children) that no reader has marked:
 * "$.protocol.alpah: unknown key (valid: name, graph, backup_workers)". The list of valid
 * keys is the set of keys read or defaulted so far in this object. */
int sim_cfg_check_unused(const sim_cfg *cfg, sim_err *err);

/* Applies an override "a.b[2].c=VALUE" to the root: VALUE is parsed as JSON when it parses
 * (numbers, true/false/null, arrays, objects, quoted strings), else taken as a bare string.
 * Missing intermediate objects are created; an index past an array's end is an error.
 * Errors name "--set a.b[2].c". */
int sim_cfg_override(sim_cfg *root, const char *assignment, sim_err *err);

/* The whole tree, printed compactly with keys in file order (then defaults in the order they
 * were added), as a NUL-terminated string the caller frees. NULL when out of memory. */
char *sim_cfg_print(const sim_cfg *root, bool pretty);

/* Compares two objects key by key, descending into objects present in both: the dotted
 * paths ("workload.lr") of the keys present in one only or with unequal values (arrays and
 * numbers compared as cJSON does) are written into out[size], ", "-separated and truncated
 * to fit. Paths listed in `skip` (nskip; "seed", "output") are not compared. Returns the
 * number of differing keys. */
size_t sim_cfg_diff(const sim_cfg *a, const sim_cfg *b, const char *const *skip, size_t nskip,
                    char *out, size_t size);

#endif
