/* Fabrics: a catalogue of common interconnects with the bandwidth a transfer attains on them
 * and the latency a collective library's message pays, each with its source.
 *
 * network.fabric names a NIC fabric (Ethernet with TCP or RoCE, InfiniBand): its entries are
 * the defaults of network.bandwidth_gbps and network.latency_us. network.host_fabric names the
 * fabric joining the GPUs of one host (NVLink generations, PCIe): the defaults of
 * network.host_fabric_bandwidth_gbps and host_fabric_latency_us. Explicit keys override
 * (docs/scenario.md).
 *
 * Bandwidth is per direction of one link (one NIC, or one GPU's link to its host's fabric),
 * attainable by a bulk transfer: the line rate times the share a published measurement or
 * the wire format leaves for data. Latency is per link end, as network.latency_us: a path
 * crosses two ends, so a message between two hosts pays twice the NIC's and one between two
 * GPUs of a host twice the host fabric's. It is the time a collective's step pays beyond its
 * bytes, taken from NCCL's tuning model (its per-step hardware latencies for the Simple
 * protocol, the one large messages use), split between the two ends.
 */
#ifndef NET_FABRIC_H
#define NET_FABRIC_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sim_fabric {
    const char *name;      /* as in scenarios: "ib-edr" */
    bool host;             /* a host's fabric (network.host_fabric), else a NIC's (fabric) */
    const char *label;     /* "InfiniBand EDR (4x, 100 Gb/s)" */
    double bandwidth_gbps; /* attainable, each direction of one link */
    double latency_us;     /* per link end */
    const char *source;    /* where both come from */
} sim_fabric;

/* The fabric called `name`, or NULL. */
const sim_fabric *sim_fabric_find(const char *name);

/* The i-th fabric in catalogue order, or NULL past the end. */
const sim_fabric *sim_fabric_at(size_t i);

/* Writes the names of the NIC fabrics (host false) or of the host fabrics (host true),
 * separated by ", ", into buf (terminated when size > 0). */
void sim_fabric_list(bool host, char *buf, size_t size);

#endif
