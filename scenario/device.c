/* The accelerator catalogue. Peaks in FLOP/s, dense, at boost clock; 0 where the device has
 * no fast path (Kepler and Pascal GeForce/Tesla P40 run FP16 at 1/64 rate or not at all; TF32
 * and BF16 start with Ampere). Bandwidths in bytes/s from the same datasheets.
 *
 * The attainable shares: mem_frac is what a streaming kernel (one load and one store stream,
 * the shape of element-wise layers) measures against the datasheet bandwidth; the shares of
 * convolutions and products (sim_shares) are fitted, with mem_frac fixed, so that the roofline
 * (scenario/roofline.h) gives the published throughput of each calibration point of
 * scenarios/validation/points.csv (scenarios/validation/calibrate.py prints them). A share no point
 * calibrates is taken from the nearest calibrated one and says so in `fit`: those devices and
 * precisions are timed, not validated (scenarios/validation/README.md). */
#include "scenario/device.h"

#include <stdio.h>
#include <string.h>

#define T 1e12
#define G 1e9

/* The fitted share of sim_device_depthwise_share. */
#define DEPTHWISE_SHARE 0.018

/* The streaming benchmark: te42kyfo/gpu-benches, gpu-stream (the "scale" kernel at 100%
 * occupancy), commit 1c36d509 (2024). */
#define STREAM \
    "gpu-benches' gpu-stream, its scale kernel at full occupancy (te42kyfo/gpu-benches@1c36d50)"
#define ASSUMED                                                                           \
    "assumed: no streaming measurement at hand; V100, A100 and H100 attain 0.85 to 0.89 " \
    "(" STREAM ")"

/* The attainable shares, each set under the device it was fitted on; a row whose device no
 * point calibrates carries the nearest calibrated one's and says so in its `fit`. */
/* The K80's. */
static const sim_shares kepler_shares = { .conv = { 0.266, 0, 0, 0 },
                                          .matmul = { 0.266, 0, 0, 0 } };
/* The GTX 1080 Ti's, which the P40 (the same GP102 chip) carries. */
static const sim_shares pascal_shares = { .conv = { 0.533, 0, 0, 0 },
                                          .matmul = { 0.533, 0, 0, 0 } };
/* The P100's. */
static const sim_shares p100_shares = { .conv = { 0.501, 0, 0.501, 0 },
                                        .matmul = { 0.501, 0, 0.501, 0 } };
/* The V100's, which the V100 PCIe and the T4 carry. */
static const sim_shares volta_shares = { .conv = { 0.634, 0, 0.532, 0 },
                                         .matmul = { 0.836, 0, 0.530, 0 } };
/* The A100's, which the other A100 boards carry. */
static const sim_shares ampere_shares = { .conv = { 0.634, 0.241, 0.430, 0.430 },
                                          .matmul = { 0.836, 0.616, 0.551, 0.551 } };
/* The RTX 3090's: its own convolution shares at 16 bits and TF32 (the A100's times 2.30), the
 * A100's products. */
static const sim_shares ga102_shares = { .conv = { 0.634, 0.554, 0.990, 0.990 },
                                         .matmul = { 0.836, 0.616, 0.551, 0.551 } };
/* The H100's. */
static const sim_shares hopper_shares = { .conv = { 0.634, 0.182, 0.326, 0.326 },
                                          .matmul = { 0.836, 0.467, 0.418, 0.418 } };

static const sim_device devices[] = {
    { "k80",
      "NVIDIA Tesla K80, one of the board's two GK210 GPUs",
      { 4.365 * T, 0, 0, 0 },
      240 * G,
      0,
      "NVIDIA Tesla K80 datasheet (2014): 8.73 TFLOPS single precision with GPU Boost and "
      "480 GB/s for the board, whose two GPUs each appear as one device",
      0.85,
      ASSUMED,
      &kepler_shares,
      "fp32: rn50-k80-fp32 and vgg16-k80-fp32 (TensorFlow benchmarks, 2017), the 3x3 gain "
      "fitted with the P100's; products as convolutions (no measurement)" },
    { "p40",
      "NVIDIA Tesla P40",
      { 12.0 * T, 0, 0, 0 },
      346 * G,
      0,
      "NVIDIA Tesla P40 datasheet (2016): 12 TFLOPS single precision, 346 GB/s",
      0.85,
      ASSUMED,
      &pascal_shares,
      "carried from the GTX 1080 Ti, the same GP102 chip (rn50-1080ti-fp32)" },
    { "p100",
      "NVIDIA Tesla P100 SXM2",
      { 10.6 * T, 0, 21.2 * T, 0 },
      732 * G,
      2,
      "NVIDIA Tesla P100 datasheet (2016), NVLink version: 10.6 TFLOPS single, 21.2 TFLOPS "
      "half precision (paired: twice single), 732 GB/s",
      0.85,
      ASSUMED,
      &p100_shares,
      "fp32: rn50-p100-fp32 and vgg16-p100-fp32 (TensorFlow benchmarks, 2017), the 3x3 gain "
      "fitted with the K80's; products and fp16 (no tensor cores) as fp32 convolutions (no "
      "measurement)" },
    { "1080ti",
      "NVIDIA GeForce GTX 1080 Ti",
      { 11.34 * T, 0, 0, 0 },
      484 * G,
      0,
      "NVIDIA GeForce GTX 1080 Ti specifications (2017): 3584 CUDA cores at 1582 MHz boost, "
      "2 FLOPs per core per clock = 11.34 TFLOPS single precision; 11 Gbps GDDR5X on 352 bits "
      "= 484 GB/s",
      0.85,
      ASSUMED,
      &pascal_shares,
      "fp32: rn50-1080ti-fp32 (Lambda TensorFlow benchmark); products as convolutions (no "
      "measurement)" },
    { "v100",
      "NVIDIA Tesla V100 SXM2",
      { 15.7 * T, 0, 125.0 * T, 0 },
      900 * G,
      2,
      "NVIDIA Tesla V100 datasheet (2017), SXM2: 15.7 TFLOPS single precision, 125 TFLOPS "
      "tensor performance, 900 GB/s; Volta architecture whitepaper (2017): 31.4 TFLOPS FP16 "
      "on the CUDA cores, twice FP32",
      802.0 / 900.0,
      STREAM ": V100, 802 GB/s",
      &volta_shares,
      "conv: rn50-v100-fp32, rn50-v100-amp; matmul: bert128-v100-fp32, bert128-v100-amp; "
      "with effb0-v100-fp32 and effb0-v100-amp, which also fit the depthwise share (NVIDIA "
      "DeepLearningExamples)" },
    { "v100-pcie",
      "NVIDIA Tesla V100 PCIe",
      { 14.0 * T, 0, 112.0 * T, 0 },
      900 * G,
      2,
      "NVIDIA Tesla V100 datasheet (2017), PCIe: 14 TFLOPS single precision, 112 TFLOPS "
      "tensor performance, 900 GB/s; FP16 on the CUDA cores twice FP32, as the SXM2's",
      802.0 / 900.0,
      STREAM ": V100, 802 GB/s",
      &volta_shares,
      "carried from the V100 SXM2, the same GV100 chip" },
    { "t4",
      "NVIDIA T4",
      { 8.1 * T, 0, 65.0 * T, 0 },
      320 * G,
      2,
      "NVIDIA T4 datasheet (2018): 8.1 TFLOPS single precision, 65 TFLOPS mixed precision "
      "(FP16/FP32), 320 GB/s; FP16 on the CUDA cores twice FP32, as Volta's",
      0.85,
      ASSUMED,
      &volta_shares,
      "carried from the V100 (Turing's tensor cores are Volta's): not validated" },
    { "rtx3090",
      "NVIDIA GeForce RTX 3090",
      { 35.6 * T, 35.6 * T, 71.0 * T, 71.0 * T },
      936 * G,
      1,
      "NVIDIA Ampere GA102 GPU architecture whitepaper (2020), RTX 3090: 35.6 TFLOPS FP32, "
      "35.6 TFLOPS TF32 tensor, 71 TFLOPS FP16/BF16 tensor with FP32 accumulate (dense), "
      "35.6 TFLOPS FP16 on the CUDA cores (the FP32 rate), 936 GB/s",
      0.85,
      ASSUMED,
      &ga102_shares,
      "conv tf32, fp16, bf16: the A100's shares times 2.30, fitted on timm-rn50-3090-amp (timm's "
      "training benchmark, mixed precision, channels_last): 0.99 of the FP32-accumulate peak, "
      "which says the peak or the memory side is off for GA102 more than that a share is; "
      "matmul tf32, fp16, bf16 carried from the A100, fp32 from the V100: not validated" },
    { "a100",
      "NVIDIA A100 SXM 40GB",
      { 19.5 * T, 156.0 * T, 312.0 * T, 312.0 * T },
      1555 * G,
      2,
      "NVIDIA A100 Tensor Core GPU datasheet (2020): 19.5 TFLOPS FP32, 156 TFLOPS TF32, 312 "
      "TFLOPS FP16 and BF16 tensor (dense); 40GB SXM: 1,555 GB/s; Ampere GA100 whitepaper "
      "(2020): 78 TFLOPS FP16 on the CUDA cores (4x FP32, counted 2x: paired instructions)",
      1381.0 / 1555.0,
      STREAM ": A100 40GB, 1381 GB/s",
      &ampere_shares,
      "conv: rn50-a100-tf32, rn50-a100-amp; matmul: bert128-a100-tf32, bert128-a100-amp; with "
      "effb0-a100-tf32 and effb0-a100-amp (NVIDIA DeepLearningExamples, on the A100 80GB); "
      "bf16 as fp16; fp32 (TF32 off) from the V100" },
    { "a100-80gb",
      "NVIDIA A100 SXM 80GB",
      { 19.5 * T, 156.0 * T, 312.0 * T, 312.0 * T },
      2039 * G,
      2,
      "NVIDIA A100 Tensor Core GPU datasheet (2021): 19.5 TFLOPS FP32, 156 TFLOPS TF32, 312 "
      "TFLOPS FP16 and BF16 tensor (dense); 80GB SXM: 2,039 GB/s; FP16 on the CUDA cores as "
      "the 40GB's",
      1732.0 / 2039.0,
      STREAM ": A100 80GB, 1732 GB/s",
      &ampere_shares,
      "conv: rn50-a100-tf32, rn50-a100-amp; matmul: bert128-a100-tf32, bert128-a100-amp; with "
      "effb0-a100-tf32 and effb0-a100-amp (NVIDIA DeepLearningExamples); bf16 as fp16; fp32 "
      "(TF32 off) from the V100" },
    { "a100-pcie",
      "NVIDIA A100 PCIe 40GB",
      { 19.5 * T, 156.0 * T, 312.0 * T, 312.0 * T },
      1555 * G,
      2,
      "NVIDIA A100 Tensor Core GPU datasheet (2020): 19.5 TFLOPS FP32, 156 TFLOPS TF32, 312 "
      "TFLOPS FP16 and BF16 tensor (dense); 40GB PCIe (250 W): 1,555 GB/s; FP16 on the CUDA "
      "cores as the SXM's",
      1381.0 / 1555.0,
      STREAM ": A100 40GB, 1381 GB/s",
      &ampere_shares,
      "carried from the A100 SXM, the same GA100 chip" },
    { "h100",
      "NVIDIA H100 SXM5",
      { 66.9 * T, 494.7 * T, 989.4 * T, 989.4 * T },
      3350 * G,
      2,
      "NVIDIA H100 Tensor Core GPU architecture whitepaper (2022), H100 SXM5: 66.9 TFLOPS "
      "FP32, 494.7 TFLOPS TF32, 989.4 TFLOPS FP16 and BF16 tensor (dense; the datasheet's "
      "figures with sparsity are twice these), 133.8 TFLOPS FP16 on the CUDA cores (twice "
      "FP32); H100 datasheet (2023), SXM: 3.35 TB/s",
      1704.0 / 2000.0,
      STREAM ": H100 PCIe, 1704 of its 2,000 GB/s (no SXM5 measurement)",
      &hopper_shares,
      "tf32, fp16, bf16: the A100's shares times 0.758, fitted on rn50-h100-tf32 (Lambda "
      "benchmark); fp32 (TF32 off) from the V100" },
};

double sim_device_depthwise_share(void)
{
    /* Fitted with the shares on the four EfficientNet-B0 calibration points (V100 and A100,
     * 32- and 16-bit; scenarios/validation/calibrate.py): PyTorch's depthwise kernels are slow
     * (pytorch/pytorch#18631, "Depthwise convolution is slow in GPU"). */
    return DEPTHWISE_SHARE;
}

double sim_device_conv3x3_gain(int precision)
{
    /* Fitted with the convolution shares on rn50 and vgg16 on the P100 and the K80
     * (scenarios/validation/calibrate.py): 3.16 over the direct count (Winograd's F(4x4, 3x3)
     * saves up to 4). */
    return precision == SIM_PREC_FP32 ? 3.16 : 1.0;
}

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
