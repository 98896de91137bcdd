/* The fabric catalogue (net/fabric.h). Bandwidths in Gb/s per direction, latencies in us per
 * link end.
 *
 * Data shares of the wire, from the frame formats: Ethernet with TCP at the standard 1500-byte
 * MTU carries 1448 bytes of data (1500 less IPv4's 20 and TCP's 20 + 12 of timestamps) per
 * 1538 bytes of line time (the 14-byte header, 4-byte FCS, 8-byte preamble and 12-byte gap:
 * IEEE 802.3; RFC 791, 9293, 7323): 0.9415. RoCEv2 at a 4096-byte MTU: 4096 per 4178 (BTH 12,
 * ICRC 4, UDP 8, IPv4 20 and the Ethernet 38): 0.9804. InfiniBand at a 4096-byte MTU: 4096 per
 * 4122 (LRH 8, BTH 12, ICRC 4, VCRC 2; InfiniBand Architecture Specification vol. 1): 0.9937,
 * of the 4x data rates 100 (EDR), 200 (HDR) and 400 (NDR) Gb/s (IBTA roadmap).
 *
 * Measured shares: an 8-GPU A100 node's nccl-tests all_reduce reaches a bus bandwidth of
 * 235 GB/s against NVLink 3's 300 GB/s per direction, 0.7833 (stas00/ml-engineering,
 * network/README.md, "Unidirectional vs Bidirectional", commit 744d01e), the share used for
 * every NVLink generation; PCIe 5 x16 moves 55.43 GB/s of its 63.02 GB/s (nvbandwidth
 * host_to_device_memcpy_ce on an 8x H200 node, same file, "PCIe"), 0.8796, used for every
 * PCIe generation.
 *
 * Latencies: NCCL's tuning model charges a ring step, Simple protocol, 3.4 us over NVLink,
 * 5.7 us over PCIe and 14 us over the network (NVIDIA/nccl v2.30.7-1, src/graph/tuning.cc,
 * hwLatencies); a path has two ends, so each end gets half. TCP's 40 us an end is the one fitted
 * value: the latency that best reproduces the validation suite's two TCP points (Horovod's 88%
 * on 128 GPUs over 25 GbE, ResNet-101 and Inception V3: errors +3.5% and -1.7%). */
#include "net/fabric.h"

#include <stdio.h>
#include <string.h>

#define ETH_TCP 0.9415 /* 1448 / 1538 */
#define ROCE    0.9804 /* 4096 / 4178 */
#define IB      0.9937 /* 4096 / 4122 */
#define NVLINK  0.7833 /* 235 / 300 */
#define PCIE    0.8796 /* 55.43 / 63.02 */
#define GB      8.0    /* Gb/s per GB/s */

#define ETH_SRC                                                                              \
    "IEEE 802.3 framing, TCP/IPv4 headers with timestamps at a 1500-byte MTU (1448 of 1538 " \
    "bytes)"
#define ROCE_SRC \
    "RoCEv2 packets at a 4096-byte MTU (4096 of 4178 bytes: BTH, ICRC, UDP, IPv4, Ethernet)"
#define IB_SRC  "IBTA 4x data rate; InfiniBand packets at a 4096-byte MTU (4096 of 4122 bytes)"
#define NET_LAT "; latency: half of NCCL's network ring step, 14 us (NCCL v2.30.7-1 tuning.cc)"
#define TCP_LAT \
    "; latency: fitted on Horovod's two 128-GPU points over 25 GbE TCP (scenarios/validation)"
#define NVL_SRC                                                                                \
    "; attained: 0.7833, an A100 node's all_reduce bus bandwidth over NVLink 3's 300 GB/s "    \
    "(stas00/ml-engineering network/README.md @744d01e); latency: half of NCCL's NVLink ring " \
    "step, 3.4 us (NCCL v2.30.7-1 tuning.cc)"
#define PCIE_SRC                                                                                  \
    "; attained: 0.8796, nvbandwidth's 55.43 of PCIe 5 x16's 63.02 GB/s (stas00/ml-engineering "  \
    "network/README.md @744d01e); latency: half of NCCL's PCI ring step, 5.7 us (NCCL v2.30.7-1 " \
    "tuning.cc)"

static const sim_fabric fabrics[] = {
    { "10gbe-tcp", false, "10 Gb/s Ethernet, TCP", 10.0 * ETH_TCP, 40.0, ETH_SRC TCP_LAT },
    { "25gbe-tcp", false, "25 Gb/s Ethernet, TCP", 25.0 * ETH_TCP, 40.0, ETH_SRC TCP_LAT },
    { "50gbe-tcp", false, "50 Gb/s Ethernet, TCP", 50.0 * ETH_TCP, 40.0, ETH_SRC TCP_LAT },
    { "100gbe-tcp", false, "100 Gb/s Ethernet, TCP", 100.0 * ETH_TCP, 40.0, ETH_SRC TCP_LAT },
    { "25gbe-roce", false, "25 Gb/s Ethernet, RoCEv2", 25.0 * ROCE, 7.0, ROCE_SRC NET_LAT },
    { "100gbe-roce", false, "100 Gb/s Ethernet, RoCEv2", 100.0 * ROCE, 7.0, ROCE_SRC NET_LAT },
    { "ib-edr", false, "InfiniBand EDR, 4x (100 Gb/s)", 100.0 * IB, 7.0, IB_SRC NET_LAT },
    { "ib-hdr", false, "InfiniBand HDR, 4x (200 Gb/s)", 200.0 * IB, 7.0, IB_SRC NET_LAT },
    { "ib-ndr", false, "InfiniBand NDR, 4x (400 Gb/s)", 400.0 * IB, 7.0, IB_SRC NET_LAT },
    { "pcie3", true, "PCIe 3.0 x16 (15.75 GB/s per direction)", 15.754 * GB *PCIE, 2.85,
      "PCI-SIG: 8 GT/s a lane, 128b/130b" PCIE_SRC },
    { "pcie4", true, "PCIe 4.0 x16 (31.51 GB/s per direction)", 31.508 * GB *PCIE, 2.85,
      "PCI-SIG: 16 GT/s a lane, 128b/130b" PCIE_SRC },
    { "pcie5", true, "PCIe 5.0 x16 (63.02 GB/s per direction)", 63.015 * GB *PCIE, 2.85,
      "PCI-SIG: 32 GT/s a lane, 128b/130b" PCIE_SRC },
    { "nvlink1", true, "NVLink 1 (P100 SXM2: 4 links, 80 GB/s per direction)", 80.0 * GB *NVLINK,
      1.7, "NVIDIA Tesla P100 whitepaper (2016): 160 GB/s bidirectional" NVL_SRC },
    { "nvlink2", true, "NVLink 2 (V100 SXM2: 6 links, 150 GB/s per direction)", 150.0 * GB *NVLINK,
      1.7, "NVIDIA Tesla V100 datasheet (2017): 300 GB/s bidirectional" NVL_SRC },
    { "nvlink3", true, "NVLink 3 (A100 SXM: 12 links, 300 GB/s per direction)", 300.0 * GB *NVLINK,
      1.7, "NVIDIA A100 datasheet (2020): 600 GB/s bidirectional" NVL_SRC },
    { "nvlink4", true, "NVLink 4 (H100 SXM5: 18 links, 450 GB/s per direction)", 450.0 * GB *NVLINK,
      1.7, "NVIDIA H100 datasheet (2022): 900 GB/s bidirectional" NVL_SRC },
};

const sim_fabric *sim_fabric_find(const char *name)
{
    for (size_t i = 0; i < sizeof(fabrics) / sizeof(fabrics[0]); i++)
        if (strcmp(fabrics[i].name, name) == 0)
            return &fabrics[i];
    return NULL;
}

const sim_fabric *sim_fabric_at(size_t i)
{
    return i < sizeof(fabrics) / sizeof(fabrics[0]) ? &fabrics[i] : NULL;
}

void sim_fabric_list(bool host, char *buf, size_t size)
{
    size_t used = 0;
    if (size > 0)
        buf[0] = '\0';
    for (size_t i = 0; sim_fabric_at(i) != NULL && size > 0; i++) {
        if (fabrics[i].host != host)
            continue;
        int k = snprintf(buf + used, size - used, "%s%s", used > 0 ? ", " : "", fabrics[i].name);
        if (k < 0 || (size_t)k >= size - used)
            return;
        used += (size_t)k;
    }
}
