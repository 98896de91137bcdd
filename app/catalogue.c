/* hetsim list profiles|devices|fabrics: the shipped profiles, the accelerator catalogue and
 * the fabric presets. */
#include "app/catalogue.h"

#include <stdio.h>
#include <string.h>

#include "net/fabric.h"
#include "scenario/device.h"
#include "sim/err.h"
#include "sim/layers.h"

int app_catalogue_profiles(void)
{
    char names[1024], path[1024];
    if (sim_layers_profile_names(names, sizeof(names)) == 0) {
        fprintf(stderr, "hetsim: no profiles found (looked in");
        sim_layers_dir dirs[4];
        size_t n = sim_layers_profile_dirs(dirs, 4);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, " %s/profiles", dirs[i].path);
        fprintf(stderr, ")\n");
        return 1;
    }
    printf("%-14s %7s %12s %14s  %s\n", "profile", "layers", "parameters", "GFLOPs/sample", "file");
    for (char *name = strtok(names, ", "); name != NULL; name = strtok(NULL, ", ")) {
        sim_layers l = { 0 };
        sim_err err;
        if (!sim_layers_find_profile(name, path, sizeof(path))) {
            fprintf(stderr, "hetsim: %s: its file vanished\n", name);
            return 1;
        }
        if (sim_layers_read_csv(&l, path, "", &err) != SIM_OK) {
            fprintf(stderr, "hetsim: %s: %s\n", name, err.msg);
            return 1;
        }
        printf("%-14s %7zu %12llu %14.3f  %s\n", name, l.n,
               (unsigned long long)sim_layers_params(&l), sim_layers_flops(&l) / 1e9, path);
        sim_layers_fini(&l);
    }
    return 0;
}

/* One device's attainable shares, per precision it has: "conv fp32 0.62 fp16 0.41; ...". */
static void print_shares(const sim_device *d)
{
    const char *what[] = { "conv", "matmul" };
    const double *share[] = { d->shares->conv, d->shares->matmul };
    printf("%-10s attainable:", "");
    for (int k = 0; k < 2; k++) {
        printf(" %s", what[k]);
        for (int p = 0; p < SIM_PREC_N; p++)
            if (d->peak_flops[p] > 0)
                printf(" %s %.3f", sim_precision_name(p), share[k][p]);
        printf(";");
    }
    printf(" memory %.3f; 3x3 convolutions x%.2f in fp32; depthwise %.4f of fp32", d->mem_frac,
           sim_device_conv3x3_gain(SIM_PREC_FP32), sim_device_depthwise_share());
    if (d->vector16 > 0)
        printf(", x%g at 16 bits", d->vector16);
    printf("\n");
}

void app_catalogue_devices(void)
{
    printf("%-10s %7s %7s %7s %7s %7s  %s\n", "device", "fp32", "tf32", "fp16", "bf16", "GB/s",
           "peak TFLOP/s (dense) and DRAM bandwidth; sources");
    for (size_t i = 0; sim_device_at(i) != NULL; i++) {
        const sim_device *d = sim_device_at(i);
        printf("%-10s", d->name);
        for (int p = 0; p < SIM_PREC_N; p++) {
            if (d->peak_flops[p] > 0)
                printf(" %7.2f", d->peak_flops[p] / 1e12);
            else
                printf(" %7s", "-");
        }
        printf(" %7.0f  %s\n", d->mem_bps / 1e9, d->label);
        print_shares(d);
        printf("%-10s datasheet: %s\n%-10s memory: %s\n%-10s shares: %s\n", "", d->source, "",
               d->mem_source, "", d->fit);
    }
}

void app_catalogue_fabrics(void)
{
    printf("%-12s %-5s %9s %8s  %s\n", "fabric", "where", "Gb/s", "us/end",
           "attainable bandwidth per direction, latency per link end; source");
    for (size_t i = 0; sim_fabric_at(i) != NULL; i++) {
        const sim_fabric *f = sim_fabric_at(i);
        printf("%-12s %-5s %9.2f %8.2f  %s\n%-37s  %s\n", f->name, f->host ? "host" : "nic",
               f->bandwidth_gbps, f->latency_us, f->label, "", f->source);
    }
}
