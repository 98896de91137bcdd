/* Shared helpers of the adpsgd suites (tests/harness_adpsgd.h). */
#include "harness_adpsgd.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "protocols/adpsgd_state.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/tensor.h"

double adpt_report(const char *dir, const char *key)
{
    return harness_summary_number(dir, key);
}

msg_line *adpt_messages(const char *dir, size_t *n)
{
    char *ev = harness_slurp(dir, "events.csv");
    size_t cap = 1024;
    msg_line *m = malloc(cap * sizeof(*m));
    *n = 0;
    for (char *line = strchr(ev, '\n'); line != NULL && line[1] != '\0';
         line = strchr(line + 1, '\n')) {
        long long t, w, p;
        unsigned long long seq, bytes, tag;
        char what[16];
        if (sscanf(line + 1, "%lld,%15[^,],%lld,%lld,%llu,%llu,%llu", &t, what, &w, &p, &seq,
                   &bytes, &tag) != 7 ||
            strcmp(what, "msg") != 0)
            continue;
        if (*n == cap)
            m = realloc(m, (cap *= 2) * sizeof(*m));
        m[(*n)++] = (msg_line){ t, (uint32_t)w, (uint32_t)p, tag, bytes };
    }
    free(ev);
    return m;
}

const char adpt_avg_json[] = "tests/scenarios/adpsgd/avg.json";

void adpt_observe(void *ud, sim_ctx *ctx)
{
    probe *pr = ud;
    pr->P = sim_ctx_num_params(ctx);
    pr->n = sim_ctx_workers(ctx);
    ck_assert_uint_le(pr->n, MAX_W);
    ck_assert_uint_lt(pr->k, MAX_EVALS);
    const float *xs[MAX_W];
    for (uint32_t w = 0; w < pr->n; w++) {
        xs[w] = sim_ctx_params(ctx, w);
        pr->fnv[pr->k][w] = xs[w] != NULL ? sim_tensor_checksum(xs[w], pr->P) : 0;
        pr->down[pr->k][w] = sim_ctx_down(ctx, w);
    }
    pr->t[pr->k] = sim_ctx_now(ctx);
    if (pr->P > 0) {
        pr->cons[pr->k] = sim_tensor_consensus(xs, pr->n, pr->P);
        if (pr->sum0 == NULL)
            pr->sum0 = calloc(pr->P, sizeof(double));
        for (size_t e = 0; e < pr->P; e++) {
            double s = 0.0;
            for (uint32_t w = 0; w < pr->n; w++) {
                s += (double)xs[w][e];
                if (pr->k == 0 && fabs((double)xs[w][e]) > pr->max_abs)
                    pr->max_abs = fabs((double)xs[w][e]);
            }
            if (pr->k == 0)
                pr->sum0[e] = s;
            else if (fabs(s - pr->sum0[e]) > pr->max_dev)
                pr->max_dev = fabs(s - pr->sum0[e]);
        }
    }
    pr->k++;
}

const char adpt_pair_json[] = "tests/scenarios/adpsgd/pair.json";
