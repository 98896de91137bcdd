/* The one message layout of the protocols: every message a protocol or a kit collective
 * sends carries a header of three fields, instead of bits packed by hand into the
 * context's tag and arg.
 *
 *   channel  which conversation: 0 for the protocol's own messages, and one channel per
 *            collective instance (a ring, a group's butterfly, a barrier), so that several
 *            collectives can run at once and a protocol routes a delivery by its channel
 *   kind     the sender's message kind within that channel (an enum of the owner's)
 *   seq      the sender's sequence number: an iteration, a round, an attempt
 *
 * On the wire (runtime/ctx.h) seq travels as the message's tag, which events.csv shows,
 * and channel and kind share its arg (channel in the high 32 bits).
 */
#ifndef PROTOCOLS_MSG_H
#define PROTOCOLS_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/ctx.h"
#include "sim/engine.h"
#include "sim/err.h"

typedef struct msg_hdr {
    uint32_t channel; /* 0: the protocol's own; collectives have their own */
    uint32_t kind;    /* the owner's message kind */
    uint64_t seq;     /* the owner's sequence number */
} msg_hdr;

/* The header of a delivered SIM_EV_MSG. */
static inline msg_hdr msg_read(const sim_event *ev)
{
    msg_hdr h = { .channel = (uint32_t)(ev->arg[2] >> 32),
                  .kind = (uint32_t)ev->arg[2],
                  .seq = ev->arg[0] };
    return h;
}

/* Sends `bytes` from host src to host dst with header h and payload p (sim_ctx_send). */
static inline int msg_post(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes, msg_hdr h,
                           sim_payload p, sim_err *err)
{
    return sim_ctx_send(ctx, src, dst, bytes, h.seq, (uint64_t)h.channel << 32 | h.kind, p, err);
}

/* The payloads of sim_ctx_send, spelled short: none; a copy of x[0..n); worker w's whole model,
 * copied on write; held snapshot h. */
static inline sim_payload msg_none(void)
{
    sim_payload p = { .kind = SIM_PAYLOAD_NONE };
    return p;
}

static inline sim_payload msg_copy(const float *x, size_t n)
{
    sim_payload p = { .kind = SIM_PAYLOAD_COPY, .x = x, .n = n };
    return p;
}

static inline sim_payload msg_params(uint32_t w)
{
    sim_payload p = { .kind = SIM_PAYLOAD_PARAMS, .w = w };
    return p;
}

static inline sim_payload msg_held(uint32_t h)
{
    sim_payload p = { .kind = SIM_PAYLOAD_HELD, .h = h };
    return p;
}

#endif
