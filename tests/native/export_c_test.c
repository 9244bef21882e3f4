/* Calls C routines exported by `hypercuboid schedule export --format c` and checks them, run
 * under mpiexec by tests/test_export_c.py (which compiles it with each MPI wheel's mpicc).
 *
 * The test writes routines.h, which lists the routines linked in:
 *
 *   #define ROUTINES(A, S) A(name, nranks, type, op, count) ... S(name, nranks) ...
 *
 * A: an allreduce, int name(const void *sendbuf, void *recvbuf, MPI_Comm comm), of `count`
 *    elements of type T_INT32, T_INT64, T_FLOAT32 or T_FLOAT64 with op O_SUM, O_PROD, O_MAX or
 *    O_MIN; S: a sizes-only routine, int name(MPI_Comm comm).
 *
 * Every routine of N ranks is called on MPI_COMM_WORLD when the world has N ranks, on a
 * sub-communicator of N ranks in reverse order of the world's when the world has at least N
 * (freed, then made again), and on MPI_COMM_WORLD and MPI_COMM_NULL expecting MPI_ERR_COMM
 * when the world has another size. An allreduce is called four times in a row on each
 * communicator, each with new inputs:
 *   1. inputs whose every partial reduction is exact (small integers for a floating-point sum,
 *      powers of two for a product, any values for max and min; integers wrap), so that every
 *      rank's result must equal, bit for bit, the reduction in rank order computed here;
 *   2. the same with other buffers (the routine rebinds its plan);
 *   3. the same with MPI_IN_PLACE;
 *   4. inexact floating-point inputs: every rank's result must have the same bits as rank
 *      0's (each exported algorithm guarantees it: every rank evaluates one expression) and be
 *      within 1e-12 (double) or 1e-5 (float) of the reduction in rank order, relatively
 *      (integers: as call 1).
 * Calls 1, 2 and 4 also check that sendbuf is unchanged. A count > 0 with recvbuf NULL must
 * return MPI_ERR_BUFFER; a count of 0 runs with NULL buffers. Rank 0 prints one line, "export_c_test: R routines, C checks, F failures";
 * failures are described on stderr; the exit status is 1 when any check failed. */
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routines.h"

enum { T_INT32, T_INT64, T_FLOAT32, T_FLOAT64 };
enum { O_SUM, O_PROD, O_MAX, O_MIN };

typedef int (*allreduce_fn)(const void *, void *, MPI_Comm);
typedef int (*sizes_fn)(MPI_Comm);

typedef struct routine {
    const char *name;
    int nranks;
    allreduce_fn allreduce; /* or NULL */
    sizes_fn sizes;         /* or NULL */
    int type, op;
    size_t count;
} routine;

#define DECLARE_A(name, n, t, o, c) int name(const void *, void *, MPI_Comm);
#define DECLARE_S(name, n) int name(MPI_Comm);
ROUTINES(DECLARE_A, DECLARE_S)

#define ENTRY_A(name, n, t, o, c) {#name, n, name, NULL, t, o, c},
#define ENTRY_S(name, n) {#name, n, NULL, name, 0, 0, 0},
static const routine ROUTINE_TABLE[] = {ROUTINES(ENTRY_A, ENTRY_S)};
#define NROUTINES (sizeof ROUTINE_TABLE / sizeof ROUTINE_TABLE[0])

static int world_rank, checks, failures;

static void fail(const routine *r, const char *where, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rank %d: %s on %s: ", world_rank, r->name, where);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    failures++;
}

static size_t type_size(int t)
{
    return t == T_INT32 || t == T_FLOAT32 ? 4 : 8;
}

/* A well-mixed 32-bit value of (seed, rank, i). */
static uint32_t mix(uint32_t seed, uint32_t rank, uint32_t i)
{
    uint32_t h = seed * 0x9E3779B1u ^ (rank + 1) * 0x85EBCA77u ^ (i + 1) * 0xC2B2AE3Du;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return h;
}

/* Element i of rank `rank`'s input. exact: every partial reduction is exact (see above). */
static double float_value(int op, int exact, uint32_t seed, int rank, size_t i)
{
    uint32_t h = mix(seed, (uint32_t)rank, (uint32_t)i);
    switch (op) {
    case O_SUM:
        return exact ? (double)((int)(h % 129) - 64) : 0.1 * (rank + 1) + 1e-3 * (double)i + 0.37 * seed;
    case O_PROD:
        if (exact) return ldexp(h & 1 ? -1.0 : 1.0, (int)(h % 7) - 3);
        return 1.0 + 0.013 * (rank + 1) + 1e-4 * (double)i;
    default: /* max, min: no rounding */
        return ((double)(h % 100000) + 1.0) / 64.0 * (h & 1 ? -1.0 : 1.0);
    }
}

static void fill(const routine *r, int exact, uint32_t seed, int rank, void *buf)
{
    for (size_t i = 0; i < r->count; i++) {
        uint32_t h = mix(seed, (uint32_t)rank, (uint32_t)i);
        switch (r->type) {
        case T_INT32: {
            int32_t v = r->op == O_PROD ? (int32_t)(h % 7) - 3 : (int32_t)h;
            ((int32_t *)buf)[i] = v;
            break;
        }
        case T_INT64: {
            int64_t v = r->op == O_PROD ? (int64_t)(h % 7) - 3
                                        : (int64_t)(((uint64_t)h << 32) | mix(seed + 7, (uint32_t)rank, (uint32_t)i));
            ((int64_t *)buf)[i] = v;
            break;
        }
        case T_FLOAT32:
            ((float *)buf)[i] = (float)float_value(r->op, exact, seed, rank, i);
            break;
        default:
            ((double *)buf)[i] = float_value(r->op, exact, seed, rank, i);
            break;
        }
    }
}

/* acc = acc (+) x, element by element, as the runner computes it: integers wrap (computed
 * unsigned), max/min as numpy.maximum/minimum. */
#define INT_FOLD(T, U)                                                                         \
    do {                                                                                       \
        T *a = (T *)acc;                                                                       \
        const T *b = (const T *)x;                                                             \
        for (size_t i = 0; i < n; i++)                                                         \
            a[i] = op == O_SUM    ? (T)((U)a[i] + (U)b[i])                                     \
                   : op == O_PROD ? (T)((U)a[i] * (U)b[i])                                     \
                   : op == O_MAX  ? (a[i] > b[i] ? a[i] : b[i])                                \
                                  : (a[i] < b[i] ? a[i] : b[i]);                               \
    } while (0)
#define FLOAT_FOLD(T)                                                                          \
    do {                                                                                       \
        T *a = (T *)acc;                                                                       \
        const T *b = (const T *)x;                                                             \
        for (size_t i = 0; i < n; i++)                                                         \
            a[i] = op == O_SUM    ? a[i] + b[i]                                                \
                   : op == O_PROD ? a[i] * b[i]                                                \
                   : op == O_MAX  ? ((a[i] > b[i] || a[i] != a[i]) ? a[i] : b[i])              \
                                  : ((a[i] < b[i] || a[i] != a[i]) ? a[i] : b[i]);             \
    } while (0)

static void fold(int type, int op, void *acc, const void *x, size_t n)
{
    switch (type) {
    case T_INT32: INT_FOLD(int32_t, uint32_t); break;
    case T_INT64: INT_FOLD(int64_t, uint64_t); break;
    case T_FLOAT32: FLOAT_FOLD(float); break;
    default: FLOAT_FOLD(double); break;
    }
}

/* The reduction in rank order of the inputs of ranks 0 .. nranks-1. */
static void reference(const routine *r, int exact, uint32_t seed, void *out, void *tmp)
{
    fill(r, exact, seed, 0, out);
    for (int q = 1; q < r->nranks; q++) {
        fill(r, exact, seed, q, tmp);
        fold(r->type, r->op, out, tmp, r->count);
    }
}

static double as_double(int type, const void *buf, size_t i)
{
    switch (type) {
    case T_INT32: return (double)((const int32_t *)buf)[i];
    case T_INT64: return (double)((const int64_t *)buf)[i];
    case T_FLOAT32: return (double)((const float *)buf)[i];
    default: return ((const double *)buf)[i];
    }
}

static void check_call(const routine *r, const char *where, const char *what, int rc, int want)
{
    checks++;
    if (rc != want) {
        char got[MPI_MAX_ERROR_STRING] = "", exp[MPI_MAX_ERROR_STRING] = "";
        int len;
        MPI_Error_string(rc, got, &len);
        MPI_Error_string(want, exp, &len);
        fail(r, where, "%s returned %d (%s), expected %d (%s)", what, rc, got, want, exp);
    }
}

/* Elementwise bitwise comparison; the first difference is reported. */
static void check_equal(const routine *r, const char *where, const char *what, const void *got,
                        const void *want)
{
    size_t es = type_size(r->type);
    checks++;
    for (size_t i = 0; i < r->count; i++) {
        if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0) {
            fail(r, where, "%s: element %zu is %.17g, expected %.17g", what, i,
                 as_double(r->type, got, i), as_double(r->type, want, i));
            return;
        }
    }
}

/* Four calls of an allreduce on comm (of r->nranks ranks), as the header says. */
static void run_allreduce(const routine *r, MPI_Comm comm, const char *where)
{
    int rank;
    size_t bytes = r->count * type_size(r->type), alloc = bytes ? bytes : 1;
    MPI_Comm_rank(comm, &rank);
    char *in = malloc(alloc), *saved = malloc(alloc), *out = malloc(alloc), *want = malloc(alloc),
         *tmp = malloc(alloc), *out2 = malloc(alloc), *root = malloc(alloc);
    if (!in || !saved || !out || !want || !tmp || !out2 || !root) {
        fail(r, where, "out of memory");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int call = 1; call <= 4; call++) {
        uint32_t seed = (uint32_t)call * 11u;
        int exact = call < 4 || r->type == T_INT32 || r->type == T_INT64;
        char what[64];
        snprintf(what, sizeof what, "call %d", call);
        fill(r, exact, seed, rank, in);
        memcpy(saved, in, bytes);
        char *dst = call == 2 ? out2 : out;
        memset(dst, 0xA5, bytes);
        int rc;
        if (call == 3) {
            memcpy(dst, in, bytes);
            rc = r->allreduce(MPI_IN_PLACE, dst, comm);
        } else {
            rc = r->allreduce(in, dst, comm);
        }
        check_call(r, where, what, rc, MPI_SUCCESS);
        if (call != 3) {
            checks++;
            if (memcmp(in, saved, bytes) != 0) fail(r, where, "%s changed sendbuf", what);
        }
        reference(r, exact, seed, want, tmp);
        if (exact) {
            check_equal(r, where, what, dst, want);
        } else {
            /* the same bits as rank 0's, and close to the reduction in rank order */
            memcpy(root, dst, bytes);
            MPI_Bcast(root, (int)bytes, MPI_BYTE, 0, comm);
            check_equal(r, where, "call 4 (rank 0's bits)", dst, root);
            double tol = r->type == T_FLOAT32 ? 1e-5 : 1e-12;
            checks++;
            for (size_t i = 0; i < r->count; i++) {
                double g = as_double(r->type, dst, i), w = as_double(r->type, want, i);
                if (fabs(g - w) > tol * fabs(w)) {
                    fail(r, where, "call 4: element %zu is %.17g, expected %.17g within %g", i, g,
                         w, tol);
                    break;
                }
            }
        }
    }
    if (r->count > 0)
        check_call(r, where, "a call with recvbuf NULL", r->allreduce(in, NULL, comm),
                   MPI_ERR_BUFFER);
    else
        check_call(r, where, "a call with NULL buffers", r->allreduce(NULL, NULL, comm),
                   MPI_SUCCESS);
    free(in);
    free(saved);
    free(out);
    free(want);
    free(tmp);
    free(out2);
    free(root);
}

static void run(const routine *r, MPI_Comm comm, const char *where)
{
    if (r->allreduce) {
        run_allreduce(r, comm, where);
    } else {
        check_call(r, where, "call 1", r->sizes(comm), MPI_SUCCESS);
        check_call(r, where, "call 2", r->sizes(comm), MPI_SUCCESS);
    }
}

/* A call on a communicator the routine refuses (it returns before touching the buffers). */
static int call_refused(const routine *r, MPI_Comm comm)
{
    static char in[8], out[8];
    return r->allreduce ? r->allreduce(in, out, comm) : r->sizes(comm);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    for (size_t k = 0; k < NROUTINES; k++) {
        const routine *r = &ROUTINE_TABLE[k];
        int n = r->nranks;
        if (size == n) run(r, MPI_COMM_WORLD, "MPI_COMM_WORLD");
        if (size >= n) {
            /* the first n ranks, numbered backwards: made, used, freed (which frees the
             * routine's state), then made and used again */
            for (int round = 0; round < 2; round++) {
                MPI_Comm sub;
                int in_sub = world_rank < n;
                MPI_Comm_split(MPI_COMM_WORLD, in_sub ? 0 : MPI_UNDEFINED, n - 1 - world_rank,
                               &sub);
                if (in_sub) {
                    run(r, sub, round ? "a second sub-communicator" : "a sub-communicator");
                    MPI_Comm_free(&sub);
                }
            }
        }
        if (size != n)
            check_call(r, "MPI_COMM_WORLD", "a call", call_refused(r, MPI_COMM_WORLD),
                       MPI_ERR_COMM);
        check_call(r, "MPI_COMM_NULL", "a call", call_refused(r, MPI_COMM_NULL), MPI_ERR_COMM);
    }
    int total_failures = 0, total_checks = 0;
    MPI_Reduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&checks, &total_checks, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("export_c_test: %d routines, %d checks, %d failures\n", (int)NROUTINES,
               total_checks, total_failures);
    MPI_Finalize();
    return total_failures ? 1 : 0;
}
