/* The ownership rule as a user meets it on the command line (issue 38): every command writes
 * into its own output alone (a run, a sweep, a check's output, a golden), never inside or over
 * another hetsim output; an output that is a file, a path too long to write or a link is told
 * before anything is written. Runs the built binary ($HETSIM). */
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

/* ---- Places: the ownership rule (issue 38, items 4 and 5) ------------------------------ */

/* A scenario of a few milliseconds, for the outputs of the cases below. */
static const char tiny_json[] =
    "{ \"name\": \"tiny\", \"seed\": 5, \"workers\": 3, \"compute\": { \"iteration_ms\": 10 },\n"
    "  \"workload\": { \"dataset\": { \"name\": \"synthetic\", \"samples\": 2000, \"dim\": 16,\n"
    "                               \"classes\": 4 },\n"
    "                \"model\": { \"name\": \"softmax\" }, \"batch\": 16, \"lr\": 0.05 },\n"
    "  \"protocol\": { \"name\": \"allreduce\" },\n"
    "  \"stop\": { \"time_s\": 0.5 }, \"eval\": { \"every_s\": 0.25, \"samples\": 200 } }\n";

/* Runs `hetsim` with `args`, each "%s" in them replaced by `dir`; returns the result. */
static harness_result in_dir(const char *dir, const char *const *args)
{
    static char text[16][1200];
    const char *argv[17] = { NULL };
    for (size_t i = 0; args[i] != NULL && i < 16; i++) {
        const char *at = strstr(args[i], "%s");
        if (at != NULL)
            snprintf(text[i], sizeof(text[i]), "%.*s%s%s", (int)(at - args[i]), args[i], dir,
                     at + 2);
        else
            snprintf(text[i], sizeof(text[i]), "%s", args[i]);
        argv[i] = text[i];
    }
    return harness_hetsim(argv);
}

/* Two runs, a sweep and a second copy of it, and a golden, under a fresh directory. */
static char *outputs(void)
{
    char *dir = harness_tmpdir("cli");
    harness_write(dir, "tiny.json", tiny_json);
    harness_write(dir, "sw.json", "{ \"base\": \"tiny.json\", \"seeds\": 2 }\n");
    const char *const *cmds[] = {
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/a", "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/b", "--set", "seed=9", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/sw", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/sw2", "--quiet", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "--update", "--seeds", "3",
                          NULL },
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        harness_result r = in_dir(dir, cmds[i]);
        ck_assert_msg(r.status == 0, "%s: %s", cmds[i][0], r.err);
    }
    return dir;
}

/* An output directory that exists and is no directory (a file, a FIFO) is bad usage, exit 2,
 * as `run -o FILE` is, for every command, nothing changed: plot -o FILE (and check -o) exited
 * 1 as a failed write. */
START_TEST(an_output_directory_that_is_a_file_is_refused_with_exit_2)
{
    char *dir = harness_tmpdir("cli"), file[600], fifo[600];
    snprintf(file, sizeof(file), "%s/figures", dir);
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    harness_write(dir, "figures", "2.385\n");
    harness_write(dir, "tiny.json", tiny_json);
    ck_assert_int_eq(
        in_dir(dir, (const char *[]){ "run", "%s/tiny.json", "-o", "%s/a", "--quiet", NULL })
            .status,
        0);
    char run[600];
    snprintf(run, sizeof(run), "%s/a", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *outs[] = { file, fifo };
    for (size_t i = 0; i < 2; i++) {
        harness_result r = harness_hetsim((const char *[]){ "plot", run, "-o", outs[i], NULL });
        ck_assert_msg(r.status == 2 && strstr(r.err, "exists and is not a directory") != NULL,
                      "-o %s: exit %d: %s", outs[i], r.status, r.err);
    }
    char *text = harness_slurp(dir, "figures");
    ck_assert_str_eq(text, "2.385\n");
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* An -o too long for the system (a name of 5,000 bytes, or a path of 5,000 in names of 200)
 * is bad usage naming the option, exit 2, nothing created, for run, sweep, check and plot
 * (issue 38, third probe: ENAMETOOLONG once begun, exit 1; the long path's parents made). */
START_TEST(an_output_directory_too_long_to_write_is_bad_usage)
{
    char *dir = outputs(), name[5100], deep[5200], run[600], before[16384], after[16384];
    snprintf(run, sizeof(run), "%s/a", dir);
    memset(name, 'q', 5000);
    name[5000] = '\0';
    size_t len = (size_t)snprintf(deep, sizeof(deep), "%s", dir);
    while (len < 5000)
        len += (size_t)snprintf(deep + len, sizeof(deep) - len, "/%.200s", name);
    harness_tree_digest(dir, before, sizeof(before));
    const char *outs[] = { name, deep };
    for (size_t i = 0; i < 2; i++) {
        char scenario[600], sweep[600], golden[600];
        snprintf(scenario, sizeof(scenario), "%s/tiny.json", dir);
        snprintf(sweep, sizeof(sweep), "%s/sw.json", dir);
        snprintf(golden, sizeof(golden), "%s/g", dir);
        const char *const *cmds[] = {
            (const char *[]){ "run", scenario, "-o", outs[i], "--quiet", NULL },
            (const char *[]){ "sweep", sweep, "-o", outs[i], "--quiet", NULL },
            (const char *[]){ "check", scenario, "--golden", golden, "-o", outs[i], NULL },
            (const char *[]){ "plot", run, "-o", outs[i], NULL },
        };
        for (size_t j = 0; j < sizeof(cmds) / sizeof(cmds[0]); j++) {
            harness_result r = harness_hetsim(cmds[j]);
            ck_assert_msg(r.status == 2 && strstr(r.err, "hetsim: -o: ") == r.err &&
                              strstr(r.err, "too long") != NULL,
                          "%s -o (%zu bytes): exit %d: %.300s", cmds[j][0], strlen(outs[i]),
                          r.status, r.err);
            harness_tree_digest(dir, after, sizeof(after));
            ck_assert_msg(strcmp(before, after) == 0, "%s changed something", cmds[j][0]);
        }
    }
    harness_cleanup(dir);
}
END_TEST

/* An output.dir in a scenario (or set with --set) or a sweep file too long to be written, and a
 * --junit report's path too long to be written, are bad usage naming the file and path (or the
 * option) before anything is made, as -o is: they failed once begun (exit 1), a run and a
 * sweep after making the directory's parents. A report's name of 251 bytes (FILE.tmp is 255)
 * is written. */
START_TEST(an_output_dir_or_a_junit_report_too_long_to_write_is_bad_usage)
{
    char *dir = outputs(), name[300], json[1600], sweep[1200], before[16384], after[16384];
    char s[600], sw[600], g[600], o[600], set[1200], junit[5200], ok[600];
    memset(name, 'q', 251);
    name[251] = '\0';
    snprintf(json, sizeof(json),
             "{ \"base\": \"tiny.json\", \"seeds\": 2, \"output\": { "
             "\"dir\": \"%s/new/%sq\" } }\n",
             dir, name);
    harness_write(dir, "long.json", json);
    snprintf(set, sizeof(set), "output.dir=\"%s/new/%sq\"", dir, name);
    snprintf(s, sizeof(s), "%s/tiny.json", dir);
    snprintf(sw, sizeof(sw), "%s/long.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(o, sizeof(o), "%s/co", dir);
    size_t len = (size_t)snprintf(junit, sizeof(junit), "%s/new", dir);
    while (len < 4100)
        len += (size_t)snprintf(junit + len, sizeof(junit) - len, "/%.200s", name);
    snprintf(sweep, sizeof(sweep), "%s/new/%sq", dir, name);
    harness_tree_digest(dir, before, sizeof(before));
    const char *const *cmds[] = {
        (const char *[]){ "run", s, "--set", set, "--quiet", NULL },
        (const char *[]){ "sweep", sw, "--quiet", NULL },
        (const char *[]){ "check", s, "--golden", g, "--junit", sweep, NULL },
        (const char *[]){ "check", s, "--golden", g, "--junit", junit, NULL },
    };
    const char *says[] = { "tiny.json: $.output.dir: a name in the directory's path is too long "
                           "(252 bytes between '/'s; at most 247",
                           "long.json: $.output.dir: a name in the directory's path is too long",
                           "hetsim: --junit: a name in the file's path is too long (252 bytes "
                           "between '/'s; at most 251, as FILE.tmp is written beside FILE)",
                           "hetsim: --junit: the file's path is too long" };
    for (size_t j = 0; j < sizeof(cmds) / sizeof(cmds[0]); j++) {
        harness_result r = harness_hetsim(cmds[j]);
        ck_assert_msg(r.status == 2 && strstr(r.err, says[j]) != NULL, "%zu: exit %d: %.400s", j,
                      r.status, r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%zu changed something", j);
    }
    snprintf(ok, sizeof(ok), "%s/%s", dir, name);
    harness_result r =
        harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, "--junit", ok, NULL });
    ck_assert_msg(r.status == 0 && harness_exists(ok), "exit %d: %s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* A plot writes figures into its own run (the only run it draws) or its own sweep (the one
 * plot --by draws), or into a place that is no hetsim output; every other run, sweep, golden
 * or work directory is refused with exit 2 and left as it was (plot B -o A replaced A's own
 * figures with B's). Several runs without -o are refused: the first run's directory is not
 * theirs. */
START_TEST(plot_writes_into_its_own_run_or_sweep_and_no_other_hetsim_output)
{
    char *dir = outputs(), before[65536], after[65536];
    const char *const *refused[] = {
        (const char *[]){ "plot", "%s/b", "-o", "%s/a", NULL },
        (const char *[]){ "plot", "%s/sw", "--by", "seed", "-o", "%s/a", NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/g", NULL },
        (const char *[]){ "plot", "%s/sw", "--by", "seed", "-o", "%s/g", NULL },
        (const char *[]){ "plot", "%s/b", "-o", "%s/sw", NULL },
        (const char *[]){ "plot", "%s/sw", "--by", "seed", "-o", "%s/sw2", NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/g/seed-5", NULL },
        (const char *[]){ "plot", "%s/a", "%s/b", NULL },
    };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        harness_result r = in_dir(dir, refused[i]);
        ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", i, r.status, r.err);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strstr(r.err, "a hetsim") != NULL || strstr(r.err, "needs -o DIR") != NULL,
                      "case %zu: %s", i, r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "case %zu changed something", i);
    }
    const char *const *allowed[] = {
        (const char *[]){ "plot", "%s/a", NULL },
        (const char *[]){ "plot", "%s/sw", "--by", "seed", NULL },
        (const char *[]){ "plot", "%s/a", "%s/b", "-o", "%s/figs", NULL },
    };
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        harness_result r = in_dir(dir, allowed[i]);
        ck_assert_msg(r.status == 0, "case %zu: exit %d: %s", i, r.status, r.err);
    }
    char path[1300];
    static const char *const made[] = { "a/convergence.png", "sw/by-seed.png",
                                        "figs/breakdown.png" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
        ck_assert_msg(harness_exists(path), "no %s", made[i]);
    }
    harness_cleanup(dir);
}
END_TEST

/* plot -o DIR wrote its figures over whatever held their names in a folder no plot wrote: a
 * user's own convergence.png or by-seed.png was replaced, exit 0, a FIFO or a link there lost
 * its name (no hetsim command replaces a file it does not own, docs/usage.md). A folder a plot
 * wrote holds its mark, .hetsim-plot, and is drawn again; in a folder without it, a file named
 * as one of the plot's is refused, exit 2, nothing changed; a FIFO, link or directory at such a
 * name is refused anywhere. Other files in the folder do not matter. */
START_TEST(a_plot_never_replaces_a_file_no_plot_wrote_in_its_output)
{
    static const struct {
        const char *file;
        bool by; /* plot --by seed, else a plot of runs a and b */
    } cases[] = {
        { "convergence.png", false }, { "throughput.png", false }, { "by-seed.png", true },
        { "ttt-by-seed.csv", true },  { "by-seed-0.csv", true },
    };
    char *dir = outputs(), figs[1200], path[1300], mark[1300];
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(mark, sizeof(mark), "%s/.hetsim-plot", figs);
    ck_assert_int_eq(mkdir(figs, 0755), 0);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        snprintf(path, sizeof(path), "%s/%s", figs, cases[c].file);
        harness_write(figs, cases[c].file, "my own figure\n");
        harness_result r =
            cases[c].by
                ? in_dir(dir,
                         (const char *[]){ "plot", "%s/sw", "--by", "seed", "-o", "%s/figs", NULL })
                : in_dir(dir, (const char *[]){ "plot", "%s/a", "%s/b", "-o", "%s/figs", NULL });
        ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", c, r.status, r.err);
        ck_assert_msg(strstr(r.err, "is no file of a hetsim plot") != NULL, "%s", r.err);
        char *text = harness_read(path, NULL);
        ck_assert_str_eq(text, "my own figure\n");
        free(text);
        ck_assert(!harness_exists(mark));
        ck_assert_int_eq(remove(path), 0);
    }
    harness_write(figs, "notes.txt", "mine\n");
    harness_write(figs, "convergence.png.old", "mine\n");
    for (int again = 0; again < 2; again++) {
        harness_result r =
            in_dir(dir, (const char *[]){ "plot", "%s/a", "%s/b", "-o", "%s/figs", NULL });
        ck_assert_msg(r.status == 0, "draw %d: exit %d: %s", again, r.status, r.err);
        r = in_dir(dir, (const char *[]){ "plot", "%s/sw", "--by", "seed", "-o", "%s/figs", NULL });
        ck_assert_msg(r.status == 0, "draw --by %d: exit %d: %s", again, r.status, r.err);
    }
    ck_assert(harness_exists(mark));
    snprintf(path, sizeof(path), "%s/convergence.png", figs);
    ck_assert_int_eq(remove(path), 0);
    ck_assert_int_eq(mkfifo(path, 0644), 0);
    harness_result r =
        in_dir(dir, (const char *[]){ "plot", "%s/a", "%s/b", "-o", "%s/figs", NULL });
    ck_assert_msg(r.status == 2, "a FIFO: exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "is a FIFO, no file of a hetsim plot") != NULL, "%s", r.err);
    struct stat st;
    ck_assert(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
    ck_assert_int_eq(remove(path), 0);
    snprintf(path, sizeof(path), "%s/a/throughput.png", dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    r = in_dir(dir, (const char *[]){ "plot", "%s/a", NULL });
    ck_assert_msg(r.status == 2, "a directory in the run: exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "is a directory, no file of a hetsim plot") != NULL, "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

static bool is_link_to(const char *path, const char *target)
{
    char buf[1024];
    ssize_t n = readlink(path, buf, sizeof(buf) - 1);
    if (n < 0)
        return false;
    buf[n] = '\0';
    return strcmp(buf, target) == 0;
}

/* An output named by a symbolic link to a directory is its target, written whole: the
 * target's lock, work directory and rename, the link kept (a run deleted the target's files
 * through the link and left the link as LINK.partial, which wedged every later run). The
 * same for a run, a sweep, a golden update and a figure; a link to a run not drawn is that
 * run, refused. */
START_TEST(an_output_named_by_a_link_is_its_target_written_whole_and_the_link_stays)
{
    char *dir = outputs(), path[1300];
    static const char *const links[][2] = {
        { "real", "a" }, { "dang", "made/run" }, { "swl", "swt" }, { "gl", "gt" }
    };
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, links[i][0]);
        ck_assert_int_eq(symlink(links[i][1], path), 0);
    }
    const char *const *cmds[] = {
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/real", "--set", "seed=7", "--quiet",
                          NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/real", "--set", "seed=8", "--quiet",
                          NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/dang", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/swl", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/swl", "--quiet", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/gl", "--update", "--seeds", "3",
                          NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/gl", "--update", "--seeds", "3",
                          NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/real", NULL },
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        harness_result r = in_dir(dir, cmds[i]);
        ck_assert_msg(r.status == 0, "case %zu: exit %d: %s", i, r.status, r.err);
    }
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, links[i][0]);
        ck_assert_msg(is_link_to(path, links[i][1]), "%s is no longer a link", links[i][0]);
    }
    static const char *const present[] = { "a/run.json", "a/convergence.png", "made/run/run.json",
                                           "swt/index.csv", "gt/seeds" };
    for (size_t i = 0; i < sizeof(present) / sizeof(present[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, present[i]);
        ck_assert_msg(harness_exists(path), "no %s", present[i]);
    }
    char *run = harness_slurp(dir, "a/run.json");
    ck_assert_ptr_nonnull(strstr(run, "\"seed\": 8"));
    free(run);
    static const char *const absent[] = { "real.partial", "a.partial",  "real.lock", "a.lock",
                                          "gl.partial",   "gt.partial", "swl.lock" };
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, absent[i]);
        struct stat st;
        ck_assert_msg(lstat(path, &st) != 0, "%s left", absent[i]);
    }
    harness_result r = in_dir(dir, (const char *[]){ "plot", "%s/b", "-o", "%s/real", NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "a hetsim run directory") != NULL, "exit %d: %s",
                  r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep's points are its own: a run into a point's directory, or anywhere inside the sweep's,
 * is refused with exit 2 naming the sweep's directory, everything as it was (run -o SW/POINT
 * replaced the point's run, exit 0), also with an owner token that is not the sweep's (another
 * process's); the sweep itself runs a removed point again, and --index runs one. */
START_TEST(a_sweeps_points_are_run_by_the_sweep_alone)
{
    char *dir = outputs(), before[65536], after[65536], token[1300], path[1300];
    const char *const *refused[] = {
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/sw/seed=5", "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/sw/seed=6/", "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/sw/new", "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/sw/new/deeper", "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/sw/seed=5", "--quiet", NULL },
    };
    size_t n = sizeof(refused) / sizeof(refused[0]);
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < n; i++) {
        snprintf(token, sizeof(token), "1:%s/sw/seed=5", dir);
        if (i == n - 1) /* the token names process 1, not the run's parent */
            setenv("HETSIM_SWEEP_POINT", token, 1);
        harness_result r = in_dir(dir, refused[i]);
        unsetenv("HETSIM_SWEEP_POINT");
        ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", i, r.status, r.err);
        ck_assert_msg(strstr(r.err, "/sw, a hetsim sweep directory") != NULL, "case %zu: %s", i,
                      r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "case %zu changed something", i);
    }
    snprintf(path, sizeof(path), "rm -rf '%s/sw/seed=6'", dir);
    ck_assert_int_eq(system(path), 0);
    const char *const *cmds[] = {
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/sw", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/sw", "--index", "0", "--quiet", NULL },
    };
    for (size_t i = 0; i < 2; i++) {
        harness_result r = in_dir(dir, cmds[i]);
        ck_assert_msg(r.status == 0, "case %zu: exit %d: %s", i, r.status, r.err);
    }
    snprintf(path, sizeof(path), "%s/sw/seed=6/summary.json", dir);
    ck_assert(harness_exists(path));
    harness_cleanup(dir);
}
END_TEST

/* A check's output directory (-o: check.csv beside the check's seed runs) is the check's alone:
 * a run into one of its seed runs, or anywhere inside it, a sweep or another check inside it
 * and a plot over it are refused with exit 2 naming it, nothing changed (`run -o CO/seed-N`
 * replaced the check's run, exit 0: issue 38, third probe); the check itself writes it again,
 * and a run's figures may still be drawn into the run. */
START_TEST(a_checks_output_is_the_checks_alone)
{
    char *dir = outputs(), before[65536], after[65536], seed[1300];
    harness_result r = in_dir(
        dir, (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", "%s/co", NULL });
    ck_assert_msg(r.status == 0, "check: exit %d: %s", r.status, r.err);
    snprintf(seed, sizeof(seed), "%s/co/seed-*", dir);
    glob_t g;
    ck_assert_int_eq(glob(seed, 0, NULL, &g), 0);
    snprintf(seed, sizeof(seed), "%s", g.gl_pathv[0]);
    globfree(&g);
    const char *const *refused[] = {
        (const char *[]){ "run", "%s/tiny.json", "-o", seed, "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/co/new", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/co/sw", "--quiet", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", "%s/co/sub", NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/co", NULL },
    };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        r = in_dir(dir, refused[i]);
        ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", i, r.status, r.err);
        ck_assert_msg(strstr(r.err, "hetsim check directory") != NULL, "case %zu: %s", i, r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "case %zu changed something", i);
    }
    r = in_dir(dir, (const char *[]){ "plot", seed, NULL });
    ck_assert_msg(r.status == 0, "plot of its seed run: exit %d: %s", r.status, r.err);
    r = in_dir(
        dir, (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", "%s/co", NULL });
    ck_assert_msg(r.status == 0, "check again: exit %d: %s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* An output named with "." components or a trailing slash is the directory itself (issue 38):
 * `run -o A/.` (A a run) was refused as "inside A", and so were a sweep, a check and a plot
 * into their own output named so; each writes it again (a run's work directory is A.partial,
 * not A/..partial), and a hetsim output that is not the command's stays refused, named
 * without the dots. */
START_TEST(an_output_named_with_dots_or_a_trailing_slash_is_the_directory_itself)
{
    char *dir = outputs(), before[16384], after[16384], path[1200];
    harness_result r = in_dir(
        dir, (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", "%s/co", NULL });
    ck_assert_msg(r.status == 0, "check: exit %d: %s", r.status, r.err);
    const char *const *own[] = {
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/a/.", "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s//a/./", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/sw/.", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/./sw/./", "--quiet", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", "%s/co/.", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g/.", "-o", "%s/co", NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/a/.", NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/a/./", NULL },
    };
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        r = in_dir(dir, own[i]);
        ck_assert_msg(r.status == 0, "own %zu: exit %d: %s", i, r.status, r.err);
    }
    snprintf(path, sizeof(path), "%s/a/..partial", dir);
    ck_assert(!harness_exists(path));
    snprintf(path, sizeof(path), "%s/a/run.json", dir);
    ck_assert(harness_exists(path));
    const char *const *refused[] = {
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/sw/./", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/a/.", "--quiet", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", "%s/g/.", NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/b/.", NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/./sw2/", NULL },
    };
    const char *names[] = { "/sw ", "/a ", "/g ", "/b ", "/sw2 " };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        r = in_dir(dir, refused[i]);
        ck_assert_msg(r.status == 2 && strstr(r.err, names[i]) != NULL, "refused %zu: exit %d: %s",
                      i, r.status, r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "refused %zu changed something", i);
    }
    harness_cleanup(dir);
}
END_TEST

/* ".." after a hetsim output is that output's parent, as the kernel takes it (issue 38): the
 * checks cut "A/.." to "A" and refused `run -o A/..` as "inside A", a sweep, a check or a
 * plot into its own output named "OWN/POINT/.." likewise, and a golden updated as
 * "G/seed-5/..". Each command now answers as for the place named plainly: its own output
 * written again, another's refused as that output (not "inside" a run below it), a plain
 * folder taken as such, and a link's ".." the parent of its target; nothing made in A. */
START_TEST(dotdot_after_an_output_is_its_parent_for_every_command)
{
    char *dir = outputs(), before[65536], after[65536], path[1300], seed[1300];
    harness_result r = in_dir(
        dir, (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", "%s/co", NULL });
    ck_assert_msg(r.status == 0, "check: exit %d: %s", r.status, r.err);
    snprintf(seed, sizeof(seed), "%s/co/seed-*", dir);
    glob_t g;
    ck_assert_int_eq(glob(seed, 0, NULL, &g), 0);
    snprintf(seed, sizeof(seed), "%s/..", g.gl_pathv[0]); /* the check's output, co */
    globfree(&g);
    snprintf(path, sizeof(path), "%s/link", dir);
    ck_assert_int_eq(symlink("sw2/seed=5", path), 0);
    const char *const *own[] = {
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/sw/seed=5/..", "--quiet", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g/seed-5/..", "--update",
                          "--seeds", "3", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", seed, NULL },
        (const char *[]){ "plot", "%s/a", "-o", "%s/a/..", NULL },
        (const char *[]){ "plot", "%s/sw", "--by", "seed", "-o", "%s/sw/seed=6/..", NULL },
        (const char *[]){ "plot", "%s/sw/seed=5/..", "--by", "seed", NULL },
        (const char *[]){ "plot", "%s/link/..", "--by", "seed", NULL },
    };
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        r = in_dir(dir, own[i]);
        ck_assert_msg(r.status == 0, "own %zu: exit %d: %s", i, r.status, r.err);
    }
    const char *const *refused[] = {
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/a/..", "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/g/seed-6/..", "--quiet", NULL },
        (const char *[]){ "run", "%s/tiny.json", "-o", "%s/link/..", "--quiet", NULL },
        (const char *[]){ "sweep", "%s/sw.json", "-o", "%s/g/seed-5/..", "--quiet", NULL },
        (const char *[]){ "check", "%s/tiny.json", "--golden", "%s/g", "-o", "%s/g/seed-7/..",
                          NULL },
        (const char *[]){ "plot", "%s/sw/seed=5", "-o", "%s/sw/seed=5/..", NULL },
        (const char *[]){ "plot", "%s/sw", "--by", "seed", "-o", "%s/link/..", NULL },
    };
    const char *says[] = {
        " is not empty and holds no hetsim run",
        "/g is not empty and holds no hetsim run",
        "/sw2 is not empty and holds no hetsim run",
        "/g is a hetsim golden directory, not a",
        "/g is a hetsim golden directory that this command does not own",
        "/sw is a hetsim sweep directory that this command does not own",
        "/sw2 is a hetsim sweep directory that this command does not own",
    };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        r = in_dir(dir, refused[i]);
        ck_assert_msg(r.status == 2 && strstr(r.err, says[i]) != NULL, "refused %zu: exit %d: %s",
                      i, r.status, r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "refused %zu changed something", i);
    }
    snprintf(path, sizeof(path), "%s/a/...partial", dir);
    ck_assert(!harness_exists(path));
    snprintf(path, sizeof(path), "%s/breakdown-by-seed.csv", dir);
    ck_assert(!harness_exists(path)); /* the sweep's figures went into the sweep */
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("cli_places");
    TCase *places = tcase_create("places");
    tcase_add_test(places, plot_writes_into_its_own_run_or_sweep_and_no_other_hetsim_output);
    tcase_add_test(places, a_plot_never_replaces_a_file_no_plot_wrote_in_its_output);
    tcase_add_test(places, an_output_directory_that_is_a_file_is_refused_with_exit_2);
    tcase_add_test(places, an_output_directory_too_long_to_write_is_bad_usage);
    tcase_add_test(places, an_output_dir_or_a_junit_report_too_long_to_write_is_bad_usage);
    tcase_add_test(places,
                   an_output_named_by_a_link_is_its_target_written_whole_and_the_link_stays);
    tcase_add_test(places, a_sweeps_points_are_run_by_the_sweep_alone);
    tcase_add_test(places, a_checks_output_is_the_checks_alone);
    tcase_add_test(places, an_output_named_with_dots_or_a_trailing_slash_is_the_directory_itself);
    tcase_add_test(places, dotdot_after_an_output_is_its_parent_for_every_command);
    tcase_set_timeout(places, 120);
    suite_add_tcase(s, places);
    return s;
}
