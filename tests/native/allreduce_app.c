/* A plain MPI application for tests/test_pmpi.py: MPI_Allreduce with several counts, types and
 * operators, MPI_IN_PLACE, sub-communicators, freed and re-made communicators and an
 * intercommunicator, each result checked against a reference this program computes itself in
 * rank order (every rank's input is a function of its rank): integers exactly, floating point
 * within a rounding bound and bitwise identical on every rank. Buffers given as input must
 * come back untouched.
 *
 *   allreduce_app none|library|passthrough|results
 *
 * none: the PMPI library must not be loaded. library: it must be, and serve every call it
 * serves (hc_pmpi_counts counts each call) while the others (MPI_BAND, a user operator, a
 * derived datatype, MPI_LONG_DOUBLE, count 0, an intercommunicator) pass to the MPI library.
 * passthrough: it must be loaded and pass every call (HYPERCUBOID_ALLREDUCE unset or refused).
 * results: it must be loaded; only the results are checked.
 *
 * Prints "allreduce_app: N calls checked (S served, P passed)" on rank 0 and exits 0, or
 * prints what is wrong and aborts. */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void hc_pmpi_counts(uint64_t *served, uint64_t *passed) __attribute__((weak));

enum { NONE, LIBRARY, PASSTHROUGH, RESULTS } mode;

enum kind { I8, U8, I16, U16, I32, U32, I64, U64, F32, F64, LD };

typedef struct {
    const char *name;
    MPI_Datatype type;
    enum kind kind;
    size_t size; /* of one element */
    int per;     /* elements in one item of the datatype */
    int served;  /* by the library, with SUM, PROD, MAX, MIN */
    int large;   /* the operator (0 .. 3) checked with the largest count too, or -1 */
} tinfo;

static tinfo TYPES[16];
static int NTYPES;

static const int COUNTS[] = {0, 1, 7, 1000, 65536};
#define NCOUNTS ((int)(sizeof COUNTS / sizeof COUNTS[0]))

static int world_rank, failures;
static long checked;

#define FAIL(...)                                                                             \
    do {                                                                                      \
        fprintf(stderr, "allreduce_app: rank %d: ", world_rank);                            \
        fprintf(stderr, __VA_ARGS__);                                                         \
        fprintf(stderr, "\n");                                                                \
        if (++failures > 20) MPI_Abort(MPI_COMM_WORLD, 1);                                    \
    } while (0)

static int is_float(enum kind k) { return k == F32 || k == F64 || k == LD; }
static int is_unsigned(enum kind k) { return k == U8 || k == U16 || k == U32 || k == U64; }

/* The input of `rank` at element i for operator `op`: small enough that no integer result
 * overflows on 4 ranks (int8 included), floats that do not add up exactly. */
static long double input(enum kind k, MPI_Op op, int rank, long i)
{
    if (is_float(k)) {
        if (op == MPI_PROD) return 1.0L + (rank + 1) * 1e-3L + (i % 97) * 1e-6L;
        return (long double)(rank + 1) * 0.1L + (i % 1013) * 1e-3L - (i % 7) * 0.37L;
    }
    long v;
    if (op == MPI_PROD)
        v = (rank + i) % 3 == 0 ? 2 : (rank + i) % 3 == 1 ? 1 : (is_unsigned(k) ? 3 : -1);
    else if (op == MPI_SUM)
        v = (rank * 7 + i * 3) % 11 - (is_unsigned(k) ? 0 : 5);
    else if (op == MPI_BAND)
        v = 0x7f ^ (1L << ((rank + i) % 7));
    else
        v = (rank * 37 + i * 11) % 101 - (is_unsigned(k) ? 0 : 50);
    return (long double)v;
}

static void put(void *buf, enum kind k, long i, long double v)
{
    switch (k) {
    case I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case I16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case U16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case U32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case I64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case U64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case F32: ((float *)buf)[i] = (float)v; break;
    case F64: ((double *)buf)[i] = (double)v; break;
    case LD: ((long double *)buf)[i] = v; break;
    }
}

static long double get(const void *buf, enum kind k, long i)
{
    switch (k) {
    case I8: return ((const int8_t *)buf)[i];
    case U8: return ((const uint8_t *)buf)[i];
    case I16: return ((const int16_t *)buf)[i];
    case U16: return ((const uint16_t *)buf)[i];
    case I32: return ((const int32_t *)buf)[i];
    case U32: return ((const uint32_t *)buf)[i];
    case I64: return (long double)((const int64_t *)buf)[i];
    case U64: return (long double)((const uint64_t *)buf)[i];
    case F32: return ((const float *)buf)[i];
    case F64: return ((const double *)buf)[i];
    default: return ((const long double *)buf)[i];
    }
}

/* a (op) b, computed in the element type (the value stored, then read back) */
static long double combine(enum kind k, MPI_Op op, long double a, long double b)
{
    long double r;
    if (op == MPI_SUM) r = a + b;
    else if (op == MPI_PROD) r = a * b;
    else if (op == MPI_MAX) r = a > b ? a : b;
    else if (op == MPI_MIN) r = a < b ? a : b;
    else r = (long double)((long long)a & (long long)b); /* MPI_BAND and the user op's AND */
    long double cell[2];
    put(cell, k, 0, r);
    return get(cell, k, 0);
}

static uint64_t hash(const void *buf, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)buf)[i]) * 1099511628211ull;
    return h;
}

static uint64_t counts(int which)
{
    uint64_t s = 0, p = 0;
    if (hc_pmpi_counts) hc_pmpi_counts(&s, &p);
    return which ? p : s;
}

/* One checked MPI_Allreduce of `count` elements of `t` with `op` on `comm`, whose ranks are
 * `ranks[0..n)` (their world ranks give the inputs); `in_place` uses MPI_IN_PLACE. `served`:
 * whether the library is to run it (mode library). */
static void check(MPI_Comm comm, const int *ranks, int n, int me, const tinfo *t, MPI_Op op,
                  const char *opname, int count, int in_place, int served)
{
    long nel = (long)count * t->per;
    size_t bytes = (size_t)(nel ? nel : 1) * t->size;
    void *send = malloc(bytes), *recv = malloc(bytes), *ref = malloc(bytes);
    long double *mag = calloc((size_t)(nel ? nel : 1), sizeof *mag);
    if (!send || !recv || !ref || !mag) MPI_Abort(MPI_COMM_WORLD, 2);
    for (long i = 0; i < nel; i++) {
        long double acc = input(t->kind, op, ranks[0], i);
        mag[i] = fabsl(acc);
        for (int r = 1; r < n; r++) {
            long double x = input(t->kind, op, ranks[r], i);
            acc = combine(t->kind, op, acc, x);
            mag[i] = op == MPI_PROD ? mag[i] * fabsl(x) : mag[i] + fabsl(x);
        }
        put(ref, t->kind, i, acc);
        put(send, t->kind, i, input(t->kind, op, ranks[me], i));
        put(recv, t->kind, i, in_place ? get(send, t->kind, i) : -99);
    }
    uint64_t s0 = counts(0), p0 = counts(1);
    int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, count, t->type, op, comm);
    uint64_t ds = counts(0) - s0, dp = counts(1) - p0;
    checked++;
    const char *how = in_place ? " in place" : "";
    if (rc != MPI_SUCCESS) FAIL("%d x %s %s%s on %d ranks: error %d", count, t->name, opname,
                                how, n, rc);
    if (mode == LIBRARY && (ds != (uint64_t)served || dp != (uint64_t)!served))
        FAIL("%d x %s %s%s on %d ranks: the library %s it, expected it %s", count, t->name,
             opname, how, n, ds ? "served" : dp ? "passed" : "did not see",
             served ? "served" : "passed");
    if (mode == PASSTHROUGH && (ds != 0 || dp != 1))
        FAIL("%d x %s %s: served %llu, passed %llu; expected every call passed", count,
             t->name, opname, (unsigned long long)ds, (unsigned long long)dp);
    long double eps = t->kind == F32 ? FLT_EPSILON : t->kind == F64 ? DBL_EPSILON : LDBL_EPSILON;
    for (long i = 0; i < nel; i++) {
        long double got = get(recv, t->kind, i), want = get(ref, t->kind, i);
        int ok = is_float(t->kind) && (op == MPI_SUM || op == MPI_PROD)
                     ? fabsl(got - want) <= 2 * n * eps * mag[i]
                     : got == want;
        if (!ok) {
            FAIL("%d x %s %s%s on %d ranks: element %ld is %.21Lg, expected %.21Lg", count,
                 t->name, opname, how, n, i, got, want);
            break;
        }
        long double cell[2];
        put(cell, t->kind, 0, input(t->kind, op, ranks[me], i));
        if (!in_place && get(send, t->kind, i) != get(cell, t->kind, 0)) {
            FAIL("%d x %s %s on %d ranks: the input buffer was written (element %ld)", count,
                 t->name, opname, n, i);
            break;
        }
    }
    /* the same bits on every rank */
    uint64_t h = hash(recv, (size_t)nel * t->size), *all = malloc((size_t)n * sizeof h);
    MPI_Allgather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, comm);
    for (int r = 1; r < n; r++)
        if (all[r] != all[0]) {
            FAIL("%d x %s %s%s on %d ranks: rank %d's result differs from rank 0's", count,
                 t->name, opname, how, n, r);
            break;
        }
    free(all);
    free(mag);
    free(send);
    free(recv);
    free(ref);
}

static void user_and(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int size;
    MPI_Type_size(*type, &size);
    for (long i = 0; i < (long)*len * size / (long)sizeof(int); i++)
        ((int *)inout)[i] &= ((int *)in)[i];
}

/* Every case on `comm` (world ranks `ranks`, this process `me`). `full`: every count, type
 * and operator; else a few. */
static void suite(MPI_Comm comm, const int *ranks, int n, int me, int full)
{
    static const char *const opnames[] = {"MPI_SUM", "MPI_PROD", "MPI_MAX", "MPI_MIN"};
    MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    for (int c = 0; c < NCOUNTS; c++) {
        int count = COUNTS[c];
        if (!full && count != 7 && count != 1000) continue;
        for (int ti = 0; ti < NTYPES; ti++) {
            const tinfo *t = &TYPES[ti];
            if (!full && t->kind != I32 && t->kind != F64) continue;
            /* the largest count for a few types and operators: long vectors, split into many
             * messages, but not all of them (MPICH is slow with more ranks than cores) */
            if (count > 1000 && t->large < 0) continue;
            for (int o = 0; o < 4; o++) {
                if ((t->kind == LD && o != 0) || (count > 1000 && o != t->large)) continue;
                int served = t->served && count > 0;
                /* again: the cached program, new buffers */
                for (int rep = 0; rep < (count > 1000 ? 1 : 2); rep++)
                    for (int in_place = 0; in_place < 2; in_place++)
                        check(comm, ranks, n, me, t, ops[o], opnames[o], count, in_place,
                              served);
            }
            if (!is_float(t->kind) && (count <= 1000 || t->size == 1)) /* the library's */
                check(comm, ranks, n, me, t, MPI_BAND, "MPI_BAND", count, 0, 0);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *m = argc > 1 ? argv[1] : "";
    mode = !strcmp(m, "none") ? NONE : !strcmp(m, "library") ? LIBRARY
           : !strcmp(m, "passthrough") ? PASSTHROUGH : !strcmp(m, "results") ? RESULTS : -1;
    if ((int)mode < 0) {
        if (world_rank == 0)
            fprintf(stderr, "usage: allreduce_app none|library|passthrough|results\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if ((mode == NONE) != (hc_pmpi_counts == NULL)) {
        if (world_rank == 0)
            fprintf(stderr, "allreduce_app: the PMPI library is%s loaded; mode %s\n",
                    hc_pmpi_counts ? "" : " not", m);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
#define T(n, ty, k, sz, s, l) TYPES[NTYPES++] = (tinfo){n, ty, k, sz, 1, s, l}
    T("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, I8, 1, 1, -1);
    T("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, U8, 1, 1, 2);
    T("MPI_SHORT", MPI_SHORT, I16, sizeof(short), 1, -1);
    T("MPI_UINT16_T", MPI_UINT16_T, U16, 2, 1, -1);
    T("MPI_INT", MPI_INT, I32, sizeof(int), 1, 0);
    T("MPI_UNSIGNED", MPI_UNSIGNED, U32, sizeof(unsigned), 1, -1);
    T("MPI_LONG", MPI_LONG, I64, sizeof(long), 1, -1);
    T("MPI_INT64_T", MPI_INT64_T, I64, 8, 1, -1);
    T("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, U64, 8, 1, -1);
    T("MPI_FLOAT", MPI_FLOAT, F32, 4, 1, -1);
    T("MPI_DOUBLE", MPI_DOUBLE, F64, 8, 1, 0);
    T("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, LD, sizeof(long double), 0, -1);
#undef T

    int *world = malloc((size_t)size * sizeof *world);
    for (int r = 0; r < size; r++) world[r] = r;
    suite(MPI_COMM_WORLD, world, size, world_rank, 1);

    /* sub-communicators: even and odd ranks; all ranks in reverse order */
    MPI_Comm half, rev;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
    int hn, hme, *hranks = malloc((size_t)size * sizeof *hranks);
    MPI_Comm_size(half, &hn);
    MPI_Comm_rank(half, &hme);
    for (int r = 0; r < hn; r++) hranks[r] = world_rank % 2 + 2 * r;
    suite(half, hranks, hn, hme, 0);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - world_rank, &rev);
    int *rranks = malloc((size_t)size * sizeof *rranks);
    for (int r = 0; r < size; r++) rranks[r] = size - 1 - r;
    suite(rev, rranks, size, size - 1 - world_rank, 0);

    /* communicators freed and made again (their cache goes with them; handles come back) */
    const tinfo *tint = &TYPES[4], *tdbl = &TYPES[10];
    for (int k = 0; k < 3; k++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        check(d, world, size, world_rank, k % 2 ? tdbl : tint, MPI_SUM, "MPI_SUM", 1000, k % 2,
              1);
        MPI_Comm_free(&d);
        MPI_Comm_free(&half);
        MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
        check(half, hranks, hn, hme, tint, MPI_MAX, "MPI_MAX", 7, 0, 1);
    }

    /* what the library passes on: a user operator, a derived datatype */
    MPI_Op band;
    MPI_Op_create(user_and, 1, &band);
    check(MPI_COMM_WORLD, world, size, world_rank, tint, band, "a user operator", 1000, 0, 0);
    check(MPI_COMM_WORLD, world, size, world_rank, tint, band, "a user operator", 7, 1, 0);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    tinfo tpair = {"a contiguous pair of MPI_INT", pair, I32, sizeof(int), 2, 0, -1};
    check(MPI_COMM_WORLD, world, size, world_rank, &tpair, band, "a user operator", 500, 0, 0);
    MPI_Type_free(&pair);
    MPI_Op_free(&band);

    /* an intercommunicator between the even and the odd ranks: each group gets the sum of
     * the other's vectors */
    if (size >= 2) {
        MPI_Comm inter;
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, world_rank % 2 ? 0 : 1, 99, &inter);
        int other = size / 2 + (world_rank % 2 ? size % 2 : 0); /* the other group's size */
        int count = 7, v[7], out[7];
        for (int i = 0; i < count; i++) v[i] = world_rank * 10 + i;
        uint64_t s0 = counts(0), p0 = counts(1);
        MPI_Allreduce(v, out, count, MPI_INT, MPI_SUM, inter);
        uint64_t ds = counts(0) - s0, dp = counts(1) - p0;
        checked++;
        if (mode != NONE && mode != RESULTS && (ds != 0 || dp != 1))
            FAIL("an intercommunicator's allreduce was served, not passed");
        for (int i = 0; i < count; i++) {
            int want = 0;
            for (int r = 0; r < other; r++) want += (2 * r + (world_rank % 2 ? 0 : 1)) * 10 + i;
            if (out[i] != want) {
                FAIL("intercommunicator: element %d is %d, expected %d", i, out[i], want);
                break;
            }
        }
        MPI_Comm_free(&inter);
    }
    MPI_Comm_free(&half);
    MPI_Comm_free(&rev);

    int bad = failures;
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("allreduce_app: %ld calls checked (%llu served, %llu passed)%s\n", checked,
               (unsigned long long)counts(0), (unsigned long long)counts(1),
               bad ? ": FAILED" : "");
    free(world);
    free(hranks);
    free(rranks);
    MPI_Finalize();
    return bad ? 1 : 0;
}
