/* hypercuboid's native runner: see hc_runner.h. */
#define _POSIX_C_SOURCE 200112L
#include "hc_runner.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

/* Tests of outstanding requests between two yields of a waiting rank's core. */
#define HC_SPINS 64

/* The reductions must have NumPy's bits: no fused multiply-adds. They are element-wise, so
 * vectorizing them changes no bit: GCC's dynamic cost model vectorizes their loops behind a
 * run-time aliasing check (the output may be an input) at -O2 as at -O3. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off", "vect-cost-model=dynamic")
#endif

/* The reductions also for AVX2 and AVX-512, picked at load time (an ifunc): portable, and the
 * same IEEE operations element by element, so the same bits on every path. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8 && defined(__x86_64__) &&       \
    defined(__linux__) && !defined(HC_NO_CLONES)
#define HC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HC_CLONES
#endif

/* A pack's or unpack's box: loops over its axes (x, y, z, values), outer first, each with its
 * offsets in the array (`at`: the selected values are not evenly spaced) and its stride in the
 * slice (`g`). Order: one-element axes, then the array's memory order, but the values second-
 * innermost when not innermost (a transpose in blocks of one row, in the L1 cache). */
typedef struct {
    int64_t origin;   /* elements from the array's start to the box's first site */
    int64_t n[4];
    int64_t *at[4];
    int64_t g[4];
    int64_t s3;       /* the inner loop's array stride (0: through at[3]) */
} hc_box;

struct hc_plan {
    int64_t n;
    int dtype, op;
    size_t esize;
    MPI_Comm comm;
    /* per op */
    uint8_t *kind;
    int8_t *combine;
    void **dst;       /* a reduce's or copy's destination; a receive's slice */
    const void **src; /* a reduce's or copy's source; a fused receive's operand */
    void **into;      /* where a receive's message lands (dst, or a temporary) */
    uint64_t *len;    /* elements of a reduce, copy or reducing receive (0: no action) */
    uint64_t *spin_ns;
    /* messages: MPI_Isend / MPI_Irecv, or persistent (HC_PLAN_PERSISTENT) */
    void **msg;       /* what a send reads or a receive writes */
    void **temp;      /* a receive's own landing buffer (sizes only, or an in-place reduce) */
    int32_t *buf_slot, *src_slot;
    uint64_t *buf_off, *src_off;
    void **scratch;
    int64_t nscratch;
    void *zeros;
    int *count;       /* bytes */
    int *peer, *tag;
    /* dependencies: counters and the dependents released when an op starts (irequires) or
     * completes (requires), as CSR */
    int32_t *ndeps;
    int32_t *pending;
    int64_t *as_ptr, *as_idx, *ac_ptr, *ac_idx;
    /* pack and unpack: each op's box (-1: none) */
    int64_t *rid;
    hc_box *box;
    int flags;
    int block;        /* wait in MPI_Waitany (1) or test and yield (0) */
    MPI_Request *preq; /* HC_PLAN_PERSISTENT: each message's persistent request */
    /* run state */
    int64_t *heap;
    int64_t hn;
    MPI_Request *act;
    int64_t *act_op;
    int64_t nact;
    int64_t nstart;   /* act[nstart .. nact) are persistent requests not yet started */
    int64_t left;     /* ops not yet complete */
    /* memory */
    void **blocks; /* scratch, temporaries, the zero buffer: freed with the plan */
    int64_t nblocks;
};

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static const char *const KIND_NAMES[] = {"send",    "recv",  "reduce", "copy",
                                         "compute", "sleep", "pack",   "unpack"};

static size_t dtype_size(int dtype)
{
    switch (dtype) {
    case HC_DTYPE_INT8: case HC_DTYPE_UINT8: case HC_DTYPE_BYTE: return 1;
    case HC_DTYPE_INT16: case HC_DTYPE_UINT16: return 2;
    case HC_DTYPE_INT32: case HC_DTYPE_UINT32: case HC_DTYPE_FLOAT32: return 4;
    case HC_DTYPE_INT64: case HC_DTYPE_UINT64: case HC_DTYPE_FLOAT64: return 8;
    default: return 0;
    }
}

/* out[i] = a[i] (+) b[i]; out may alias a or b. Integers wrap (computed unsigned), floats as
 * IEEE with NumPy's maximum/minimum: (a > b || a is NaN) ? a : b. */
#define HC_INT_LOOP(T, U)                                                                     \
    do {                                                                                      \
        const T *x = (const T *)a, *y = (const T *)b;                                         \
        T *o = (T *)out;                                                                      \
        switch (op) {                                                                         \
        case HC_REDUCE_SUM:                                                                   \
            for (uint64_t i = 0; i < n; i++) o[i] = (T)((U)x[i] + (U)y[i]);                   \
            break;                                                                            \
        case HC_REDUCE_PROD:                                                                  \
            for (uint64_t i = 0; i < n; i++) o[i] = (T)((U)x[i] * (U)y[i]);                   \
            break;                                                                            \
        case HC_REDUCE_MAX:                                                                   \
            for (uint64_t i = 0; i < n; i++) o[i] = x[i] > y[i] ? x[i] : y[i];                \
            break;                                                                            \
        default:                                                                              \
            for (uint64_t i = 0; i < n; i++) o[i] = x[i] < y[i] ? x[i] : y[i];                \
            break;                                                                            \
        }                                                                                     \
    } while (0)

#define HC_FLOAT_LOOP(T)                                                                      \
    do {                                                                                      \
        const T *x = (const T *)a, *y = (const T *)b;                                         \
        T *o = (T *)out;                                                                      \
        switch (op) {                                                                         \
        case HC_REDUCE_SUM:                                                                   \
            for (uint64_t i = 0; i < n; i++) o[i] = x[i] + y[i];                              \
            break;                                                                            \
        case HC_REDUCE_PROD:                                                                  \
            for (uint64_t i = 0; i < n; i++) o[i] = x[i] * y[i];                              \
            break;                                                                            \
        case HC_REDUCE_MAX:                                                                   \
            for (uint64_t i = 0; i < n; i++) o[i] = (x[i] > y[i] || x[i] != x[i]) ? x[i] : y[i]; \
            break;                                                                            \
        default:                                                                              \
            for (uint64_t i = 0; i < n; i++) o[i] = (x[i] < y[i] || x[i] != x[i]) ? x[i] : y[i]; \
            break;                                                                            \
        }                                                                                     \
    } while (0)

HC_CLONES static void reduce(int dtype, int op, const void *a, const void *b, void *out, uint64_t n)
{
    switch (dtype) {
    case HC_DTYPE_INT8: HC_INT_LOOP(int8_t, uint8_t); break;
    case HC_DTYPE_INT16: HC_INT_LOOP(int16_t, uint16_t); break;
    case HC_DTYPE_INT32: HC_INT_LOOP(int32_t, uint32_t); break;
    case HC_DTYPE_INT64: HC_INT_LOOP(int64_t, uint64_t); break;
    case HC_DTYPE_UINT8: HC_INT_LOOP(uint8_t, uint8_t); break;
    case HC_DTYPE_UINT16: HC_INT_LOOP(uint16_t, uint16_t); break;
    case HC_DTYPE_UINT32: HC_INT_LOOP(uint32_t, uint32_t); break;
    case HC_DTYPE_UINT64: HC_INT_LOOP(uint64_t, uint64_t); break;
    case HC_DTYPE_FLOAT32: HC_FLOAT_LOOP(float); break;
    case HC_DTYPE_FLOAT64: HC_FLOAT_LOOP(double); break;
    default: break; /* refused by hc_plan_create */
    }
}

static void *alloc_block(hc_plan *p, size_t bytes)
{
    void *m = calloc(bytes ? bytes : 1, 1);
    if (!m) return NULL;
    p->blocks[p->nblocks++] = m;
    return m;
}


HC_API
void hc_plan_free(hc_plan *p)
{
    if (!p) return;
    for (int64_t i = 0; p->preq && i < p->n; i++)
        if (p->preq[i] != MPI_REQUEST_NULL) MPI_Request_free(&p->preq[i]);
    void *owned[] = {p->preq,   p->rid,      p->box,     p->blocks,  p->kind,   p->combine,
                     p->dst,    p->src,      p->into,    p->len,     p->spin_ns, p->msg,
                     p->temp,   p->buf_slot, p->src_slot, p->buf_off, p->src_off, p->scratch,
                     p->count,  p->peer,     p->tag,     p->ndeps,   p->pending, p->as_ptr,
                     p->as_idx, p->ac_ptr,   p->ac_idx,  p->heap,    p->act,     p->act_op};
    for (int64_t i = 0; i < p->nblocks; i++) free(p->blocks[i]);
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++) free(owned[i]);
    free(p);
}

static int linear(const int64_t *at, int64_t n, int64_t step)
{
    for (int64_t i = 0; i < n; i++)
        if (at[i] != i * step) return 0;
    return 1;
}

/* The box of region row `row` (checked against the array's layout and `count` elements), its
 * offset tables in a block of the plan. */
static int make_box(hc_plan *p, hc_box *b, const uint64_t *row, const hc_regions *rg,
                    uint64_t count, int64_t r, char *err, size_t errlen)
{
    int64_t nv = 0, ext[4], last = 0, top = -1;
    uint64_t mask = row[11]; /* all ones: every value */
    for (int a = 0; a < 4; a++)
        if ((int64_t)row[1 + a] != rg->dims[a]) {
            fail(err, errlen, "region %lld is of an array of %llu along axis %d, the array has "
                 "%lld", (long long)r, (unsigned long long)row[1 + a], a, (long long)rg->dims[a]);
            return HC_ERR_ARGUMENT;
        }
    for (int64_t v = 0; v < rg->dims[3]; v++)
        if (mask == UINT64_MAX || (v < 64 && mask >> v & 1)) nv++, top = v;
    b->origin = 0;
    for (int a = 0; a < 3; a++) {
        ext[a] = (int64_t)row[8 + a];
        if (row[5 + a] + row[8 + a] > row[1 + a]) nv = -1;
        b->origin += (int64_t)row[5 + a] * rg->stride[a];
        last += ((int64_t)row[5 + a] + ext[a] - 1) * rg->stride[a];
    }
    ext[3] = nv;
    if (nv < 0 || (mask != UINT64_MAX && rg->dims[3] < 64 && mask >> rg->dims[3]) ||
        (ext[0] && ext[1] && ext[2] && nv && last + top * rg->stride[3] >= (int64_t)count)) {
        fail(err, errlen, "region %lld leaves its %llu-element array", (long long)r,
             (unsigned long long)count);
        return HC_ERR_ARGUMENT;
    }
    int ord[4] = {0, 1, 2, 3}, t;
    int64_t key[4]; /* outer first: one-element axes, then by stride, the largest first */
    for (int a = 0; a < 4; a++) key[a] = ext[a] == 1 ? INT64_MAX : rg->stride[a];
    for (int i = 0; i < 4; i++)
        for (int j = 3; j > i; j--)
            if (key[ord[j]] > key[ord[j - 1]]) t = ord[j], ord[j] = ord[j - 1], ord[j - 1] = t;
    for (int l = 0; l < 2 && ext[3] > 1; l++) /* the values second-innermost */
        if (ord[l] == 3) ord[l] = ord[l + 1], ord[l + 1] = 3;
    int64_t *at = alloc_block(p, (size_t)(ext[0] + ext[1] + ext[2] + ext[3] + 1) * 8);
    if (!at) return HC_ERR_MEMORY;
    int64_t g[4] = {ext[1] * ext[2] * nv, ext[2] * nv, nv, 1};
    for (int l = 0; l < 4; l++) {
        int a = ord[l];
        b->n[l] = ext[a];
        b->g[l] = g[a];
        b->at[l] = at;
        if (a < 3)
            for (int64_t i = 0; i < ext[a]; i++) *at++ = i * rg->stride[a];
        else
            for (int64_t v = 0; v < rg->dims[3]; v++)
                if (mask == UINT64_MAX || (v < 64 && mask >> v & 1)) *at++ = v * rg->stride[3];
    }
    /* the inner loop's stride (0: the values are not evenly spaced); an outer loop that
     * continues it on both sides joins it (an aos array's faces: rows of sites and values) */
    b->s3 = linear(b->at[3], b->n[3], rg->stride[ord[3]]) ? rg->stride[ord[3]] : 0;
    for (int l = 2; l >= 0 && b->s3 && b->n[l] > 1 && b->g[l] == b->n[3] * b->g[3] &&
                    linear(b->at[l], b->n[l], b->n[3] * b->s3);
         l--) {
        b->n[3] *= b->n[l];
        b->n[l] = 1;
    }
    return HC_OK;
}

/* How this rank waits (see hc_runner.h): 1 block, 0 test and yield, -1 a bad setting. */
static int wait_policy(char *err, size_t errlen)
{
    const char *w = getenv("HYPERCUBOID_WAIT");
    if (w && *w && strcmp(w, "auto")) {
        if (!strcmp(w, "block")) return 1;
        if (!strcmp(w, "yield")) return 0;
        fail(err, errlen, "HYPERCUBOID_WAIT=%s: accepted block, yield or auto", w);
        return -1;
    }
    /* this node's ranks as the launcher says (Open MPI, Hydra, Slurm) */
    const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"};
    long local = 0, cores = -1;
    for (int k = 0; k < 3 && local <= 0; k++)
        if (getenv(vars[k])) local = strtol(getenv(vars[k]), NULL, 10);
#ifdef _SC_NPROCESSORS_ONLN
    cores = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    return local > 0 && cores > 0 && local <= cores;
}

static int make_requests(hc_plan *p);
static int mpi_failed(int rc, const char *name, char *err, size_t errlen);

HC_API
int hc_plan_create(const hc_program *prog, int dtype, int op, const void *sendbuf,
                   void *recvbuf, uint64_t count, MPI_Comm comm, hc_plan **out, char *err,
                   size_t errlen)
{
    return hc_plan_create_ex(prog, NULL, 0, dtype, op, sendbuf, recvbuf, count, comm, out, err,
                             errlen);
}

HC_API
int hc_plan_create_ex(const hc_program *prog, const hc_regions *rg, int flags, int dtype,
                      int op, const void *sendbuf, void *recvbuf, uint64_t count, MPI_Comm comm,
                      hc_plan **out, char *err, size_t errlen)
{
    *out = NULL;
    int64_t n = prog->nops;
    size_t es = dtype_size(dtype);
    if (es == 0) {
        fail(err, errlen, "unknown dtype code %d (0 .. %d)", dtype, HC_NDTYPES - 1);
        return HC_ERR_ARGUMENT;
    }
    if (op < 0 || op >= HC_NREDUCE_OPS) {
        fail(err, errlen, "unknown reduction operator code %d (0 .. %d)", op, HC_NREDUCE_OPS - 1);
        return HC_ERR_ARGUMENT;
    }
    if (n < 0 || n >= INT32_MAX || prog->ndeps < 0 || prog->nscratch < 0) {
        fail(err, errlen, "a program of %lld ops and %lld dependencies is out of range",
             (long long)n, (long long)prog->ndeps);
        return HC_ERR_ARGUMENT;
    }
    int block = wait_policy(err, errlen);
    if (block < 0) return HC_ERR_ARGUMENT;
    int64_t nreg = rg ? rg->nregions : 0;
    if (nreg < 0 || nreg >= INT32_MAX) {
        fail(err, errlen, "%lld regions are out of range", (long long)nreg);
        return HC_ERR_ARGUMENT;
    }
    hc_plan *p = (hc_plan *)calloc(1, sizeof *p);
    if (!p) goto oom;
    p->n = n;
    p->flags = flags;
    p->block = block;
    p->dtype = dtype;
    p->op = op;
    p->esize = es;
    p->comm = comm;
    size_t un = (size_t)(n ? n : 1), ud = (size_t)(prog->ndeps ? prog->ndeps : 1);
    size_t ur = (size_t)(nreg ? nreg : 1), ub = (size_t)prog->nscratch + un + (size_t)nreg + 1;
#define HC_ALLOC(field, count) (p->field = calloc((count), sizeof *p->field))
    if (!HC_ALLOC(kind, un) || !HC_ALLOC(combine, un) || !HC_ALLOC(dst, un) ||
        !HC_ALLOC(src, un) || !HC_ALLOC(into, un) || !HC_ALLOC(len, un) ||
        !HC_ALLOC(spin_ns, un) || !HC_ALLOC(msg, un) || !HC_ALLOC(temp, un) ||
        !HC_ALLOC(buf_slot, un) || !HC_ALLOC(src_slot, un) || !HC_ALLOC(buf_off, un) ||
        !HC_ALLOC(src_off, un) || !HC_ALLOC(count, un) || !HC_ALLOC(peer, un) ||
        !HC_ALLOC(tag, un) || !HC_ALLOC(ndeps, un) || !HC_ALLOC(pending, un) ||
        !HC_ALLOC(as_ptr, un + 1) || !HC_ALLOC(ac_ptr, un + 1) || !HC_ALLOC(as_idx, ud) ||
        !HC_ALLOC(ac_idx, ud) || !HC_ALLOC(heap, un) || !HC_ALLOC(act, un) ||
        !HC_ALLOC(act_op, un) || !HC_ALLOC(blocks, ub) || !HC_ALLOC(rid, un) ||
        !HC_ALLOC(box, ur))
        goto oom;
#undef HC_ALLOC
    for (int64_t r = 0; r < nreg; r++) {
        int rc = make_box(p, &p->box[r], rg->rows + r * HC_REGION_FIELDS, rg, count, r, err,
                          errlen);
        if (rc == HC_ERR_MEMORY) goto oom;
        if (rc != HC_OK) {
            hc_plan_free(p);
            return rc;
        }
    }

    /* scratch buffers and the zero buffer sizes-only sends read */
    int64_t ns = prog->nscratch;
    p->nscratch = ns;
    p->scratch = (void **)calloc((size_t)(ns ? ns : 1), sizeof(void *));
    if (!p->scratch) goto oom;
    for (int64_t k = 0; k < ns; k++) {
        p->scratch[k] = alloc_block(p, (size_t)prog->scratch[k] * es);
        if (!p->scratch[k]) goto oom;
    }
    uint64_t zero_bytes = 0;
    for (int64_t i = 0; i < n; i++)
        if (prog->kind[i] == HC_OP_SEND && prog->buf_slot[i] == HC_SLOT_NONE &&
            prog->bytes[i] > zero_bytes)
            zero_bytes = prog->bytes[i];
    p->zeros = alloc_block(p, (size_t)zero_bytes);
    if (!p->zeros) goto oom;

    int rc = HC_OK;
    for (int64_t i = 0; i < n && rc == HC_OK; i++) {
        uint8_t k = prog->kind[i];
        int32_t bs = prog->buf_slot[i], ss = prog->src_slot[i];
        int64_t r = rg && rg->region ? rg->region[i] : -1;
        p->rid[i] = r;
        int32_t at = k == HC_OP_PACK ? ss : bs; /* the slot of a pack's or unpack's region */
        if ((k == HC_OP_PACK || k == HC_OP_UNPACK) &&
            (r < 0 || r >= nreg || (int32_t)rg->rows[r * HC_REGION_FIELDS] != at ||
             (at != HC_SLOT_INPUT && at != HC_SLOT_OUTPUT))) {
            fail(err, errlen, "op %lld (%s): %s", (long long)i, KIND_NAMES[k],
                 rg ? "its region is not one of the input or output array's"
                    : "a pack or unpack needs the array's regions (hc_plan_create_ex)");
            rc = HC_ERR_ARGUMENT;
            break;
        }
        if (k > HC_OP_UNPACK || bs < HC_SLOT_NONE || ss < HC_SLOT_NONE ||
            (bs >= HC_SLOT_SCRATCH && bs - HC_SLOT_SCRATCH >= ns) ||
            (ss >= HC_SLOT_SCRATCH && ss - HC_SLOT_SCRATCH >= ns)) {
            fail(err, errlen, "op %lld: a kind or slot the core never writes", (long long)i);
            rc = HC_ERR_ARGUMENT;
            break;
        }
        p->kind[i] = k;
        p->combine[i] = prog->combine[i];
        p->buf_slot[i] = bs;
        p->src_slot[i] = ss;
        p->buf_off[i] = prog->buf_offset[i];
        p->src_off[i] = prog->src_offset[i];
        if (k == HC_OP_SEND || k == HC_OP_RECV) {
            uint64_t bytes = bs != HC_SLOT_NONE ? prog->buf_len[i] * es : prog->bytes[i];
            if (bytes > (uint64_t)INT_MAX) {
                fail(err, errlen,
                     "op %lld (%s): a message of %llu bytes is above the 2^31 - 1 bytes one "
                     "MPI call of the native runner moves; use the Python runner",
                     (long long)i, KIND_NAMES[k], (unsigned long long)bytes);
                rc = HC_ERR_ARGUMENT;
                break;
            }
            p->peer[i] = prog->peer[i] < 0 ? MPI_ANY_SOURCE : (int)prog->peer[i];
            p->tag[i] = prog->tag[i] < 0 ? MPI_ANY_TAG : (int)prog->tag[i];
            p->count[i] = (int)bytes;
            if (k == HC_OP_RECV) {
                int own = bs == HC_SLOT_NONE;
                if (bs != HC_SLOT_NONE && prog->combine[i] != HC_COMBINE_ASSIGN) {
                    /* a fused receive-reduce: the message lands in its slice when the operand
                     * lies apart from it, else in a temporary */
                    p->len[i] = prog->buf_len[i];
                    uint64_t lo = prog->buf_offset[i], hi = lo + prog->buf_len[i];
                    uint64_t olo = prog->src_offset[i], ohi = olo + prog->src_len[i];
                    own = ss == HC_SLOT_NONE || (ss == bs && olo < hi && lo < ohi);
                }
                if (own) {
                    p->temp[i] = alloc_block(p, (size_t)bytes);
                    if (!p->temp[i]) goto oom;
                }
            }
        } else if (k == HC_OP_REDUCE || k == HC_OP_COPY || k == HC_OP_PACK ||
                   k == HC_OP_UNPACK) {
            p->len[i] = prog->buf_len[i];
        } else {
            p->spin_ns[i] = prog->time_ps[i] / 1000;
        }
    }
    if (rc == HC_OK) hc_plan_rebind(p, sendbuf, recvbuf);
    if (rc != HC_OK) {
        hc_plan_free(p);
        return rc;
    }

    /* dependencies: counters and CSR of dependents by kind */
    for (int64_t j = 0; j < prog->ndeps; j++) {
        uint32_t a = prog->dep_op[j], b = prog->dep_on[j];
        if ((int64_t)a >= n || (int64_t)b >= n || a == b || prog->dep_kind[j] > HC_DEP_IREQUIRES) {
            fail(err, errlen, "dependency %lld (op %u on op %u) the core never writes",
                 (long long)j, a, b);
            hc_plan_free(p);
            return HC_ERR_ARGUMENT;
        }
        p->ndeps[a]++;
        if (prog->dep_kind[j] == HC_DEP_REQUIRES)
            p->ac_ptr[b + 1]++;
        else
            p->as_ptr[b + 1]++;
    }
    for (int64_t i = 0; i < n; i++) {
        p->ac_ptr[i + 1] += p->ac_ptr[i];
        p->as_ptr[i + 1] += p->as_ptr[i];
    }
    int64_t *fill_c = p->heap, *fill_s = p->act_op; /* run state, free until a run */
    memcpy(fill_c, p->ac_ptr, (size_t)n * sizeof(int64_t));
    memcpy(fill_s, p->as_ptr, (size_t)n * sizeof(int64_t));
    /* dep_op is sorted, so each op's dependents come out in program order */
    for (int64_t j = 0; j < prog->ndeps; j++) {
        uint32_t a = prog->dep_op[j], b = prog->dep_on[j];
        if (prog->dep_kind[j] == HC_DEP_REQUIRES)
            p->ac_idx[fill_c[b]++] = a;
        else
            p->as_idx[fill_s[b]++] = a;
    }
    if (flags & HC_PLAN_PERSISTENT) {
        p->preq = malloc(un * sizeof(MPI_Request));
        if (!p->preq) goto oom;
        for (int64_t i = 0; i < n; i++) p->preq[i] = MPI_REQUEST_NULL;
        rc = make_requests(p);
        if (rc != HC_OK) {
            hc_plan_free(p);
            return mpi_failed(rc, "MPI_Send_init / MPI_Recv_init", err, errlen);
        }
    }
    *out = p;
    return HC_OK;

oom:
    hc_plan_free(p);
    fail(err, errlen, "out of memory binding the program");
    return HC_ERR_MEMORY;
}

HC_API
void hc_plan_rebind(hc_plan *p, const void *sendbuf, void *recvbuf)
{
    size_t es = p->esize;
#define SLICE(slot, off)                                                                      \
    ((slot) == HC_SLOT_NONE     ? NULL                                                       \
     : (slot) == HC_SLOT_INPUT  ? (char *)sendbuf + (off) * es                               \
     : (slot) == HC_SLOT_OUTPUT ? (char *)recvbuf + (off) * es                               \
                                : (char *)p->scratch[(slot) - HC_SLOT_SCRATCH] + (off) * es)
    for (int64_t i = 0; i < p->n; i++) {
        void *dst = SLICE(p->buf_slot[i], p->buf_off[i]);
        const void *src = SLICE(p->src_slot[i], p->src_off[i]);
        p->dst[i] = dst;
        p->src[i] = src ? src : dst; /* a fused receive without operand reduces in place */
        if (p->kind[i] == HC_OP_SEND) {
            p->msg[i] = dst ? dst : p->zeros;
        } else if (p->kind[i] == HC_OP_RECV) {
            p->into[i] = p->temp[i] ? p->temp[i] : dst;
            p->msg[i] = p->into[i];
        }
    }
#undef SLICE
    if (p->preq) make_requests(p); /* a failure shows at the next start */
}

/* The persistent requests of every message (freeing those of an earlier binding). */
static int make_requests(hc_plan *p)
{
    for (int64_t i = 0; i < p->n; i++) {
        uint8_t k = p->kind[i];
        if (k != HC_OP_SEND && k != HC_OP_RECV) continue;
        if (p->preq[i] != MPI_REQUEST_NULL) MPI_Request_free(&p->preq[i]);
        int rc = k == HC_OP_RECV ? MPI_Recv_init(p->msg[i], p->count[i], MPI_BYTE, p->peer[i],
                                                 p->tag[i], p->comm, &p->preq[i])
                 : p->flags & HC_PLAN_SSEND
                     ? MPI_Ssend_init(p->msg[i], p->count[i], MPI_BYTE, p->peer[i], p->tag[i],
                                      p->comm, &p->preq[i])
                     : MPI_Send_init(p->msg[i], p->count[i], MPI_BYTE, p->peer[i], p->tag[i],
                                     p->comm, &p->preq[i]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return HC_OK;
}

HC_API
int hc_plan_create_at(const hc_program *prog, int dtype, int op, const void *sendbuf,
                      void *recvbuf, uint64_t count, const void *comm_handle, hc_plan **plan,
                      char *err, size_t errlen)
{
    return hc_plan_create(prog, dtype, op, sendbuf, recvbuf, count,
                          *(const MPI_Comm *)comm_handle, plan, err, errlen);
}

HC_API
int hc_plan_create_ex_at(const hc_program *prog, const hc_regions *regions, int flags,
                         int dtype, int op, const void *sendbuf, void *recvbuf, uint64_t count,
                         const void *comm_handle, hc_plan **plan, char *err, size_t errlen)
{
    return hc_plan_create_ex(prog, regions, flags, dtype, op, sendbuf, recvbuf, count,
                             *(const MPI_Comm *)comm_handle, plan, err, errlen);
}

HC_API
int hc_plan_wait_policy(const hc_plan *p) { return p->block; }

/* -- the run ---------------------------------------------------------------------------- */

static void heap_push(hc_plan *p, int64_t v)
{
    int64_t *h = p->heap, i = p->hn++;
    while (i > 0) {
        int64_t up = (i - 1) / 2;
        if (h[up] <= v) break;
        h[i] = h[up];
        i = up;
    }
    h[i] = v;
}

static int64_t heap_pop(hc_plan *p)
{
    int64_t *h = p->heap, top = h[0], v = h[--p->hn], i = 0, n = p->hn;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    if (n) h[i] = v;
    return top;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void spin(uint64_t ns)
{
    for (double end = now_s() + 1e-9 * (double)ns; now_s() < end;) {
    }
}

/* A pack (box of `arr` -> `flat`) or unpack (`flat` -> box) of elements of type T. */
#define HC_BOX_LOOP(T)                                                                        \
    do {                                                                                      \
        T *A = (T *)arr + b->origin, *F = (T *)flat;                                          \
        const int64_t *t0 = b->at[0], *t1 = b->at[1], *t2 = b->at[2], *t3 = b->at[3];         \
        for (int64_t i0 = 0; i0 < b->n[0]; i0++)                                              \
            for (int64_t i1 = 0; i1 < b->n[1]; i1++)                                          \
                for (int64_t i2 = 0; i2 < b->n[2]; i2++) {                                    \
                    T *a = A + t0[i0] + t1[i1] + t2[i2];                                      \
                    T *face = F + i0 * b->g[0] + i1 * b->g[1] + i2 * b->g[2];                 \
                    T *d = pack ? face : a, *q = pack ? a : face; /* to, from */              \
                    if (ds == 1 && ss == 1)                                                   \
                        for (int64_t i3 = 0; i3 < n3; i3++) d[i3] = q[i3];                    \
                    else if (s3)                                                              \
                        for (int64_t i3 = 0; i3 < n3; i3++) d[i3 * ds] = q[i3 * ss];          \
                    else if (pack)                                                            \
                        for (int64_t i3 = 0; i3 < n3; i3++) face[i3 * g3] = a[t3[i3]];        \
                    else                                                                      \
                        for (int64_t i3 = 0; i3 < n3; i3++) a[t3[i3]] = face[i3 * g3];        \
                }                                                                             \
    } while (0)

static void box_copy(const hc_box *b, size_t es, void *arr, void *flat, int pack)
{
    int64_t n3 = b->n[3], g3 = b->g[3], s3 = b->s3, ds = pack ? g3 : s3, ss = pack ? s3 : g3;
    switch (es) {
    case 1: HC_BOX_LOOP(uint8_t); break;
    case 2: HC_BOX_LOOP(uint16_t); break;
    case 4: HC_BOX_LOOP(uint32_t); break;
    default: HC_BOX_LOOP(uint64_t); break;
    }
}

/* The local action of op i (a reduce, copy, pack, unpack, or the reduction of a fused
 * receive). */
static void act(hc_plan *p, int64_t i)
{
    uint64_t len = p->len[i];
    if (!len) return;
    void *dst = p->dst[i];
    const void *src = p->src[i];
    switch (p->kind[i]) {
    case HC_OP_COPY:
        memmove(dst, src, (size_t)len * p->esize);
        break;
    case HC_OP_PACK:
        box_copy(&p->box[p->rid[i]], p->esize, (void *)src, dst, 1);
        break;
    case HC_OP_UNPACK:
        box_copy(&p->box[p->rid[i]], p->esize, dst, (void *)src, 0);
        break;
    case HC_OP_REDUCE:
        if (p->combine[i] == HC_COMBINE_BEFORE) /* dst = src (+) dst */
            reduce(p->dtype, p->op, src, dst, dst, len);
        else /* dst = dst (+) src */
            reduce(p->dtype, p->op, dst, src, dst, len);
        break;
    case HC_OP_RECV:
        if (p->combine[i] == HC_COMBINE_BEFORE) /* dst = incoming (+) operand */
            reduce(p->dtype, p->op, p->into[i], src, dst, len);
        else /* dst = operand (+) incoming */
            reduce(p->dtype, p->op, src, p->into[i], dst, len);
        break;
    default:
        break;
    }
}

static void release(hc_plan *p, const int64_t *ptr, const int64_t *idx, int64_t i)
{
    for (int64_t j = ptr[i]; j < ptr[i + 1]; j++) {
        int64_t d = idx[j];
        if (--p->pending[d] == 0) heap_push(p, d);
    }
}

static void cancel_receives(hc_plan *p)
{
    for (int64_t j = 0; j < p->nstart; j++) /* the started ones */
        if (p->kind[p->act_op[j]] == HC_OP_RECV)
            MPI_Cancel(&p->act[j]), MPI_Wait(&p->act[j], MPI_STATUS_IGNORE);
    p->nact = p->nstart = 0;
}

static void describe(const hc_plan *p, int64_t i, char *buf, size_t len)
{
    snprintf(buf, len, "op %lld (%s)", (long long)i, KIND_NAMES[p->kind[i]]);
}

/* An MPI call that failed (rc, or HC_ERR_ARGUMENT: no request completed) on op i, `how`:
 * names it, cancels the posted receives. */
static int op_failed(hc_plan *p, int64_t i, int rc, const char *how, int64_t *failed_op,
                     char *err, size_t errlen)
{
    char msg[MPI_MAX_ERROR_STRING] = "no request completed", what[64];
    int ml = 0;
    if (rc != HC_ERR_ARGUMENT) MPI_Error_string(rc, msg, &ml);
    describe(p, i, what, sizeof what);
    fail(err, errlen, "%s%s: %s", how, what, msg);
    if (failed_op) *failed_op = i;
    cancel_receives(p);
    return rc;
}

/* Starts the persistent requests posted since the last call, in one MPI_Startall. */
static int flush(hc_plan *p, int64_t *failed_op, char *err, size_t errlen)
{
    int64_t from = p->nstart;
    if (from == p->nact) return HC_OK;
    int rc = MPI_Startall((int)(p->nact - from), &p->act[from]);
    p->nstart = rc == MPI_SUCCESS ? p->nact : from;
    if (rc != MPI_SUCCESS) return op_failed(p, p->act_op[from], rc, "", failed_op, err, errlen);
    return HC_OK;
}

/* Starts every op whose dependencies are met, in program order, until none is left. */
static int issue(hc_plan *p, int64_t *failed_op, char *err, size_t errlen)
{
    while (p->hn) {
        int64_t i = heap_pop(p);
        uint8_t k = p->kind[i];
        if (k == HC_OP_SEND || k == HC_OP_RECV) {
            MPI_Request *q = &p->act[p->nact];
            int rc = MPI_SUCCESS;
            if (p->preq)
                *q = p->preq[i]; /* started by flush, with its neighbours */
            else if (k == HC_OP_RECV)
                rc = MPI_Irecv(p->msg[i], p->count[i], MPI_BYTE, p->peer[i], p->tag[i], p->comm,
                               q);
            else
                rc = (p->flags & HC_PLAN_SSEND ? MPI_Issend : MPI_Isend)(
                    p->msg[i], p->count[i], MPI_BYTE, p->peer[i], p->tag[i], p->comm, q);
            if (rc != MPI_SUCCESS) return op_failed(p, i, rc, "", failed_op, err, errlen);
            p->act_op[p->nact++] = i;
            if (!p->preq) p->nstart = p->nact;
        } else {
            int rc = flush(p, failed_op, err, errlen);
            if (rc != HC_OK) return rc;
            if (k == HC_OP_COMPUTE || k == HC_OP_SLEEP) {
                if (p->spin_ns[i]) spin(p->spin_ns[i]);
            } else {
                act(p, i);
            }
            p->left--;
            release(p, p->ac_ptr, p->ac_idx, i);
        }
        release(p, p->as_ptr, p->as_idx, i);
    }
    return flush(p, failed_op, err, errlen);
}

HC_API
int hc_plan_start(hc_plan *p, int64_t *failed_op, char *err, size_t errlen)
{
    int64_t n = p->n;
    if (failed_op) *failed_op = -1;
    memcpy(p->pending, p->ndeps, (size_t)n * sizeof(int32_t));
    p->hn = 0;
    p->nact = 0;
    p->nstart = 0;
    p->left = n;
    for (int64_t i = 0; i < n; i++)
        if (p->ndeps[i] == 0) p->heap[p->hn++] = i; /* increasing: already a heap */
    return issue(p, failed_op, err, errlen);
}

HC_API
int hc_plan_finish(hc_plan *p, double timeout, int64_t *failed_op, char *err, size_t errlen)
{
    int64_t n = p->n;
    if (failed_op) *failed_op = -1;
    double deadline = timeout > 0 ? now_s() + timeout : 0;
    char what[64];
    for (;;) {
        int rc = issue(p, failed_op, err, errlen);
        if (rc != HC_OK) return rc;
        if (!p->left) return HC_OK;
        if (!p->nact) {
            int64_t first = -1, stuck = 0;
            for (int64_t i = 0; i < n; i++)
                if (p->pending[i] && stuck++ == 0) first = i;
            describe(p, first, what, sizeof what);
            fail(err, errlen,
                 "the program cannot progress: %lld op(s) wait on ops that never run (a "
                 "dependency cycle), first %s",
                 (long long)stuck, what);
            if (failed_op) *failed_op = first;
            return HC_ERR_CYCLE;
        }
        int j = MPI_UNDEFINED, flag = 0, one = p->nact == 1;
        /* complete one request (the lowest-numbered that is done, as MPI_Waitany) */
        if (p->block && deadline == 0) {
            /* a core per rank: the library's own wait, spinning on its progress engine */
            rc = one ? MPI_Wait(&p->act[0], MPI_STATUS_IGNORE)
                     : MPI_Waitany((int)p->nact, p->act, &j, MPI_STATUS_IGNORE);
            flag = 1;
        } else {
            /* test; every HC_SPINS tests look at the clock and yield (see hc_runner.h) */
            for (long spins = 1;; spins++) {
                rc = one ? MPI_Test(&p->act[0], &flag, MPI_STATUS_IGNORE)
                         : MPI_Testany((int)p->nact, p->act, &j, &flag, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS || flag) break;
                if (spins % HC_SPINS == 0) {
                    if (!p->block) sched_yield();
                    if (deadline != 0 && now_s() > deadline) break;
                }
            }
        }
        if (one && flag) j = 0;
        if (rc == MPI_SUCCESS && !flag) {
            char ops[4 * sizeof what] = "";
            for (int64_t k = 0; k < p->nact && k < 4; k++) {
                describe(p, p->act_op[k], what, sizeof what);
                if (k) strcat(ops, ", ");
                strcat(ops, what);
            }
            fail(err, errlen, "timed out after %g s waiting for %lld op(s): %s", timeout,
                 (long long)p->nact, ops);
            if (failed_op) *failed_op = p->act_op[0];
            cancel_receives(p);
            return HC_ERR_TIMEOUT;
        }
        if (rc != MPI_SUCCESS || j == MPI_UNDEFINED)
            return op_failed(p, p->act_op[0], rc != MPI_SUCCESS ? rc : HC_ERR_ARGUMENT,
                             "waiting for ", failed_op, err, errlen);
        int64_t i = p->act_op[j];
        memmove(&p->act[j], &p->act[j + 1], (size_t)(p->nact - j - 1) * sizeof(MPI_Request));
        memmove(&p->act_op[j], &p->act_op[j + 1], (size_t)(p->nact - j - 1) * sizeof(int64_t));
        p->nstart = --p->nact;
        if (p->kind[i] == HC_OP_RECV) act(p, i);
        p->left--;
        release(p, p->ac_ptr, p->ac_idx, i);
    }
}

HC_API
int hc_plan_run(hc_plan *p, double timeout, int64_t *failed_op, char *err, size_t errlen)
{
    int rc = hc_plan_start(p, failed_op, err, errlen);
    return rc != HC_OK ? rc : hc_plan_finish(p, timeout, failed_op, err, errlen);
}

HC_API
int hc_runner_library_version(char *out, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int l = 0;
    int rc = MPI_Get_library_version(v, &l);
    snprintf(out, len, "%s", rc == MPI_SUCCESS ? v : "");
    return rc;
}

/* -- timing ------------------------------------------------------------------------------ */

HC_API
MPI_Datatype hc_mpi_datatype(int dtype)
{
    switch (dtype) {
    case HC_DTYPE_INT8: return MPI_INT8_T;
    case HC_DTYPE_INT16: return MPI_INT16_T;
    case HC_DTYPE_INT32: return MPI_INT32_T;
    case HC_DTYPE_INT64: return MPI_INT64_T;
    case HC_DTYPE_UINT8: return MPI_UINT8_T;
    case HC_DTYPE_UINT16: return MPI_UINT16_T;
    case HC_DTYPE_UINT32: return MPI_UINT32_T;
    case HC_DTYPE_UINT64: return MPI_UINT64_T;
    case HC_DTYPE_FLOAT32: return MPI_FLOAT;
    case HC_DTYPE_FLOAT64: return MPI_DOUBLE;
    case HC_DTYPE_BYTE: return MPI_BYTE;
    default: return MPI_DATATYPE_NULL;
    }
}

HC_API
MPI_Op hc_mpi_op(int op)
{
    switch (op) {
    case HC_REDUCE_SUM: return MPI_SUM;
    case HC_REDUCE_PROD: return MPI_PROD;
    case HC_REDUCE_MAX: return MPI_MAX;
    case HC_REDUCE_MIN: return MPI_MIN;
    default: return MPI_OP_NULL;
    }
}

/* Times `call(ctx, err, errlen)` the way every benchmark loop here does: `warmup` untimed
 * iterations, then `iters` samples, each the mean of `block` back-to-back calls in µs, with a
 * barrier after every iteration (outside the time), OSU style. */
static int time_calls(int (*call)(void *, char *, size_t), void *ctx, MPI_Comm comm, int iters,
                      int warmup, int block, double *samples_us, char *err, size_t errlen)
{
    for (int it = -warmup; it < iters; it++) {
        double t0 = MPI_Wtime();
        for (int b = 0; b < block; b++) {
            int rc = call(ctx, err, errlen);
            if (rc != HC_OK) return rc;
        }
        double t1 = MPI_Wtime();
        if (it >= 0) samples_us[it] = (t1 - t0) / block * 1e6;
        MPI_Barrier(comm);
    }
    return HC_OK;
}

/* An MPI call's failure as the runner's error text: "NAME: the library's message". */
static int mpi_failed(int rc, const char *name, char *err, size_t errlen)
{
    char msg[MPI_MAX_ERROR_STRING];
    int ml = 0;
    MPI_Error_string(rc, msg, &ml);
    fail(err, errlen, "%s: %s", name, msg);
    return rc;
}

static int run_plan(void *ctx, char *err, size_t errlen)
{
    int64_t failed;
    return hc_plan_run((hc_plan *)ctx, 0, &failed, err, errlen);
}

HC_API
int hc_plan_time(hc_plan *p, int iters, int warmup, int block, double *samples_us, char *err,
                 size_t errlen)
{
    return time_calls(run_plan, p, p->comm, iters, warmup, block, samples_us, err, errlen);
}

/* One library collective to time: its buffers, count, type, operator and communicator. */
typedef struct {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype type;
    MPI_Op op;
    MPI_Comm comm;
} library_call;

static int run_allreduce(void *ctx, char *err, size_t errlen)
{
    const library_call *c = ctx;
    int rc = MPI_Allreduce(c->sendbuf, c->recvbuf, c->count, c->type, c->op, c->comm);
    return rc == MPI_SUCCESS ? HC_OK : mpi_failed(rc, "MPI_Allreduce", err, errlen);
}

static int run_alltoall(void *ctx, char *err, size_t errlen)
{
    const library_call *c = ctx;
    int rc = MPI_Alltoall(c->sendbuf, c->count, c->type, c->recvbuf, c->count, c->type, c->comm);
    return rc == MPI_SUCCESS ? HC_OK : mpi_failed(rc, "MPI_Alltoall", err, errlen);
}

HC_API
int hc_time_library_allreduce(const void *sendbuf, void *recvbuf, uint64_t count, int dtype,
                              int op, const void *comm_handle, int iters, int warmup,
                              int block, double *samples_us, char *err, size_t errlen)
{
    library_call c = {sendbuf, recvbuf, (int)count, hc_mpi_datatype(dtype), hc_mpi_op(op),
                      *(const MPI_Comm *)comm_handle};
    if (c.type == MPI_DATATYPE_NULL || c.op == MPI_OP_NULL || count > (uint64_t)INT_MAX) {
        fail(err, errlen, "no MPI datatype or operator for dtype %d, op %d, count %llu", dtype,
             op, (unsigned long long)count);
        return HC_ERR_ARGUMENT;
    }
    return time_calls(run_allreduce, &c, c.comm, iters, warmup, block, samples_us, err, errlen);
}

HC_API
int hc_time_library_alltoall(const void *sendbuf, void *recvbuf, uint64_t count, int dtype,
                             const void *comm_handle, int iters, int warmup, int block,
                             double *samples_us, char *err, size_t errlen)
{
    library_call c = {sendbuf, recvbuf, (int)count, hc_mpi_datatype(dtype), MPI_OP_NULL,
                      *(const MPI_Comm *)comm_handle};
    if (c.type == MPI_DATATYPE_NULL || count > (uint64_t)INT_MAX) {
        fail(err, errlen, "no MPI datatype for dtype %d, or count %llu above INT_MAX", dtype,
             (unsigned long long)count);
        return HC_ERR_ARGUMENT;
    }
    return time_calls(run_alltoall, &c, c.comm, iters, warmup, block, samples_us, err, errlen);
}
