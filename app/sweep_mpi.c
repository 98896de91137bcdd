/* Sweeps under MPI: every rank's load held to rank 0's (see sweep.h, app_sweep_mpi_agree). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/mpi.h"
#include "app/sweep.h"
#include "app/sweep_state.h"
#include "scenario/scenario.h"
#include "sim/fnv.h"

/* What a load of the sweep read, as text: a header line (the FNV-1a 64 of the output directory,
 * of the base's path and of the base's bytes, and the number of points), then a line per point
 * (the FNV-1a 64 of its run directory's name, its scenario hash, and what its validation read,
 * sim_scenario_inputs_text, or "-"). malloc'd, *len its bytes; NULL when out of memory. */
static char *digest(const app_sweep *sw, size_t *len)
{
    size_t size = 128;
    for (size_t k = 0; k < sw->npoints; k++)
        size += 40 + (sw->points[k].inputs != NULL ? strlen(sw->points[k].inputs) : 1);
    char *d = malloc(size);
    if (d == NULL)
        return NULL;
    size_t n = (size_t)snprintf(
        d, size, "%016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %zu\n",
        sim_fnv_text(SIM_FNV_OFFSET, sw->dir), sim_fnv_text(SIM_FNV_OFFSET, sw->base),
        sim_fnv_bytes(SIM_FNV_OFFSET, sw->base_text, sw->base_len), sw->npoints);
    for (size_t k = 0; k < sw->npoints; k++) {
        const point *p = &sw->points[k];
        n += (size_t)snprintf(d + n, size - n, "%016" PRIx64 " %016" PRIx64 " %s\n",
                              sim_fnv_text(SIM_FNV_OFFSET, p->name), p->hash,
                              p->inputs != NULL ? p->inputs : "-");
    }
    *len = n;
    return d;
}

#define AGAIN "(edited while the ranks loaded the sweep): nothing run, run the sweep again"

/* Point k's line differs from rank 0's, `theirs` (of `len` bytes, without its '\n'): its
 * scenario loaded again and held to rank 0's inputs names the file edited, else the point. */
static int point_differs(const app_sweep *sw, int rank, size_t k, const char *theirs, size_t len,
                         sim_err *err)
{
    if (len < 17 || strtoull(theirs, NULL, 16) != sim_fnv_text(SIM_FNV_OFFSET, sw->points[k].name))
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "rank %d: its points are not those rank 0 read " AGAIN, rank);
    const char *text = memchr(theirs + 17, ' ', len - 17);
    char *inputs = text != NULL ? strndup(text + 1, len - (size_t)(text + 1 - theirs)) : NULL;
    scratch s;
    sim_err e;
    sim_err_clear(&e);
    int rc = sw_scratch_init(sw, &s, err);
    if (rc != SIM_OK || inputs == NULL) {
        free(inputs);
        sw_scratch_fini(&s);
        return rc != SIM_OK ? rc : sw_oom(err);
    }
    size_t n = sw_point_sets(sw, k, &s);
    sim_scenario *sc = sim_scenario_parse(sw->base_text, sw->base_len, sw->base, s.sets, n, &e);
    /* A load that fails now names the file as well (an edit that broke it). */
    rc = sc == NULL                 ? e.code
         : strcmp(inputs, "-") != 0 ? sim_scenario_inputs_hold(sc, inputs, &e)
                                    : SIM_OK;
    sim_scenario_destroy(sc);
    sw_scratch_fini(&s);
    free(inputs);
    if (rc != SIM_OK && e.code != SIM_ENOMEM) {
        char inner[SIM_ERR_TEXT_MAX];
        sim_err_format(&e, inner, sizeof(inner));
        return sim_err_set(err, SIM_ESCENARIO, "$.grid",
                           "rank %d: point %zu (%s): %s, the first run being rank 0's load " AGAIN,
                           rank, k, sw->points[k].name, inner);
    }
    return sim_err_set(err, SIM_ESCENARIO, "$.grid",
                       "rank %d: point %zu (%s): its scenario or a file it reads (the base, a "
                       "compute.profile, a trace, LIBSVM data) is not what rank 0 read " AGAIN,
                       rank, k, sw->points[k].name);
}

/* The header lines `mine` and `theirs` (rank 0's) differ: the base's bytes alone, or the
 * sweep file. */
static int header_differs(const app_sweep *sw, int rank, const char *mine, const char *theirs,
                          sim_err *err)
{
    size_t ml = strcspn(mine, "\n"), tl = strcspn(theirs, "\n");
    if (ml == tl && ml > 50 && memcmp(mine, theirs, 34) == 0 &&
        memcmp(mine + 50, theirs + 50, ml - 50) == 0)
        return sim_err_set(err, SIM_ESCENARIO, "$.base",
                           "rank %d: %s: its bytes are not those rank 0 read " AGAIN, rank,
                           sw->base);
    return sim_err_set(err, SIM_ESCENARIO, NULL,
                       "rank %d: its bytes are not those rank 0 read " AGAIN, rank);
}

/* Whether this rank's digest `mine` is rank 0's `theirs`; if not, `err` says which file. */
static int same_as(const app_sweep *sw, int rank, const char *mine, size_t mlen, const char *theirs,
                   size_t tlen, sim_err *err)
{
    const char *a = mine, *b = theirs, *aend = mine + mlen, *bend = theirs + tlen;
    for (size_t line = 0; a < aend && b < bend; line++) {
        const char *ae = memchr(a, '\n', (size_t)(aend - a)),
                   *be = memchr(b, '\n', (size_t)(bend - b));
        if (ae == NULL || be == NULL)
            break;
        if (ae - a != be - b || memcmp(a, b, (size_t)(ae - a)) != 0)
            return line == 0 ? header_differs(sw, rank, a, b, err)
                             : point_differs(sw, rank, line - 1, b, (size_t)(be - b), err);
        a = ae + 1;
        b = be + 1;
    }
    if (a == aend && b == bend)
        return SIM_OK;
    return sim_err_set(err, SIM_ESCENARIO, NULL,
                       "rank %d: its points are not those rank 0 read " AGAIN, rank);
}

int app_sweep_mpi_agree(const app_sweep *sw, int rank, sim_err *err)
{
    size_t len = 0;
    char *mine = sw != NULL ? digest(sw, &len) : NULL;
    if (sw != NULL && mine == NULL)
        sw_oom(err);
    /* Rank 0's digest: its length (-1: its load failed), then its bytes. */
    long long n = rank == 0 ? (mine != NULL ? (long long)len : -1) : 0;
    int verdict = APP_SWEEP_AGREE;
    if (app_mpi_bcast(&n, sizeof(n), err) != SIM_OK)
        verdict = APP_SWEEP_SAY;
    char *theirs = rank != 0 && n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (verdict == APP_SWEEP_AGREE && n >= 0 &&
        app_mpi_bcast(rank == 0 ? mine : theirs, (size_t)n, err) != SIM_OK)
        verdict = APP_SWEEP_SAY;
    if (theirs != NULL)
        theirs[n] = '\0';
    if (verdict != APP_SWEEP_AGREE) {
        /* MPI failed: said */
    } else if (n < 0) {
        verdict = rank == 0 ? APP_SWEEP_SAY : APP_SWEEP_QUIET; /* rank 0 says why */
    } else if (mine == NULL) { /* this rank's load failed where rank 0's did not */
        sim_err e = *err;
        char inner[SIM_ERR_TEXT_MAX];
        sim_err_format(&e, inner, sizeof(inner));
        sim_err_clear(err);
        sim_err_set(err, e.code, NULL,
                    "rank %d: %s (rank 0 loaded the sweep: a file edited while "
                    "the ranks loaded it?)",
                    rank, inner);
        verdict = APP_SWEEP_SAY;
    } else if (rank != 0 && theirs == NULL) {
        sw_oom(err);
        verdict = APP_SWEEP_SAY;
    } else if (rank != 0 && same_as(sw, rank, mine, len, theirs, (size_t)n, err) != SIM_OK) {
        sim_err_file(err, sw->file);
        verdict = APP_SWEEP_SAY;
    }
    free(mine);
    free(theirs);
    if (app_mpi_all(verdict == APP_SWEEP_AGREE))
        return APP_SWEEP_AGREE;
    if (verdict == APP_SWEEP_AGREE && rank == 0) {
        sim_err_clear(err);
        sim_err_set(err, SIM_ESCENARIO, NULL,
                    "another rank refused the sweep (its message says why): nothing run");
        sim_err_file(err, sw->file);
        return APP_SWEEP_SAY;
    }
    return verdict == APP_SWEEP_AGREE ? APP_SWEEP_QUIET : verdict;
}

void app_sweep_mpi_test_hook(int rank, bool loaded)
{
    const char *path = getenv(APP_SWEEP_MPI_EDIT_ENV);
    if (path == NULL || path[0] == '\0')
        return;
    if (rank != 0 && !loaded) {
        app_mpi_barrier(); /* until rank 0 has loaded and edited */
    } else if (rank == 0 && loaded) {
        char next[PATH_TEXT + 8];
        snprintf(next, sizeof(next), "%s.next", path);
        if (rename(next, path) != 0)
            perror(next);
        app_mpi_barrier();
    }
}
