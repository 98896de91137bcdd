/* Evaluation and output files of a run (see runtime/outputs.h). */
#include "runtime/outputs.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/output.h"
#include "runtime/jobs.h"
#include "runtime/state.h"
#include "sim/tensor.h"

/* A CSV field: empty for a value that does not exist (NaN). */
static void field(FILE *f, double x)
{
    fputc(',', f);
    if (!isnan(x))
        fprintf(f, "%.9g", x);
}

/* Writes v in decimal at p, then `sep`; returns the end. */
static char *put_u64(char *p, uint64_t v, char sep)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        *p++ = tmp[--n];
    *p++ = sep;
    return p;
}

/* Writes x as "%.*g" with `digits` at p (SIM_OUTPUT_G_MAX bytes free), then `sep`. */
static char *put_g(char *p, double x, int digits, char sep)
{
    p += sim_output_format_g(p, x, digits);
    *p++ = sep;
    return p;
}

/* A byte count of wraps x 2^64 + lo (sim_net_host_wraps): as put_u64 below 2^64, else to 17
 * digits (it wrapped past 2^64 silently, a count that looked small). */
static char *put_bytes(char *p, uint64_t lo, uint64_t wraps, char sep)
{
    return wraps == 0 ? put_u64(p, lo, sep)
                      : put_g(p, (double)wraps * 0x1p64 + (double)lo, 17, sep);
}

/* sim_tensor_consensus(xs, k, n), bit for bit, from one model when all k are the same (the
 * workers of a synchronous protocol share one block): the mean of k copies of a float,
 * summed and divided in double, is that float exactly, so every distance is that of one copy
 * (0, or NaN where a float is not finite), and their sum over k, divided by k, is one's. */
static double shared_consensus(const float *const *xs, size_t k, size_t n)
{
    size_t i = 1;
    while (i < k && xs[i] == xs[0])
        i++;
    return sim_tensor_consensus(xs, i == k ? 1 : k, n);
}

/* The workers an evaluation averages into ctx->eval.ids, in worker order: those up; with
 * none up, those that were up just before the instant of the last failure, whose models are
 * as they stood then (a down worker's model does not change), so that a run whose workers are
 * all down scores the model it ended with whenever its evaluations come (eval.every_s). Each
 * down worker's accounting entered its down state when it failed (sim_run_acct_update). */
static size_t eval_workers(sim_ctx *ctx)
{
    size_t k = 0;
    for (uint32_t w = 0; w < ctx->nworkers; w++)
        if (!sim_cluster_down(ctx->cl, w))
            ctx->eval.ids[k++] = w;
    if (k > 0)
        return k;
    sim_time last = 0;
    for (uint32_t w = 0; w < ctx->nworkers; w++)
        if (ctx->account.worker[w].since > last)
            last = ctx->account.worker[w].since;
    for (uint32_t w = 0; w < ctx->nworkers; w++)
        if (ctx->account.worker[w].since == last)
            ctx->eval.ids[k++] = w;
    return k;
}

/* The mean model over the evaluated workers (eval_workers) into ctx->eval.mean, and the
 * consensus distance mean_w ||x_w - mean||^2; both in worker order. A model of zero floats
 * has neither (the timing-only one: NULL, and NaN). */
static const float *mean_model(sim_ctx *ctx, double *consensus)
{
    size_t P = train_num_params(ctx->tr), k = eval_workers(ctx);
    for (size_t i = 0; i < k; i++)
        ctx->eval.live[i] = train_params(ctx->tr, ctx->eval.ids[i]);
    train_eval_buffers(ctx->tr, ctx->eval.ids, k); /* a served model's: their mean */
    *consensus = NAN;
    if (k == 0 || P == 0)
        return NULL;
    jobs_mean(ctx, ctx->eval.mean, ctx->eval.live, k, P);
    *consensus = shared_consensus(ctx->eval.live, k, P);
    return ctx->eval.mean;
}

double sim_run_variance(sim_ctx *ctx)
{
    size_t P = train_num_params(ctx->tr), k = 0;
    for (uint32_t w = 0; w < ctx->nworkers; w++)
        if (!sim_cluster_down(ctx->cl, w))
            ctx->eval.live[k++] = train_params(ctx->tr, w);
    if (k == 0 || P == 0)
        return (double)NAN;
    return shared_consensus(ctx->eval.live, k, P) / (double)P;
}

/* Records an evaluation's accuracy: last, best, and the target's stop. */
static void score(sim_ctx *ctx, sim_time at, double accuracy)
{
    if (isnan(accuracy))
        return;
    ctx->eval.last_accuracy = accuracy;
    if (isnan(ctx->eval.best_accuracy) || accuracy > ctx->eval.best_accuracy)
        ctx->eval.best_accuracy = accuracy;
    if (ctx->eval.target_ns == SIM_TIME_NEVER && accuracy >= ctx->sc->target_accuracy) {
        ctx->eval.target_ns = at;
        sim_run_stop(ctx, "target_accuracy");
    }
}

/* A metrics.csv row: the evaluation's time, counters, epoch, consensus and throughput were
 * taken at its instant (pend_*), the losses and accuracy come now. */
static void metrics_row(sim_ctx *ctx, double train_loss, double test_loss, double accuracy)
{
    FILE *f = sim_file_stream(ctx->out.metrics);
    fprintf(f, "%.17g,%" PRIu64 ",%" PRIu64, sim_run_seconds(ctx->pend_ns), ctx->pend_iterations,
            ctx->pend_samples);
    field(f, ctx->pend_epoch);
    field(f, train_loss);
    field(f, test_loss);
    field(f, accuracy);
    field(f, ctx->pend_consensus);
    fprintf(f, ",%.17g\n", ctx->pend_sps);
}

/* A metrics.csv row's throughput: the samples counted since the previous evaluation over
 * the time from the last count before it to the last count before this one, a window aligned
 * with completions (docs/scenario.md, "metrics.csv"). Rounds that complete at one instant
 * give their own rate, samples per round over the round's time, whatever eval.every_s: over
 * the evaluation interval itself, a 1 s interval holding two or three 417 ms rounds read
 * 1,024 or 1,536 samples/s by turns for a rate of 1,229. Nothing counted since: 0; counted
 * only at the previous evaluation's instant, after it: over the evaluation interval. */
static double window_sps(const sim_ctx *ctx, sim_time now)
{
    uint64_t n = ctx->account.samples - ctx->eval.last_samples;
    sim_time span = ctx->account.counted_ns - ctx->eval.counted_ns;
    if (span <= 0)
        span = now - ctx->eval.last_ns;
    return n > 0 && span > 0 ? (double)n / sim_run_seconds(span) : 0.0;
}

int sim_run_eval_finish(sim_ctx *ctx, sim_err *err)
{
    if (!ctx->eval_pending)
        return SIM_OK;
    int rc = jobs_settle(ctx, err);
    double test_loss, accuracy;
    jobs_eval_join(ctx, &test_loss, &accuracy);
    ctx->eval_pending = false;
    if (rc == SIM_OK)
        rc = train_error(ctx->tr, err); /* a model server failed the evaluation */
    if (rc != SIM_OK)
        return rc;
    double train_loss =
        ctx->pend_loss_count > 0 ? ctx->pend_loss_sum / (double)ctx->pend_loss_count : (double)NAN;
    score(ctx, ctx->pend_ns, accuracy);
    metrics_row(ctx, train_loss, test_loss, accuracy);
    return SIM_OK;
}

int sim_run_evaluate(sim_ctx *ctx, sim_time now, sim_err *err)
{
    int rc = sim_run_eval_finish(ctx, err);
    if (rc != SIM_OK)
        return rc;
    ctx->pend_ns = now;
    ctx->pend_iterations = ctx->account.iterations;
    ctx->pend_samples = ctx->account.samples;
    ctx->pend_epoch = sim_run_epoch(ctx);
    ctx->pend_sps = window_sps(ctx, now);
    ctx->pend_consensus = NAN;
    double train_loss = NAN, test_loss = NAN, accuracy = NAN;
    const float *x = mean_model(ctx, &ctx->pend_consensus);
    if (ctx->eval.params != NULL)
        x = ctx->eval.params;
    if (x != NULL && jobs_eval_async(ctx)) {
        /* Scored while the simulation goes on: the model is copied (the mean's buffer is
         * this evaluation's until its row is written), the losses owed are the ring's. */
        if (x != ctx->eval.mean)
            sim_tensor_copy(ctx->eval.mean, x, train_num_params(ctx->tr));
        ctx->pend_loss_sum = ctx->eval.loss_sum;
        ctx->pend_loss_count = ctx->eval.loss_count;
        ctx->eval.loss_sum = 0.0;
        ctx->eval.loss_count = 0;
        ctx->eval_owed = ctx->ring_n;
        jobs_eval_start(ctx, ctx->eval.mean, ctx->sc->eval_samples);
        ctx->eval_pending = true;
    } else {
        rc = jobs_drain(ctx, err); /* the losses of every iteration started */
        if (rc != SIM_OK)
            return rc;
        if (x != NULL)
            jobs_evaluate(ctx, x, ctx->sc->eval_samples, &test_loss, &accuracy);
        if ((rc = train_error(ctx->tr, err)) != SIM_OK) /* a model server failed */
            return rc;
        if (ctx->eval.loss_count > 0)
            train_loss = ctx->eval.loss_sum / (double)ctx->eval.loss_count;
        ctx->eval.loss_sum = 0.0;
        ctx->eval.loss_count = 0;
        score(ctx, now, accuracy);
        metrics_row(ctx, train_loss, test_loss, accuracy);
    }
    ctx->eval.last_ns = now;
    ctx->eval.last_samples = ctx->account.samples;
    ctx->eval.counted_ns = ctx->account.counted_ns;
    if (ctx->out.observe != NULL)
        ctx->out.observe(ctx->out.observe_ud, ctx);
    return SIM_OK;
}

int sim_run_open_outputs(sim_ctx *ctx, const char *dir, sim_err *err)
{
    int rc = sim_output_mkdirs(dir, err);
    if (rc != SIM_OK)
        return rc;
    ctx->out.metrics = sim_file_open(dir, "metrics.csv", err);
    if (ctx->out.metrics == NULL)
        return SIM_EIO;
    fputs("time_s,iterations,samples,epoch,train_loss,test_loss,test_accuracy,consensus,"
          "throughput_sps\n",
          sim_file_stream(ctx->out.metrics));
    if (ctx->sc->events) {
        ctx->out.events = sim_file_open(dir, "events.csv", err);
        if (ctx->out.events == NULL)
            return SIM_EIO;
        fputs("time_ns,event,worker,peer,tag,bytes,arg\n", sim_file_stream(ctx->out.events));
    }
    return SIM_OK;
}

static int write_workers(sim_ctx *ctx, const char *dir, sim_err *err)
{
    sim_file *f = sim_file_open(dir, "workers.csv", err);
    if (f == NULL)
        return SIM_EIO;
    FILE *s = sim_file_stream(f);
    fputs("worker,speed,iterations,samples,compute_s,comm_s,wait_s,bytes_sent,bytes_received,"
          "down_s,comm_overlap_s,params_fnv\n",
          s);
    for (uint32_t w = 0; w < ctx->nworkers; w++) {
        const worker_acct *a = &ctx->account.worker[w];
        uint64_t sent, received, sent_wraps, received_wraps;
        sim_net_host_bytes(ctx->net, w, &sent, &received);
        sim_net_host_wraps(ctx->net, w, &sent_wraps, &received_wraps);
        /* As "%u,%.9g,%" PRIu64 ",%" PRIu64 ",%.17g,%.17g,%.17g,%" PRIu64 ",%" PRIu64 ",%.17g,"
         * would write it, built in a buffer: the same bytes, but glibc's fprintf spent more
         * time on this format (its positional path) than on the numbers. */
        char row[13 * SIM_OUTPUT_G_MAX], *p = row;
        p = put_u64(p, w, ',');
        p = put_g(p, (double)(float)ctx->sc->speeds[w], 9, ',');
        p = put_u64(p, a->iterations, ',');
        p = put_u64(p, a->iterations * ctx->sc->batch, ',');
        p = put_g(p, sim_run_seconds(a->spent[ACCT_COMPUTE]), 17, ',');
        p = put_g(p, sim_run_seconds(a->spent[ACCT_COMM]), 17, ',');
        p = put_g(p, sim_run_seconds(a->spent[ACCT_WAIT]), 17, ',');
        p = put_bytes(p, sent, sent_wraps, ',');
        p = put_bytes(p, received, received_wraps, ',');
        p = put_g(p, sim_run_seconds(a->spent[ACCT_DOWN]), 17, ',');
        p = put_g(p, sim_run_seconds(a->overlap_ns), 17, ',');
        *p = '\0';
        fputs(row, s);
        /* FNV-1a of the worker's final parameters: equal replicas have equal values. A model
         * of zero floats has no parameters to sum up (timing-only): the field stays empty. */
        if (train_num_params(ctx->tr) > 0)
            fprintf(s, "%016" PRIx64,
                    sim_tensor_checksum(train_params(ctx->tr, w), train_num_params(ctx->tr)));
        fputc('\n', s);
    }
    return sim_file_commit(f, err);
}

static void json_field(FILE *s, const char *key, double x)
{
    fprintf(s, "  \"%s\": ", key);
    sim_output_json_double(s, x);
    fputs(",\n", s);
}

static int write_summary(sim_ctx *ctx, const char *dir, const sim_run_summary *sum, sim_err *err)
{
    sim_file *f = sim_file_open(dir, "summary.json", err);
    if (f == NULL)
        return SIM_EIO;
    FILE *s = sim_file_stream(f);
    sim_net_stats ns;
    sim_net_stats_until(ctx->net, sum->sim_ns, &ns); /* a stop by time after the last event */
    double t = sim_run_seconds(sum->sim_ns);
    fputs("{\n  \"name\": ", s);
    sim_output_json_string(s, ctx->sc->name);
    fprintf(s, ",\n  \"protocol\": \"%s\",\n  \"model\": \"%s\",\n  \"workers\": %u,\n",
            ctx->proto->name, ctx->sc->model, ctx->nworkers);
    fprintf(s, "  \"stop_reason\": \"%s\",\n", sum->stop_reason);
    json_field(s, "sim_time_s", t);
    fprintf(s, "  \"iterations\": %" PRIu64 ",\n  \"samples\": %" PRIu64 ",\n", sum->iterations,
            sum->samples);
    json_field(s, "epochs", sim_run_epoch(ctx));
    if (train_model(ctx->tr)->flags & MODEL_AVERAGING_ONLY) {
        fprintf(s, "  \"rounds\": %" PRIu64 ",\n", ctx->stop.rounds);
        json_field(s, "variance", sim_run_variance(ctx));
    }
    json_field(s, "final_accuracy", ctx->eval.last_accuracy);
    json_field(s, "best_accuracy", ctx->eval.best_accuracy);
    json_field(s, "time_to_target_s",
               ctx->eval.target_ns == SIM_TIME_NEVER ? (double)NAN
                                                     : sim_run_seconds(ctx->eval.target_ns));
    json_field(s, "mean_throughput_sps", t > 0 ? (double)sum->samples / t : 0.0);
    fprintf(s, "  \"events\": %" PRIu64 ",\n", sum->events);
    fprintf(s,
            "  \"messages\": {\"sent\": %" PRIu64 ", \"delivered\": %" PRIu64
            ", \"dropped\": %" PRIu64 ", \"peak_flows\": %zu},\n",
            ns.sent, ns.delivered, ns.dropped, ns.peak_flows);
    if (ctx->peer_reads > 0) /* reads of another worker's state without a message */
        fprintf(s, "  \"peer_reads\": %" PRIu64 ",\n", ctx->peer_reads);
    if (ctx->out.nnotes > 0) {
        fputs("  \"notes\": [", s);
        for (size_t i = 0; i < ctx->out.nnotes; i++) {
            fputs(i > 0 ? ", " : "", s);
            sim_output_json_string(s, ctx->out.notes[i]);
        }
        fputs("],\n", s);
    }
    sim_report rep = { 0 };
    if (ctx->proto->report != NULL)
        ctx->proto->report(ctx->state, ctx, &rep);
    fputs("  \"protocol_report\": {", s);
    for (size_t i = 0; i < rep.n; i++) {
        fprintf(s, "%s\"%s\": ", i > 0 ? ", " : "", rep.key[i]);
        sim_output_json_double(s, rep.value[i]);
    }
    fputs("},\n", s);
    /* The one line that differs between identical runs: wall-clock figures. */
    fputs("  \"wall\": {\"wall_s\": ", s);
    sim_output_json_double(s, sum->wall_s);
    fputs(", \"events_per_s\": ", s);
    sim_output_json_double(s, sum->events_per_s);
    fprintf(s, ", \"peak_rss_bytes\": %" PRIu64 ", \"memory_estimate_bytes\": %" PRIu64,
            sum->peak_rss_bytes, sum->memory_estimate_bytes);
    fputs(", \"model_s\": ", s);
    sim_output_json_double(s, sum->model_s);
    fputs("}\n}\n", s);
    return sim_file_commit(f, err);
}

static int write_run_json(const sim_scenario *sc, const char *dir, sim_err *err)
{
    char *resolved = sim_scenario_resolved(sc, false);
    if (resolved == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    sim_file *f = sim_file_open(dir, "run.json", err);
    if (f == NULL) {
        free(resolved);
        return SIM_EIO;
    }
    FILE *s = sim_file_stream(f);
    fprintf(s,
            "{\n  \"hetsim_version\": \"%s\",\n  \"seed\": %" PRIu64
            ",\n  \"scenario_hash\": \"%016" PRIx64 "\",\n",
            HETSIM_VERSION, sc->seed, sc->hash);
    if (sc->profile[0] != '\0') /* the bytes of the profile, which the scenario only names */
        fprintf(s, "  \"profile_fnv\": \"%016" PRIx64 "\",\n", sc->layers.file_fnv);
    uint64_t traces;
    if (sim_scenario_traces_fnv(sc, &traces)) /* the points of its traces, named likewise */
        fprintf(s, "  \"traces_fnv\": \"%016" PRIx64 "\",\n", traces);
    fputs("  \"scenario\": ", s);
    sim_output_json_pretty(s, resolved, 1);
    fputs("\n}\n", s);
    free(resolved);
    return sim_file_commit(f, err);
}

int sim_run_write_outputs(sim_ctx *ctx, const char *dir, const sim_run_summary *sum, sim_err *err)
{
    int rc = sim_file_commit(ctx->out.metrics, err);
    ctx->out.metrics = NULL;
    if (rc == SIM_OK && ctx->out.events != NULL)
        rc = sim_file_commit(ctx->out.events, err);
    ctx->out.events = NULL;
    if (rc == SIM_OK)
        rc = write_workers(ctx, dir, err);
    if (rc == SIM_OK)
        rc = write_run_json(ctx->sc, dir, err);
    if (rc == SIM_OK)
        rc = write_summary(ctx, dir, sum, err);
    return rc;
}
