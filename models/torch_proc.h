/* Internal to models/torch*.c: one model-server process (python/hetsim/server.py) and its
 * wire format, for the probe (torch_config.c) and a run's servers (torch.c).
 *
 * A server is spawned with its socket as fd 3, its exchange region (a memfd, mapped here too)
 * as fd 4 and the shared data region as fd 5, and gets its configuration (a JSON object) as
 * its first message. A request is 32 bytes, a reply 40 bytes and some text (server.py's
 * docstring). A failure is sticky: once a request failed (the server died, replied with an
 * error), every later one fails with the same error, kept in the process's `err`.
 */
#ifndef MODELS_TORCH_PROC_H
#define MODELS_TORCH_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "models/model.h"
#include "sim/err.h"

enum torch_op {
    TORCH_OP_INIT = 1,  /* seed: a fresh network's parameters and buffers into the region */
    TORCH_OP_GRAD = 2,  /* n, seed: the gradient of the ids in the region */
    TORCH_OP_EVAL = 3,  /* n, a: test examples [a, a + n) */
    TORCH_OP_QUIT = 4,  /* the server exits */
    TORCH_OP_BENCH = 5, /* n, a, seed: a plain PyTorch loop of a iterations of batch n */
};

/* Reply statuses (server.py). */
enum torch_status {
    TORCH_STATUS_OK = 0,
    TORCH_STATUS_ERROR = 1,
    TORCH_STATUS_CONTRACT = 2, /* the module does not keep the contract */
    TORCH_STATUS_NO_TORCH = 3  /* PyTorch cannot be imported */
};

typedef struct torch_request {
    uint32_t op;
    uint32_t n;
    uint64_t seed;
    int64_t a, b;
} torch_request;

typedef struct torch_reply {
    int32_t status;
    double loss;     /* a gradient's loss, an evaluation's loss sum */
    double seconds;  /* the server's time computing the request */
    int64_t correct; /* an evaluation's correct predictions */
    int64_t count;
    char *text; /* malloc'd, NUL-terminated (the caller frees), or NULL */
} torch_reply;

/* The exchange region's layout (byte offsets, 64-byte aligned). */
typedef struct torch_layout {
    size_t params, grad, bufs, idx; /* offsets */
    size_t idx_n;                   /* int64 slots for sample ids */
    size_t bytes;                   /* the whole region */
} torch_layout;

/* The shared data region's layout: the training then the test examples, features (n, dim)
 * float32 then labels (n) uint8 each, at 64-byte aligned byte offsets. */
typedef struct torch_data_layout {
    size_t dim, classes;          /* features per example, classes */
    size_t shape[3];              /* one example: channels, height, width */
    size_t ntrain, ntest;         /* examples */
    size_t train_x, train_y;      /* offsets */
    size_t test_x, test_y, bytes; /* offsets, the whole region */
} torch_data_layout;

typedef struct torch_proc {
    pid_t pid;             /* 0 when not running */
    int sock;              /* the control channel; -1 when closed */
    int ex_fd;             /* the exchange region's memfd; -1 when none */
    unsigned char *ex;     /* the region mapped (NULL when none) */
    torch_layout layout;   /* its layout */
    bool waiting;          /* started, its ready reply not read yet */
    unsigned index;        /* the thread it serves (in messages) */
    const char *shown;     /* the module as the scenario names it (must outlive) */
    double seconds;        /* wall seconds of its requests */
    double server_seconds; /* the server's own computing time of them */
    int failed;            /* SIM_OK, or the sticky failure's code */
    sim_err err;           /* the sticky failure */
} torch_proc;

/* The exchange region for a model of P parameters and NB buffer floats, batches of B. */
void torch_layout_for(torch_layout *l, size_t P, size_t NB, size_t B);

/* The data region for ntrain and ntest examples of `shape` (channels, height, width). */
void torch_data_layout_for(torch_data_layout *l, const size_t *shape, size_t classes, size_t ntrain,
                           size_t ntest);

/* A shared region of `bytes` zeroed bytes (a memfd), mapped for writing into *map (NULL:
 * not mapped). SIM_ENOMEM. */
int torch_region(size_t bytes, int *fd, unsigned char **map, sim_err *err);

/* Appends the data region's description (the "data" member of a server's configuration,
 * server.py's map_data) to `out`; false when it does not fit. */
bool torch_data_json(char *out, size_t size, const torch_data_layout *l);

/* Appends the configuration's members common to the probe and the servers (module, args,
 * base_dir, device) to `out`, an object opened by the caller; false when they do not fit. */
bool torch_module_json(char *out, size_t size, const model_torch_config *tc);

/* Spawns a server for `tc` (its python, pydir): the exchange region of `layout` (NULL: none)
 * and the data region's fd `data_fd` (-1: none); then sends it `config` (a JSON object).
 * p->waiting until torch_proc_ready. SIM_EIO, SIM_ENOMEM with err. */
int torch_proc_start(torch_proc *p, const model_torch_config *tc, const torch_layout *layout,
                     int data_fd, const char *config, sim_err *err);

/* Reads the server's first reply into *r (the caller frees r->text): SIM_OK whatever its
 * status, SIM_EIO when the server died first. */
int torch_proc_ready(torch_proc *p, torch_reply *r, sim_err *err);

/* Sends `rq` and reads its reply (waiting first for the ready reply if still due; r->text
 * freed unless the caller wants it, r->text NULL). A failure (death, an error status) is
 * kept as the sticky one and returned (SIM_EIO). */
int torch_proc_call(torch_proc *p, const torch_request *rq, torch_reply *r);

/* Stops the server (closing its socket, then waiting for it, killing it after 10 s) and
 * frees the region. A zeroed or never started process is fine. */
void torch_proc_stop(torch_proc *p);

/* Appends `s` to `out` (a string in `size` bytes); returns false, `out` unchanged, when it
 * does not fit. */
bool torch_append(char *out, size_t size, const char *s);

/* Appends `s` to `out` as a JSON string (quoted, escaped); returns false when it does not
 * fit in `size` bytes. */
bool torch_json_string(char *out, size_t size, const char *s);

#endif
