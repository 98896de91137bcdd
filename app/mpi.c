/* Sweeps under MPI (see mpi.h). */
#include "app/mpi.h"

#ifdef HETSIM_MPI

#include <mpi.h>

enum {
    TAG_ASK = 1, /* worker -> rank 0: {finished point or -1, its status} */
    TAG_WORK = 2 /* rank 0 -> worker: {point or -1 to stop, 0} */
};

bool app_mpi_built(void)
{
    return true;
}

int app_mpi_init(int *rank, int *size, sim_err *err)
{
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS || MPI_Comm_rank(MPI_COMM_WORLD, rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, size) != MPI_SUCCESS)
        return sim_err_set(err, SIM_EIO, NULL, "MPI_Init failed");
    return 0;
}

void app_mpi_finalize(void)
{
    MPI_Finalize();
}

void app_mpi_barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}

int app_mpi_bcast(void *buf, size_t len, sim_err *err)
{
    static char drop[1 << 20];
    for (size_t at = 0; at < len;) { /* MPI counts are ints: in blocks, the same on every rank */
        size_t n = len - at < sizeof(drop) ? len - at : sizeof(drop);
        void *to = buf != NULL ? (char *)buf + at : drop;
        if (MPI_Bcast(to, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            return sim_err_set(err, SIM_EIO, NULL, "MPI_Bcast failed");
        at += n;
    }
    return 0;
}

bool app_mpi_all(bool yes)
{
    int mine = yes, all = 0;
    return MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD) == MPI_SUCCESS && all;
}

static int serve_rank0(const size_t *todo, size_t n, int size, size_t *failed, sim_err *err)
{
    size_t next = 0;
    int stopped = 0;
    while (stopped < size - 1) {
        long long msg[2], reply[2] = { -1, 0 };
        MPI_Status st;
        if (MPI_Recv(msg, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &st) !=
            MPI_SUCCESS)
            return sim_err_set(err, SIM_EIO, NULL, "MPI_Recv failed");
        if (msg[0] >= 0 && msg[1] != 0)
            (*failed)++;
        if (next < n)
            reply[0] = (long long)todo[next++];
        else
            stopped++;
        if (MPI_Send(reply, 2, MPI_LONG_LONG, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            return sim_err_set(err, SIM_EIO, NULL, "MPI_Send failed");
    }
    return 0;
}

static int serve_worker(app_mpi_run_fn run, void *ud, sim_err *err)
{
    long long msg[2] = { -1, 0 };
    for (;;) {
        long long work[2];
        if (MPI_Send(msg, 2, MPI_LONG_LONG, 0, TAG_ASK, MPI_COMM_WORLD) != MPI_SUCCESS ||
            MPI_Recv(work, 2, MPI_LONG_LONG, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
                MPI_SUCCESS)
            return sim_err_set(err, SIM_EIO, NULL, "MPI send or receive failed");
        if (work[0] < 0)
            return 0;
        msg[0] = work[0];
        msg[1] = run(ud, (size_t)work[0]);
    }
}

int app_mpi_serve(const size_t *todo, size_t n, app_mpi_run_fn run, void *ud, size_t *failed,
                  sim_err *err)
{
    int rank = 0, size = 1;
    *failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1) {
        for (size_t i = 0; i < n; i++)
            *failed += run(ud, todo[i]) != 0;
        return 0;
    }
    return rank == 0 ? serve_rank0(todo, n, size, failed, err) : serve_worker(run, ud, err);
}

#else

bool app_mpi_built(void)
{
    return false;
}

int app_mpi_init(int *rank, int *size, sim_err *err)
{
    *rank = 0;
    *size = 1;
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "--mpi: this hetsim was built without MPI (meson setup -Dmpi=enabled)");
}

void app_mpi_finalize(void)
{
}

void app_mpi_barrier(void)
{
}

int app_mpi_bcast(void *buf, size_t len, sim_err *err)
{
    (void)buf;
    (void)len;
    (void)err;
    return 0;
}

bool app_mpi_all(bool yes)
{
    return yes;
}

int app_mpi_serve(const size_t *todo, size_t n, app_mpi_run_fn run, void *ud, size_t *failed,
                  sim_err *err)
{
    (void)todo;
    (void)n;
    (void)run;
    (void)ud;
    *failed = 0;
    return sim_err_set(err, SIM_EINVAL, NULL, "this hetsim was built without MPI");
}

#endif
