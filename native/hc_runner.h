/* hypercuboid's native runner: executes one rank's program (the columns of the Rust core's
 * schedule::columns encoding) with non-blocking MPI calls and typed reductions, in the same
 * issue order as the Python engine (hypercuboid.mpi.engine):
 *
 *   - every op whose dependencies are satisfied starts, in program order (a min-heap of op
 *     indices): a send or receive is posted (MPI_Isend, MPI_Irecv); a reduce, copy, compute
 *     or sleep runs on the spot;
 *   - when nothing more can start, MPI_Waitany completes one outstanding request; a fused
 *     receive-reduce then reduces, and the op's dependents are released.
 *
 * A plan binds a program to its buffers once (scratch, temporaries, the resolved arguments of
 * every message on a communicator); hc_plan_run then runs it as many times as asked. A plan
 * posts plain requests (starting a persistent request costs Open MPI's ob1 more than posting a
 * new one), or, made with HC_PLAN_PERSISTENT, persistent ones started with MPI_Startall (the
 * halo exchange's repeated messages). Pack and unpack ops (a 3-D box of an array, with a value
 * mask, to or from a contiguous slice: the halo exchanges) run in C when the plan is given the
 * array's regions (hc_plan_create_ex). The codes (op kinds, slots,
 * combines, dependency kinds, dtypes, reduction operators) come from hc_codes.h, which the Rust
 * core generates.
 *
 * Waiting: when nothing can start, a rank whose node has a core for every rank of the job (the
 * launcher's count of the node's ranks at most its online cores) blocks in MPI_Waitany /
 * MPI_Wait (the library's own wait, which spins on its progress engine, as the library's own
 * collectives do; other jobs on the node do not change this: yielding would hand the core to
 * them); when the job's ranks outnumber the cores, or the launcher does not say, it tests its
 * requests and gives its core away (sched_yield) after every 64 tests, since MPICH's wait keeps
 * the core from the rank it waits for. HYPERCUBOID_WAIT=block|yield forces either
 * (hc_plan_wait_policy).
 *
 * Reductions give the bits NumPy gives: integers wrap, IEEE + and * without
 * contraction, max/min as numpy.maximum/minimum ((a > b || a is NaN) ? a : b).
 *
 * This file and hc_runner.c are plain C99 + MPI; they compile against any MPI (Open MPI,
 * MPICH) with its mpicc. */
#ifndef HC_RUNNER_H
#define HC_RUNNER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "hc_codes.h"

/* The linkage of the runner's functions: external unless the file that includes this header
 * says otherwise. A C routine exported from a schedule (docs/native.md, section 2) embeds the
 * runner and defines HC_API as `static` first, so that several routines link into one
 * program. */
#ifndef HC_API
#define HC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's program: the columns of schedule::columns (see docs/schedule.md). The arrays are
 * read by hc_plan_create only (the plan keeps a copy of what it needs). */
typedef struct hc_program {
    int64_t nops;
    const uint8_t *kind;      /* HC_OP_* */
    const int64_t *peer;      /* -1: none, or any source */
    const int32_t *tag;       /* -1: any */
    const uint64_t *bytes;
    const int8_t *combine;    /* HC_COMBINE_* */
    const uint64_t *time_ps;  /* compute, sleep */
    const int32_t *buf_slot;  /* HC_SLOT_*: 0 input, 1 output, 2 + k scratch k, -1 none */
    const uint64_t *buf_offset;
    const uint64_t *buf_len;
    const int32_t *src_slot;
    const uint64_t *src_offset;
    const uint64_t *src_len;
    int64_t ndeps;
    const uint32_t *dep_op;   /* dep_op[j] waits for dep_on[j] */
    const uint32_t *dep_on;
    const uint8_t *dep_kind;  /* HC_DEP_REQUIRES (completion) or HC_DEP_IREQUIRES (start) */
    int64_t nscratch;
    const uint64_t *scratch;  /* elements of each scratch buffer */
} hc_program;

typedef struct hc_plan hc_plan;

/* Entries of one region row (schedule::columns::REGION_FIELDS): slot code, the array's 4 dims
 * (x, y, z, values), the box's origin (3) and extent (3), the value mask. */
#ifndef HC_REGION_FIELDS
#define HC_REGION_FIELDS 12
#endif

/* The regions of a program's pack and unpack ops (the `region` and `regions` columns) and the
 * layout of the array they cut boxes from: its logical dims (x, y, z, values) and the distance
 * in elements between neighbours along each (C order, or any other order of one block, such as
 * the lattice-Boltzmann soa layout). Regions name the input or the output slot. */
typedef struct hc_regions {
    const int64_t *region;    /* per op: its row, -1 for ops without a region */
    int64_t nregions;
    const uint64_t *rows;     /* HC_REGION_FIELDS per region */
    int64_t dims[4];
    int64_t stride[4];
} hc_regions;

/* Flags of hc_plan_create_ex. */
#define HC_PLAN_PERSISTENT 1  /* messages as persistent requests, started with MPI_Startall */
#define HC_PLAN_SSEND 2       /* sends synchronous (MPI_Issend, MPI_Ssend_init) */

/* Return codes besides MPI error codes (which are returned as they are). */
#define HC_OK 0
#define HC_ERR_ARGUMENT (-1)  /* a bad program, dtype, operator or buffer */
#define HC_ERR_MEMORY (-2)
#define HC_ERR_CYCLE (-3)     /* ops wait on ops that never run */
#define HC_ERR_TIMEOUT (-4)

/* Binds `prog` (checked by the core) to `sendbuf` (read only) and `recvbuf` (written), of
 * `count` elements of `dtype` (HC_DTYPE_*, not byte unless the program moves sizes only), with
 * reduction operator `op` (HC_REDUCE_*), for messages on `comm` (whose size and rank must be
 * the program's). On failure returns nonzero and writes a message into
 * err[errlen]. */
HC_API
int hc_plan_create(const hc_program *prog, int dtype, int op, const void *sendbuf,
                   void *recvbuf, uint64_t count, MPI_Comm comm, hc_plan **plan, char *err,
                   size_t errlen);

/* hc_plan_create with the regions of pack and unpack ops (NULL: none; a program with such ops
 * is then refused) and HC_PLAN_* flags. */
HC_API
int hc_plan_create_ex(const hc_program *prog, const hc_regions *regions, int flags, int dtype,
                      int op, const void *sendbuf, void *recvbuf, uint64_t count, MPI_Comm comm,
                      hc_plan **plan, char *err, size_t errlen);

/* hc_plan_create_ex with the communicator at `comm_handle` (as hc_plan_create_at). */
HC_API
int hc_plan_create_ex_at(const hc_program *prog, const hc_regions *regions, int flags,
                         int dtype, int op, const void *sendbuf, void *recvbuf, uint64_t count,
                         const void *comm_handle, hc_plan **plan, char *err, size_t errlen);

/* Points the plan at other input and output buffers (of the same count and dtype): cheap, so
 * that a caller with new buffers on every call (MPI_Allreduce under PMPI) keeps its plan. */
HC_API
void hc_plan_rebind(hc_plan *plan, const void *sendbuf, void *recvbuf);

/* hc_plan_create with the communicator given by the address of its handle (what mpi4py's
 * MPI._addressof gives), for callers that cannot name MPI_Comm (ctypes): the same code works
 * with every MPI ABI. */
HC_API
int hc_plan_create_at(const hc_program *prog, int dtype, int op, const void *sendbuf,
                      void *recvbuf, uint64_t count, const void *comm_handle, hc_plan **plan,
                      char *err, size_t errlen);

/* Runs the plan once. `timeout` > 0: give up after that many seconds (HC_ERR_TIMEOUT) instead
 * of waiting forever. On failure returns nonzero, names the op in err and cancels the receives
 * still posted; *failed_op is the op that failed (or -1). */
HC_API
int hc_plan_run(hc_plan *plan, double timeout, int64_t *failed_op, char *err, size_t errlen);

/* hc_plan_run in two halves: hc_plan_start runs every op that needs no wait (posts, packs) and
 * returns; hc_plan_finish completes the run. Between them the caller may touch no buffer the
 * program reads or writes. */
HC_API
int hc_plan_start(hc_plan *plan, int64_t *failed_op, char *err, size_t errlen);
HC_API
int hc_plan_finish(hc_plan *plan, double timeout, int64_t *failed_op, char *err, size_t errlen);

/* The plan's way of waiting: 1 blocks in MPI_Waitany, 0 tests and yields (see above). */
HC_API
int hc_plan_wait_policy(const hc_plan *plan);

/* Times the plan as OSU times a collective: `warmup` untimed rounds, then `iters` timed
 * rounds of `block` back-to-back runs, each round followed by a barrier outside the timing;
 * samples_us[i] = round i's time / block, in microseconds. */
HC_API
int hc_plan_time(hc_plan *plan, int iters, int warmup, int block, double *samples_us,
                 char *err, size_t errlen);

/* The same timing loop around the library's own MPI_Allreduce of `count` elements of `dtype`
 * with `op` (HC_* codes) on the communicator at `comm_handle`: the figure to compare with. */
HC_API
int hc_time_library_allreduce(const void *sendbuf, void *recvbuf, uint64_t count, int dtype,
                              int op, const void *comm_handle, int iters, int warmup,
                              int block, double *samples_us, char *err, size_t errlen);

/* The same timing loop around the library's own MPI_Alltoall of `count` elements of `dtype`
 * per pair of ranks (buffers of size x count elements). */
HC_API
int hc_time_library_alltoall(const void *sendbuf, void *recvbuf, uint64_t count, int dtype,
                             const void *comm_handle, int iters, int warmup, int block,
                             double *samples_us, char *err, size_t errlen);

/* The predefined MPI datatype of a dtype code (MPI_DATATYPE_NULL for none), and the MPI
 * operator of a reduction code (MPI_OP_NULL for none). */
HC_API
MPI_Datatype hc_mpi_datatype(int dtype);
HC_API
MPI_Op hc_mpi_op(int op);

/* Frees the plan and its scratch buffers. */
HC_API
void hc_plan_free(hc_plan *plan);

/* The MPI library the runner was compiled against (MPI_Get_library_version at run time). */
HC_API
int hc_runner_library_version(char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
