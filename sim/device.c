/* The accelerator catalogue. Peaks in FLOP/s, dense, at boost clock; 0 where the device has
 * no fast path (Kepler and Pascal GeForce/Tesla P40 run FP16 at 1/64 rate or not at all; TF32
 * and BF16 start with Ampere). */
#include "sim/device.h"

#include <stdio.h>
#include <string.h>

#define T 1e12

static const sim_device devices[] = {
    { "k80",
      "NVIDIA Tesla K80, one of the board's two GK210 GPUs",
      { 4.365 * T, 0, 0, 0 },
      "NVIDIA Tesla K80 datasheet (2014): 8.73 TFLOPS single precision with GPU Boost for the "
      "board, whose two GPUs each appear as one device" },
    { "p40",
      "NVIDIA Tesla P40",
      { 12.0 * T, 0, 0, 0 },
      "NVIDIA Tesla P40 datasheet (2016): 12 TFLOPS single precision" },
    { "p100",
      "NVIDIA Tesla P100 SXM2",
      { 10.6 * T, 0, 21.2 * T, 0 },
      "NVIDIA Tesla P100 datasheet (2016), NVLink version: 10.6 TFLOPS single, 21.2 TFLOPS "
      "half precision" },
    { "1080ti",
      "NVIDIA GeForce GTX 1080 Ti",
      { 11.34 * T, 0, 0, 0 },
      "NVIDIA GeForce GTX 1080 Ti specifications (2017): 3584 CUDA cores at 1582 MHz boost, "
      "2 FLOPs per core per clock = 11.34 TFLOPS single precision" },
    { "v100",
      "NVIDIA Tesla V100 SXM2",
      { 15.7 * T, 0, 125.0 * T, 0 },
      "NVIDIA Tesla V100 datasheet (2017), SXM2: 15.7 TFLOPS single precision, 125 TFLOPS "
      "tensor performance" },
    { "t4",
      "NVIDIA T4",
      { 8.1 * T, 0, 65.0 * T, 0 },
      "NVIDIA T4 datasheet (2018): 8.1 TFLOPS single precision, 65 TFLOPS mixed precision "
      "(FP16/FP32)" },
    { "rtx3090",
      "NVIDIA GeForce RTX 3090",
      { 35.6 * T, 35.6 * T, 71.0 * T, 71.0 * T },
      "NVIDIA Ampere GA102 GPU architecture whitepaper (2020), RTX 3090: 35.6 TFLOPS FP32, "
      "35.6 TFLOPS TF32 tensor, 71 TFLOPS FP16/BF16 tensor with FP32 accumulate (dense)" },
    { "a100",
      "NVIDIA A100 SXM",
      { 19.5 * T, 156.0 * T, 312.0 * T, 312.0 * T },
      "NVIDIA A100 Tensor Core GPU datasheet (2020): 19.5 TFLOPS FP32, 156 TFLOPS TF32, 312 "
      "TFLOPS FP16 and BF16 tensor (dense)" },
    { "h100",
      "NVIDIA H100 SXM5",
      { 66.9 * T, 494.7 * T, 989.4 * T, 989.4 * T },
      "NVIDIA H100 Tensor Core GPU architecture whitepaper (2022), H100 SXM5: 66.9 TFLOPS "
      "FP32, 494.7 TFLOPS TF32, 989.4 TFLOPS FP16 and BF16 tensor (dense; the datasheet's "
      "figures with sparsity are twice these)" },
};

const sim_device *sim_device_find(const char *name)
{
    for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
        if (strcmp(devices[i].name, name) == 0)
            return &devices[i];
    return NULL;
}

const sim_device *sim_device_at(size_t i)
{
    return i < sizeof(devices) / sizeof(devices[0]) ? &devices[i] : NULL;
}

const char *sim_precision_name(int p)
{
    static const char *const names[SIM_PREC_N] = { "fp32", "tf32", "fp16", "bf16" };
    return p >= 0 && p < SIM_PREC_N ? names[p] : NULL;
}

void sim_device_list(char *buf, size_t size)
{
    size_t used = 0;
    if (size > 0)
        buf[0] = '\0';
    for (size_t i = 0; sim_device_at(i) != NULL && size > 0; i++) {
        int k = snprintf(buf + used, size - used, "%s%s", i > 0 ? ", " : "", devices[i].name);
        if (k < 0 || (size_t)k >= size - used)
            return;
        used += (size_t)k;
    }
}
