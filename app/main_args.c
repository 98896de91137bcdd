/* The command line: exit codes, usage errors, error reports and numbers on the command line
 * (see app/main_state.h). */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "app/main_state.h"
#include "sim/err.h"
#include "sim/pool.h"

/* The message escaped as every message is (sim_err_warn): an argument quoted in it is any
 * bytes (`hetsim $'a\e[31m'` sent the terminal its escape sequence in "unknown command"). */
int cli_usage(const char *fmt, ...)
{
    char text[SIM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    sim_err_warn(stderr, "%s", text);
    fputs("(see hetsim --help)\n", stderr);
    return EXIT_USAGE;
}

/* EXIT_OK, or EXIT_USAGE naming `opt` when `path` (a `what`: "directory" or "file") is longer
 * than CLI_DIR_MAX bytes or holds a name between '/'s longer than `name_max` (`why` says why
 * no longer). */
static int path_fits(const char *opt, const char *what, const char *path, size_t name_max,
                     const char *why)
{
    size_t name = 0, longest = 0, len = strlen(path);
    for (size_t i = 0; i < len; i++) {
        name = path[i] == '/' ? 0 : name + 1;
        longest = name > longest ? name : longest;
    }
    if (len > CLI_DIR_MAX)
        return cli_usage("%s: the %s's path is too long (%zu bytes; at most %d)", opt, what, len,
                         CLI_DIR_MAX);
    if (longest > name_max)
        return cli_usage("%s: a name in the %s's path is too long (%zu bytes between '/'s; at "
                         "most %zu, %s)",
                         opt, what, longest, name_max, why);
    return EXIT_OK;
}

int cli_out_dir(const char *opt, const char *dir)
{
    return path_fits(opt, "directory", dir, CLI_NAME_MAX, "as DIR.partial is written beside DIR");
}

int cli_out_file(const char *opt, const char *file)
{
    return path_fits(opt, "file", file, CLI_FILE_NAME_MAX, "as FILE.tmp is written beside FILE");
}

int cli_report(const sim_err *err)
{
    char buf[SIM_ERR_TEXT_MAX];
    sim_err_format(err, buf, sizeof(buf));
    fprintf(stderr, "hetsim: %s\n", buf);
    return err->code == SIM_ESCENARIO || err->code == SIM_EINVAL ? EXIT_USAGE : EXIT_RUN;
}

/* An option's whole value as a decimal integer in [lo, hi]: digits only (no sign, space or
 * suffix), no leading zero ("05" was 5, where a seed, a grid index and --tune-seeds refuse
 * one), no overflow. Returns false for anything else. */
bool cli_count(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out)
{
    unsigned long long v = 0;
    if (*s == '\0' || (s[0] == '0' && s[1] != '\0'))
        return false;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || v > (ULLONG_MAX - (unsigned)(*s - '0')) / 10)
            return false;
        v = v * 10 + (unsigned)(*s - '0');
    }
    *out = v;
    return v >= lo && v <= hi;
}

/* Whether `s` is one of the NULL-terminated `list`. */
static bool listed(const char *s, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

/* The options whose value names a file or a directory. */
static const char *const path_options[] = {
    "-o", "--golden", "--junit", "--names", "--style", NULL
};

/* Every option of hetsim's commands, each between spaces. */
static const char all_options[] =
    " -o --set --threads --quiet -q -j --index --list --mpi --golden --update --seeds --exact"
    " --allow-scenario-change --junit --format --style --by --x --band --size --title --where"
    " --best-over --tune-seeds --target --ttt --label --names --baseline --grid --help --version ";

/* Whether `s` is an option of hetsim's: as an option's value, a value forgotten (`run s.json
 * -o --quiet` ran into a directory "--quiet", exit 0). */
static bool an_option(const char *s)
{
    char word[40];
    return s[0] == '-' && strlen(s) < sizeof(word) - 2 && strchr(s, ' ') == NULL &&
           snprintf(word, sizeof(word), " %s ", s) > 0 && strstr(all_options, word) != NULL;
}

int cli_once(int argc, char **argv, const char *const *single, const char *const *repeatable)
{
    for (int i = 0; i < argc; i++) {
        bool once = listed(argv[i], single);
        /* An empty name names no file: `report ""` read /index.csv, `check S --golden ""`
         * said ": no golden here", `run ""` "cannot open: No such file or directory". */
        if (argv[i][0] == '\0' ||
            (listed(argv[i], path_options) && i + 1 < argc && argv[i + 1][0] == '\0'))
            return argv[i][0] == '\0' ? cli_usage("%s", "an empty argument, where a file or a "
                                                        "directory is named")
                                      : cli_usage("%s: an empty name", argv[i]);
        if (!once && !listed(argv[i], repeatable))
            continue;
        /* A title is any text, "-o" too (tests/test_cli.c). */
        if (i + 1 < argc && strcmp(argv[i], "--title") != 0 && an_option(argv[i + 1]))
            return cli_usage("%s needs a value, got the option %s", argv[i], argv[i + 1]);
        /* An earlier occurrence as an option, not as another option's value. */
        for (int j = 0; once && j < i; j++) {
            if (strcmp(argv[j], argv[i]) == 0)
                return cli_usage("%s given twice (it takes one value)", argv[i]);
            if (listed(argv[j], single) || listed(argv[j], repeatable))
                j++;
        }
        i++; /* its value */
    }
    return EXIT_OK;
}

/* --threads's value: a count in [1, SIM_POOL_MAX_THREADS]. */
int cli_threads(const char *v, unsigned *out)
{
    unsigned long long n;
    if (!cli_count(v, 1, SIM_POOL_MAX_THREADS, &n))
        return cli_usage("--threads needs a count in [1, %d], got \"%s\"", SIM_POOL_MAX_THREADS, v);
    *out = (unsigned)n;
    return EXIT_OK;
}
