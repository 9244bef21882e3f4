/* hypercuboid's PMPI recorder (native/hc_trace.c): the record format of docs/trace.md, the
 * open-addressing tables (keyed on a request handle's bits) that give requests their ids, and
 * the clock of the records. */
#ifndef HC_TRACE_H
#define HC_TRACE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -- the format (docs/trace.md) ----------------------------------------------------------- */

#define HCT_VERSION 2u

/* Every call the format knows: X(code, K_ constant, MPI name). The one list of the codes:
 * apptrace::CALLS in the Rust reader (crates/hypercuboid-core/src/apptrace/mod.rs) has the same
 * codes and names, which its test `calls_match_the_recorder` checks against this list. The
 * large-count forms (MPI_Send_c ...) record the codes of their int forms. */
#define HC_CALLS(X) \
    X(0, K_INIT, MPI_Init) \
    X(1, K_FINALIZE, MPI_Finalize) \
    X(10, K_SEND, MPI_Send) \
    X(11, K_SSEND, MPI_Ssend) \
    X(12, K_BSEND, MPI_Bsend) \
    X(13, K_RSEND, MPI_Rsend) \
    X(14, K_ISEND, MPI_Isend) \
    X(15, K_ISSEND, MPI_Issend) \
    X(16, K_IBSEND, MPI_Ibsend) \
    X(17, K_IRSEND, MPI_Irsend) \
    X(20, K_RECV, MPI_Recv) \
    X(21, K_IRECV, MPI_Irecv) \
    X(22, K_SENDRECV, MPI_Sendrecv) \
    X(23, K_SENDRECV_REPLACE, MPI_Sendrecv_replace) \
    X(24, K_PROBE, MPI_Probe) \
    X(25, K_IPROBE, MPI_Iprobe) \
    X(26, K_SEND_INIT, MPI_Send_init) \
    X(27, K_RECV_INIT, MPI_Recv_init) \
    X(28, K_START, MPI_Start) \
    X(29, K_STARTALL, MPI_Startall) \
    X(30, K_WAIT, MPI_Wait) \
    X(31, K_WAITALL, MPI_Waitall) \
    X(32, K_WAITANY, MPI_Waitany) \
    X(33, K_WAITSOME, MPI_Waitsome) \
    X(34, K_TEST, MPI_Test) \
    X(35, K_TESTALL, MPI_Testall) \
    X(36, K_TESTANY, MPI_Testany) \
    X(37, K_TESTSOME, MPI_Testsome) \
    X(50, K_BARRIER, MPI_Barrier) \
    X(51, K_BCAST, MPI_Bcast) \
    X(52, K_REDUCE, MPI_Reduce) \
    X(53, K_ALLREDUCE, MPI_Allreduce) \
    X(54, K_ALLGATHER, MPI_Allgather) \
    X(55, K_ALLGATHERV, MPI_Allgatherv) \
    X(56, K_ALLTOALL, MPI_Alltoall) \
    X(57, K_ALLTOALLV, MPI_Alltoallv) \
    X(58, K_REDUCE_SCATTER, MPI_Reduce_scatter) \
    X(59, K_REDUCE_SCATTER_BLOCK, MPI_Reduce_scatter_block) \
    X(60, K_SCAN, MPI_Scan) \
    X(61, K_EXSCAN, MPI_Exscan) \
    X(70, K_IBARRIER, MPI_Ibarrier) \
    X(71, K_IBCAST, MPI_Ibcast) \
    X(72, K_IREDUCE, MPI_Ireduce) \
    X(73, K_IALLREDUCE, MPI_Iallreduce) \
    X(74, K_IALLGATHER, MPI_Iallgather) \
    X(75, K_IALLGATHERV, MPI_Iallgatherv) \
    X(76, K_IALLTOALL, MPI_Ialltoall) \
    X(77, K_IALLTOALLV, MPI_Ialltoallv) \
    X(78, K_IREDUCE_SCATTER, MPI_Ireduce_scatter) \
    X(79, K_IREDUCE_SCATTER_BLOCK, MPI_Ireduce_scatter_block) \
    X(80, K_ISCAN, MPI_Iscan) \
    X(81, K_IEXSCAN, MPI_Iexscan) \
    X(90, K_COMM_DUP, MPI_Comm_dup) \
    X(91, K_COMM_SPLIT, MPI_Comm_split) \
    X(92, K_COMM_CREATE, MPI_Comm_create) \
    X(93, K_COMM_SPLIT_TYPE, MPI_Comm_split_type) \

enum {
#define HC_CODE(CODE, K, NAME) K = CODE,
    HC_CALLS(HC_CODE)
#undef HC_CODE
    K_NB = K_IBARRIER - K_BARRIER, /* the non-blocking form of collective K is K + K_NB */
};

/* peer values besides a rank of the communicator */
#define P_ANY (-1)
#define P_NONE (-2)
#define P_NULL (-3)

/* A call's record as the wrappers fill it in; emit() (hc_trace.c) writes it in the file's
 * compact form (docs/trace.md). */
typedef struct {
    uint16_t kind;   /* the call (K_*) */
    uint16_t op;     /* reduction operator (op_code), 0 none */
    uint32_t comm;   /* the communicator's id: 0 world, 1 self, 2... in creation order */
    uint64_t t0, t1; /* now() readings: call entered, call returned */
    int32_t peer;    /* dest, source or root as a rank of comm; P_ANY, P_NONE, P_NULL */
    int32_t tag;     /* point-to-point: the tag (-1 any); collectives: datatype size */
    int32_t src;     /* the source the status gives (receives), else P_NONE */
    int32_t mtag;    /* the tag the status gives (receives), else -1 */
    uint64_t bytes;  /* bytes sent; collectives: see docs/trace.md */
    uint64_t rbytes; /* bytes received (status), or the receive buffer's bytes */
    uint32_t req;    /* request id (non-blocking starts; new comm id for creations), 0 none */
    uint32_t nextra; /* 8-byte words that follow */
} rec;

_Static_assert(sizeof(rec) == 64, "a record is 64 bytes");

/* The calls whose record follows from their arguments alone (blocking sends and collectives,
 * no request, status or extra words) repeat them in loops. Each keeps, per call code, the
 * arguments of its last record (KEYS words, a handle's bits) and that record's code and mask
 * and its encoded fields (what follows the times) as bytes, and a call with the same arguments
 * writes copies of those bytes around its times: its communicator, datatype and operator are
 * not looked up again and its fields not encoded again. The file is the same. Freeing a
 * datatype or a communicator, and making a communicator, forgets them all, as a handle may come
 * back as another (an operator's handle may too, but only as another user-defined one, whose
 * code is the same).
 *
 * sig: the arguments that decide a call's record, and that record's encoded bytes but its
 * times; ok: kept. */
#define KEYS 5 /* repeat() compares them one by one */
#define TAIL 16 /* the most bytes of fields kept */
typedef struct {
    uint64_t key[KEYS];
    unsigned char head[4]; /* the call's code and the mask's varint (hlen bytes) */
    unsigned char f[TAIL]; /* the fields' varints (flen bytes) */
    uint8_t hlen, flen, ok;
} sig;

/* LEB128 varints (docs/trace.md, "Record"): 7 bits a byte, low first; signed ones zigzagged */
static inline unsigned char *uvar(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static inline unsigned char *svar(unsigned char *p, int32_t v)
{
    return uvar(p, (uint32_t)((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

/* A handle's bits (the first 8 bytes of it), the key of the tables on handles. */
static inline uint64_t handle_key(const void *h, size_t n)
{
    uint64_t k = 0;
    memcpy(&k, h, n < sizeof k ? n : sizeof k);
    return k;
}

/* requests in flight, and persistent requests: open addressing on the handle's bits */
typedef struct {
    uint64_t key;
    uint32_t id; /* 0 empty */
} req_slot;
typedef struct {
    req_slot *s;
    size_t cap, n;
} table;
static size_t req_hash(uint64_t k) { return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20); }

static void put(table *t, uint64_t key, uint32_t id);

static void grow(table *t)
{
    size_t old = t->cap;
    req_slot *o = t->s;
    t->cap = old ? 2 * old : 1024;
    t->s = calloc(t->cap, sizeof *t->s);
    t->n = 0;
    if (!t->s) { /* out of memory: the ids of this table are lost (0: unknown) */
        t->cap = 0;
        return;
    }
    for (size_t i = 0; i < old; i++)
        if (o[i].id) put(t, o[i].key, o[i].id);
    free(o);
}

static void put(table *t, uint64_t key, uint32_t id)
{
    if (2 * (t->n + 1) > t->cap) grow(t);
    if (!t->cap) return;
    size_t m = t->cap - 1, i = req_hash(key) & m;
    while (t->s[i].id && t->s[i].key != key) i = (i + 1) & m;
    if (!t->s[i].id) t->n++;
    t->s[i].key = key;
    t->s[i].id = id;
}

/* The id of a request, 0 if unknown; `take` forgets it (backward-shift deletion). */
static uint32_t find(table *t, uint64_t key, int take)
{
    if (!t->cap) return 0;
    size_t m = t->cap - 1, i = req_hash(key) & m;
    while (t->s[i].id && t->s[i].key != key) i = (i + 1) & m;
    uint32_t id = t->s[i].id;
    if (!id || !take) return id;
    t->s[i].id = 0;
    t->n--;
    for (size_t j = (i + 1) & m; t->s[j].id; j = (j + 1) & m) {
        size_t h = req_hash(t->s[j].key) & m;
        /* move j back into the hole at i when its home is not in (i, j] */
        if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
            t->s[i] = t->s[j];
            t->s[j].id = 0;
            i = j;
        }
    }
    return id;
}

/* -- the clock ------------------------------------------------------------------------------ */

static struct {
    struct timespec base; /* time 0: MPI_Init returned */
    uint64_t tsc0, tsc_mult; /* now(): the TSC's origin and ns per tick (32.32), 0: none */
} clk;

static uint64_t mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)(t.tv_sec - clk.base.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
           (uint64_t)clk.base.tv_nsec;
}

/* The clock of the records. A recorded call reads it twice, so its cost is most of what recording
 * costs: on x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in /proc/cpuinfo,
 * checked at start) now() is the bare time stamp counter (one rdtsc, no fence: the call it
 * brackets takes far longer than the reordering window), recorded as it is: the file's header
 * gives the rate calibrated against CLOCK_MONOTONIC at MPI_Init (ns per tick, 32.32 fixed
 * point) and the reader scales; elsewhere now() is CLOCK_MONOTONIC in ns (rate 1). */
#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t now(void) { return clk.tsc_mult ? __rdtsc() : mono(); }

/* The now() reading of time 0. */
static inline uint64_t origin(void) { return clk.tsc_mult ? clk.tsc0 : 0; }

/* Whether /proc/cpuinfo says the TSC runs at a constant rate in every state. */
static int invariant_tsc(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[4096];
    int ok = 0;
    while (!ok && fgets(line, sizeof line, f))
        ok = strncmp(line, "flags", 5) == 0 && strstr(line, " constant_tsc") &&
             strstr(line, " nonstop_tsc");
    fclose(f);
    return ok;
}

/* Sets clk.tsc_mult (ns per tick, 32.32 fixed point) over about 2 ms. */
static void calibrate(void)
{
    if (!invariant_tsc()) return;
    uint64_t m0 = mono(), t0 = __rdtsc(), m1;
    while ((m1 = mono()) - m0 < 2000000) {
    }
    uint64_t t1 = __rdtsc();
    if (t1 <= t0) return;
    clk.tsc_mult = (uint64_t)(((unsigned __int128)(m1 - m0) << 32) / (t1 - t0));
}

/* Time 0 is now. */
static void rebase(void)
{
    clock_gettime(CLOCK_MONOTONIC, &clk.base);
    clk.tsc0 = __rdtsc();
}
#else
static inline uint64_t now(void) { return mono(); }
static inline uint64_t origin(void) { return 0; }
static void calibrate(void) {}
static void rebase(void) { clock_gettime(CLOCK_MONOTONIC, &clk.base); }
#endif

#endif
