/* Display names for tables and figures: protocols and swept keys as a paper writes them
 * ("All-Reduce", "learning rate") instead of their scenario spelling ("allreduce",
 * "workload.lr"), each overridable: `--label FROM=TO` (repeatable) and `--names FILE` (a
 * FROM=TO a line; blank lines and lines starting with '#' are skipped) map a key or a value as
 * index.csv writes it to the text shown (docs/compare.md, "Display names").
 *
 * Built in: the values of a key named `protocol.name` or `name` that are protocol names
 * (allreduce -> All-Reduce, hpsgd -> HPSGD, ...; and this project's ps-bsp, ps-asp), and the
 * common swept keys (protocol.name -> protocol, workload.lr -> learning rate, ...). A user's
 * mapping wins over a built-in one; a key or value without either shows as it is. Used by
 * `hetsim report` (Markdown and LaTeX; CSV keeps the raw values) and `hetsim plot SWEEP --by`.
 */
#ifndef APP_NAMES_H
#define APP_NAMES_H

#include <stddef.h>

#include "sim/err.h"

typedef struct app_names {
    char **from, **to; /* (n) each owned, room for cap */
    size_t n, cap;
    size_t *slot; /* (nslot, a power of two, 0: none yet) the mappings by FROM: open
                   * addressing, index + 1, 0 empty (a lookup per key was a walk of every
                   * mapping: 100,000 --names lines took 16 s) */
    size_t nslot;
} app_names;

/* Adds the mapping "FROM=TO" (split at the first '=' not written `\=`, which stands for an
 * '=' of FROM: `k\=3=K` maps the value k=3; FROM and TO not empty, at most 200 bytes, no
 * control character; FROM with no space at either end: `allreduce = AR` named nothing).
 * SIM_EINVAL naming `spec` otherwise, or naming FROM when it is mapped already (by an earlier
 * --label or a --names line: each key is mapped once; keys are compared in NFC, as every
 * lookup of a key or value is: a precomposed "é" and "e" with a combining accent are one key);
 * SIM_ENOMEM. */
int app_names_add(app_names *n, const char *spec, sim_err *err);

/* Adds every FROM=TO line of the file at `path`. SIM_EINVAL naming the file and line for a
 * line that is not a mapping or maps a key mapped already; SIM_EIO when it cannot be read;
 * SIM_ENOMEM. */
int app_names_load(app_names *n, const char *path, sim_err *err);

/* Frees what `n` owns and zeroes it. */
void app_names_fini(app_names *n);

/* The display name of a swept key (or "seed"). Valid while `n` and `key` live. */
const char *app_names_key(const app_names *n, const char *key);

/* The display name of `value`, a value of swept key `key`. Valid while `n` and `value` live. */
const char *app_names_value(const app_names *n, const char *key, const char *value);

/* The name `buf` (UTF-8, room for `size` bytes) as a reader of a table or a figure sees it, in
 * place: a Unicode space (no-break, thin, ideographic: Zs) is a space, a format character that
 * draws nothing (zero width space and joiners, direction marks, soft hyphen, word joiner,
 * byte-order mark: Cf) is no character, a run of spaces is one and none opens or ends the
 * name, and the rest is put in NFC (libunistring's u8_normalize; cut by whole characters to
 * `size`), so that canonically equivalent spellings, a precomposed "é" and an "e" with a
 * combining acute accent, are one text. Two names that differ only so are one name on the page
 * ("AR" and "AR" with a zero width space, "café" composed and decomposed, were two groups drawn
 * alike, exit 0). Combining marks are kept: an "e" with an accent no character precomposes
 * stays so. Text that is no UTF-8 is left as it is. */
void app_names_shown(char *buf, size_t size);

#endif
