/* Sweeps under MPI (`mpirun -np R hetsim sweep SWEEP.json --mpi`), optional at build time
 * (meson -Dmpi=enabled: Open MPI through pkg-config; without it every function here says
 * so and does nothing).
 *
 * Rank 0 hands out points one at a time: each other rank asks for a point, runs it, and
 * asks again, sending back the run's exit status, so a slow point never holds back a block
 * of others. Rank 0 runs nothing itself unless it is alone. Only rank 0 should write the
 * sweep's index and print.
 */
#ifndef APP_MPI_H
#define APP_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/err.h"

/* Runs point `point`; returns its exit status (0 success). */
typedef int (*app_mpi_run_fn)(void *ud, size_t point);

/* True when this binary was built with MPI. */
bool app_mpi_built(void);

/* MPI_Init; *rank and *size receive this process's rank and the number of ranks. SIM_EINVAL
 * when built without MPI. */
int app_mpi_init(int *rank, int *size, sim_err *err);

/* MPI_Finalize (nothing without MPI). */
void app_mpi_finalize(void);

/* Rank 0: hands out the `n` points `todo` to the other ranks and collects their statuses;
 * *failed receives how many were not 0. Other ranks: run the points they are given through
 * `run` until told to stop. With one rank, rank 0 runs every point itself. Returns 0, or
 * SIM_EIO when MPI fails. */
int app_mpi_serve(const size_t *todo, size_t n, app_mpi_run_fn run, void *ud, size_t *failed,
                  sim_err *err);

/* Rank 0's `len` bytes at buf into every other rank's buf (MPI_Bcast; every rank calls it with
 * the same len; another rank's buf NULL: received and dropped, so that a rank out of memory
 * still takes its part). Returns 0, or SIM_EIO. Nothing without MPI. */
int app_mpi_bcast(void *buf, size_t len, sim_err *err);

/* Whether `yes` holds on every rank (MPI_Allreduce; every rank calls it); false when MPI fails.
 * Without MPI, `yes`. */
bool app_mpi_all(bool yes);

/* Waits until every rank has reached this point (MPI_Barrier). */
void app_mpi_barrier(void);

#endif
