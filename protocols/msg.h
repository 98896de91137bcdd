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

/* Sends `bytes` from host src to host dst with header h (sim_ctx_send). */
static inline int msg_send(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes, msg_hdr h,
                           sim_err *err)
{
    return sim_ctx_send(ctx, src, dst, bytes, h.seq, (uint64_t)h.channel << 32 | h.kind, err);
}

/* msg_send with a snapshot of x[0..n) travelling with the message (sim_ctx_send_model). */
static inline int msg_send_model(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes,
                                 msg_hdr h, const float *x, size_t n, sim_err *err)
{
    return sim_ctx_send_model(ctx, src, dst, bytes, h.seq, (uint64_t)h.channel << 32 | h.kind, x, n,
                              err);
}

/* msg_send with held snapshot h travelling with the message (sim_ctx_send_snapshot). */
static inline int msg_send_snapshot(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes,
                                    msg_hdr h, uint32_t snap, sim_err *err)
{
    return sim_ctx_send_snapshot(ctx, src, dst, bytes, h.seq, (uint64_t)h.channel << 32 | h.kind,
                                 snap, err);
}

/* msg_send with worker src's whole model travelling with the message, copied on write
 * (sim_ctx_send_params). */
static inline int msg_send_params(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes,
                                  msg_hdr h, sim_err *err)
{
    return sim_ctx_send_params(ctx, src, dst, bytes, h.seq, (uint64_t)h.channel << 32 | h.kind,
                               err);
}

#endif
