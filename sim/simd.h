/* Element-wise kernels built for several x86-64 levels, one chosen when the program loads.
 *
 * SIM_CLONES before a function's definition makes the compiler emit an AVX-512, an AVX2 and a
 * baseline version of it and bind, at load time (a GNU ifunc), the widest one the CPU runs.
 * Only for loops in which every output element goes through the same operations whatever the
 * vector width: with floating-point contraction off (meson.build passes -ffp-contract=off to
 * every compiler, so no FMA is ever formed) and no reassociation (no -ffast-math), each
 * clone computes the same bits as the baseline, so outputs never depend on the machine.
 * Reductions into one running sum stay scalar in every clone (the compiler may not reorder
 * them). The model-sized passes that use it (optimizer steps, averages, means) are bound by
 * the caches more than by arithmetic; the wider loads still save a few percent of a
 * real-training run's wall time (hot-adpsgd's gradient share 0.69 -> 0.71).
 *
 * Elsewhere it expands to nothing: other architectures, no ifunc, -DSIM_NO_CLONES, and clang,
 * whose version 14 (Debian 12's) names the dispatcher of a clone set apart from the function,
 * so that calls from other files do not link; and ThreadSanitizer builds, whose instrumented
 * ifunc resolvers run before the sanitizer's runtime is up and crash at load.
 */
#ifndef SIM_SIMD_H
#define SIM_SIMD_H

#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(SIM_NO_CLONES) && !defined(__SANITIZE_THREAD__)
#define SIM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SIM_CLONES
#endif

#endif
