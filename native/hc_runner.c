/* hypercuboid's native runner: see hc_runner.h. */
#define _POSIX_C_SOURCE 200112L
#include "hc_runner.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

/* Tests of outstanding requests before a waiting rank starts yielding its core. */
#define HC_SPINS 64

/* The reductions must have NumPy's bits: no fused multiply-adds. They are element-wise, so
 * vectorizing them changes no bit: GCC's dynamic cost model vectorizes their loops behind a
 * run-time aliasing check (the output may be an input) at -O2 as at -O3. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off", "vect-cost-model=dynamic")
#endif

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
    /* messages: started with MPI_Isend / MPI_Irecv (persistent requests cost more per start in
     * Open MPI's ob1) */
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
    /* run state */
    int64_t *heap;
    int64_t hn;
    MPI_Request *act;
    int64_t *act_op;
    int64_t nact;
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

static const char *const KIND_NAMES[] = {"send", "recv", "reduce", "copy", "compute", "sleep"};

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
            for (uint64_t i = 0; i < n; i++) {                                                \
                T p = x[i], q = y[i];                                                         \
                o[i] = (p > q || p != p) ? p : q;                                             \
            }                                                                                 \
            break;                                                                            \
        default:                                                                              \
            for (uint64_t i = 0; i < n; i++) {                                                \
                T p = x[i], q = y[i];                                                         \
                o[i] = (p < q || p != p) ? p : q;                                             \
            }                                                                                 \
            break;                                                                            \
        }                                                                                     \
    } while (0)

static void reduce(int dtype, int op, const void *a, const void *b, void *out, uint64_t n)
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
    for (int64_t i = 0; i < p->nblocks; i++) free(p->blocks[i]);
    free(p->blocks);
    free(p->kind);
    free(p->combine);
    free(p->dst);
    free(p->src);
    free(p->into);
    free(p->len);
    free(p->spin_ns);
    free(p->msg);
    free(p->temp);
    free(p->buf_slot);
    free(p->src_slot);
    free(p->buf_off);
    free(p->src_off);
    free(p->scratch);
    free(p->count);
    free(p->peer);
    free(p->tag);
    free(p->ndeps);
    free(p->pending);
    free(p->as_ptr);
    free(p->as_idx);
    free(p->ac_ptr);
    free(p->ac_idx);
    free(p->heap);
    free(p->act);
    free(p->act_op);
    free(p);
}

HC_API
int hc_plan_create(const hc_program *prog, int dtype, int op, const void *sendbuf,
                   void *recvbuf, uint64_t count, MPI_Comm comm, hc_plan **out, char *err,
                   size_t errlen)
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
    hc_plan *p = (hc_plan *)calloc(1, sizeof *p);
    if (!p) goto oom;
    p->n = n;
    p->dtype = dtype;
    p->op = op;
    p->esize = es;
    p->comm = comm;
    size_t un = (size_t)(n ? n : 1);
    p->kind = malloc(un);
    p->combine = malloc(un);
    p->dst = calloc(un, sizeof(void *));
    p->src = calloc(un, sizeof(void *));
    p->into = calloc(un, sizeof(void *));
    p->len = calloc(un, sizeof(uint64_t));
    p->spin_ns = calloc(un, sizeof(uint64_t));
    p->msg = calloc(un, sizeof(void *));
    p->temp = calloc(un, sizeof(void *));
    p->buf_slot = calloc(un, sizeof(int32_t));
    p->src_slot = calloc(un, sizeof(int32_t));
    p->buf_off = calloc(un, sizeof(uint64_t));
    p->src_off = calloc(un, sizeof(uint64_t));
    p->count = calloc(un, sizeof(int));
    p->peer = calloc(un, sizeof(int));
    p->tag = calloc(un, sizeof(int));
    p->ndeps = calloc(un, sizeof(int32_t));
    p->pending = calloc(un, sizeof(int32_t));
    p->as_ptr = calloc(un + 1, sizeof(int64_t));
    p->ac_ptr = calloc(un + 1, sizeof(int64_t));
    size_t ud = (size_t)(prog->ndeps ? prog->ndeps : 1);
    p->as_idx = malloc(ud * sizeof(int64_t));
    p->ac_idx = malloc(ud * sizeof(int64_t));
    p->heap = malloc(un * sizeof(int64_t));
    p->act = malloc(un * sizeof(MPI_Request));
    p->act_op = malloc(un * sizeof(int64_t));
    p->blocks = calloc((size_t)prog->nscratch + un + 1, sizeof(void *));
    if (!p->kind || !p->combine || !p->dst || !p->src || !p->into || !p->len || !p->spin_ns ||
        !p->msg || !p->temp || !p->buf_slot || !p->src_slot || !p->buf_off || !p->src_off ||
        !p->count || !p->peer || !p->tag || !p->ndeps || !p->pending || !p->as_ptr || !p->ac_ptr || !p->as_idx ||
        !p->ac_idx || !p->heap || !p->act || !p->act_op || !p->blocks)
        goto oom;

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
        if (k > HC_OP_SLEEP || bs < HC_SLOT_NONE || ss < HC_SLOT_NONE ||
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
        } else if (k == HC_OP_REDUCE || k == HC_OP_COPY) {
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
    int64_t *fill_c = malloc(un * sizeof(int64_t)), *fill_s = malloc(un * sizeof(int64_t));
    if (!fill_c || !fill_s) {
        free(fill_c);
        free(fill_s);
        goto oom;
    }
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
    free(fill_c);
    free(fill_s);
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
}

HC_API
int hc_plan_create_at(const hc_program *prog, int dtype, int op, const void *sendbuf,
                      void *recvbuf, uint64_t count, const void *comm_handle, hc_plan **plan,
                      char *err, size_t errlen)
{
    return hc_plan_create(prog, dtype, op, sendbuf, recvbuf, count,
                          *(const MPI_Comm *)comm_handle, plan, err, errlen);
}

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
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t end = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec + ns;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec >= end) return;
    }
}

/* The local action of op i (a reduce, copy, or the reduction of a fused receive). */
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
    for (int64_t j = 0; j < p->nact; j++) {
        if (p->kind[p->act_op[j]] == HC_OP_RECV) {
            MPI_Cancel(&p->act[j]);
            MPI_Wait(&p->act[j], MPI_STATUS_IGNORE);
        }
    }
    p->nact = 0;
}

static void describe(const hc_plan *p, int64_t i, char *buf, size_t len)
{
    snprintf(buf, len, "op %lld (%s)", (long long)i, KIND_NAMES[p->kind[i]]);
}

HC_API
int hc_plan_run(hc_plan *p, double timeout, int64_t *failed_op, char *err, size_t errlen)
{
    int64_t n = p->n, left = n;
    if (failed_op) *failed_op = -1;
    memcpy(p->pending, p->ndeps, (size_t)n * sizeof(int32_t));
    p->hn = 0;
    p->nact = 0;
    for (int64_t i = 0; i < n; i++)
        if (p->ndeps[i] == 0) p->heap[p->hn++] = i; /* increasing: already a heap */
    double deadline = timeout > 0 ? now_s() + timeout : 0;
    char what[64];
    for (;;) {
        while (p->hn) {
            int64_t i = heap_pop(p);
            uint8_t k = p->kind[i];
            if (k == HC_OP_SEND || k == HC_OP_RECV) {
                MPI_Request *q = &p->act[p->nact];
                int rc = k == HC_OP_SEND
                             ? MPI_Isend(p->msg[i], p->count[i], MPI_BYTE, p->peer[i], p->tag[i],
                                         p->comm, q)
                             : MPI_Irecv(p->msg[i], p->count[i], MPI_BYTE, p->peer[i], p->tag[i],
                                         p->comm, q);
                if (rc != MPI_SUCCESS) {
                    char msg[MPI_MAX_ERROR_STRING];
                    int ml = 0;
                    MPI_Error_string(rc, msg, &ml);
                    describe(p, i, what, sizeof what);
                    fail(err, errlen, "%s: %s", what, msg);
                    if (failed_op) *failed_op = i;
                    cancel_receives(p);
                    return rc;
                }
                p->act_op[p->nact++] = i;
            } else {
                if (k == HC_OP_REDUCE || k == HC_OP_COPY)
                    act(p, i);
                else if (p->spin_ns[i])
                    spin(p->spin_ns[i]);
                left--;
                release(p, p->ac_ptr, p->ac_idx, i);
            }
            release(p, p->as_ptr, p->as_idx, i);
        }
        if (!left) return HC_OK;
        if (!p->nact) {
            int64_t first = -1, stuck = 0;
            for (int64_t i = 0; i < n; i++)
                if (p->pending[i]) {
                    if (first < 0) first = i;
                    stuck++;
                }
            describe(p, first, what, sizeof what);
            fail(err, errlen,
                 "the program cannot progress: %lld op(s) wait on ops that never run (a "
                 "dependency cycle), first %s",
                 (long long)stuck, what);
            if (failed_op) *failed_op = first;
            return HC_ERR_CYCLE;
        }
        int j = MPI_UNDEFINED, flag = 0, rc;
        /* complete one request (the lowest-numbered that is done, as MPI_Waitany): test, and
         * after HC_SPINS tests give the core away between tests. MPI_Wait / MPI_Waitany block
         * in a way that starves the other ranks when they outnumber the cores (MPICH: a 1 MiB
         * ring on 4 ranks and 2 cores is 20x slower); a yielding test loop does not, and costs
         * nothing when every rank has its core. */
        for (long spins = 0;; spins++) {
            rc = p->nact == 1 ? MPI_Test(&p->act[0], &flag, MPI_STATUS_IGNORE)
                              : MPI_Testany((int)p->nact, p->act, &j, &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS || flag) break;
            if (spins >= HC_SPINS) {
                sched_yield();
                if (deadline != 0 && now_s() > deadline) break;
            }
        }
        if (p->nact == 1 && flag) j = 0;
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
        if (rc != MPI_SUCCESS || j == MPI_UNDEFINED) {
            char msg[MPI_MAX_ERROR_STRING] = "no request completed";
            int ml = 0;
            if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &ml);
            describe(p, p->act_op[0], what, sizeof what);
            fail(err, errlen, "waiting for %s: %s", what, msg);
            if (failed_op) *failed_op = p->act_op[0];
            cancel_receives(p);
            return rc != MPI_SUCCESS ? rc : HC_ERR_ARGUMENT;
        }
        int64_t i = p->act_op[j];
        memmove(&p->act[j], &p->act[j + 1], (size_t)(p->nact - j - 1) * sizeof(MPI_Request));
        memmove(&p->act_op[j], &p->act_op[j + 1], (size_t)(p->nact - j - 1) * sizeof(int64_t));
        p->nact--;
        if (p->kind[i] == HC_OP_RECV) act(p, i);
        left--;
        release(p, p->ac_ptr, p->ac_idx, i);
    }
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
