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
 *
 * Timers are described the same way (msg_timer): which conversation, which of the owner's
 * timers, and which attempt of what (a round and a retry), packed by msg_timer_pack into the
 * timer event's one argument and read back by msg_timer_read. A timer is still current when
 * its argument equals the owner's current one (msg_timer_is), so fields are kept modulo their
 * widths: a timer never outlives 2^20 rounds or retries of its owner.
 */
#ifndef KIT_MSG_H
#define KIT_MSG_H

#include <stdbool.h>
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

/* A timer's argument, as msg_hdr is a message's. */
typedef struct msg_timer {
    uint32_t channel; /* 0: the protocol's own; a collective's (< 2^20) */
    uint32_t kind;    /* the owner's timer kind within the channel (< 16) */
    uint32_t attempt; /* a retry count, or a member's position (kept modulo 2^20) */
    uint64_t seq;     /* the owner's sequence number: a round (kept modulo 2^20) */
} msg_timer;

enum {
    MSG_TIMER_BITS = 20 /* of channel, attempt and seq; kind has 4 */
};

/* The timer event's argument for t: channel, kind, attempt and seq from the high bits down. */
static inline uint64_t msg_timer_pack(msg_timer t)
{
    const uint64_t mask = ((uint64_t)1 << MSG_TIMER_BITS) - 1;
    return ((uint64_t)t.channel & mask) << 44 | ((uint64_t)t.kind & 15) << 40 |
           ((uint64_t)t.attempt & mask) << 20 | (t.seq & mask);
}

/* The argument of a delivered timer event. */
static inline msg_timer msg_timer_read(const sim_event *ev)
{
    const uint64_t mask = ((uint64_t)1 << MSG_TIMER_BITS) - 1, a = ev->arg[0];
    msg_timer t = { .channel = (uint32_t)(a >> 44),
                    .kind = (uint32_t)(a >> 40 & 15),
                    .attempt = (uint32_t)(a >> 20 & mask),
                    .seq = a & mask };
    return t;
}

/* True if the delivered timer event carries t (compared as packed, modulo the widths). */
static inline bool msg_timer_is(const sim_event *ev, msg_timer t)
{
    return ev->arg[0] == msg_timer_pack(t);
}

/* Schedules a timer of the owner's event kind `ev_kind` for worker w (SIM_NOBODY: none) after
 * `delay`, carrying t (sim_ctx_timer; its id in *id unless id is NULL). */
static inline int msg_timer_set(sim_ctx *ctx, sim_time delay, uint32_t ev_kind, int32_t w,
                                msg_timer t, sim_event_id *id, sim_err *err)
{
    return sim_ctx_timer(ctx, delay, ev_kind, w, msg_timer_pack(t), id, err);
}

#endif
