/* The catalogues `hetsim list` prints: the shipped layer profiles, the accelerators and the
 * fabric presets. */
#ifndef APP_CATALOGUE_H
#define APP_CATALOGUE_H

/* Prints the shipped profiles (layers, parameters, forward GFLOPs per sample, file) on
 * stdout; returns 0, or 1 after a message on stderr when none is found or one is
 * unreadable. */
int app_catalogue_profiles(void);

/* Prints the device catalogue on stdout: peak TFLOP/s per precision and DRAM bandwidth, the
 * attainable shares, and the sources of each. */
void app_catalogue_devices(void);

/* Prints the fabric presets on stdout: attainable bandwidth, latency and source of each. */
void app_catalogue_fabrics(void);

#endif
