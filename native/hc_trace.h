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

#define HCT_VERSION 1u

enum {
    K_INIT = 0, K_FINALIZE = 1,
    K_SEND = 10, K_SSEND, K_BSEND, K_RSEND, K_ISEND, K_ISSEND, K_IBSEND, K_IRSEND,
    K_RECV = 20, K_IRECV, K_SENDRECV, K_SENDRECV_REPLACE, K_PROBE, K_IPROBE,
    K_SEND_INIT, K_RECV_INIT, K_START, K_STARTALL, /* 26 .. 29: persistent requests */
    K_WAIT = 30, K_WAITALL, K_WAITANY, K_WAITSOME, K_TEST, K_TESTALL, K_TESTANY, K_TESTSOME,
    K_BARRIER = 50, K_BCAST, K_REDUCE, K_ALLREDUCE, K_ALLGATHER, K_ALLGATHERV, K_ALLTOALL,
    K_ALLTOALLV, K_REDUCE_SCATTER, K_REDUCE_SCATTER_BLOCK, K_SCAN, K_EXSCAN,
    K_NB = 20, /* the non-blocking form of collective K is K + K_NB (70 Ibarrier .. 81 Iexscan) */
    K_COMM_DUP = 90, K_COMM_SPLIT, K_COMM_CREATE, K_COMM_SPLIT_TYPE,
};

/* peer values besides a rank of the communicator */
#define P_ANY (-1)
#define P_NONE (-2)
#define P_NULL (-3)

typedef struct {
    uint16_t kind;   /* the call (K_*) */
    uint16_t op;     /* reduction operator (op_code), 0 none */
    uint32_t comm;   /* the communicator's id: 0 world, 1 self, 2... in creation order */
    uint64_t t0, t1; /* ns since MPI_Init returned: call entered, call returned */
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

/* ns since MPI_Init returned. On x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in
 * /proc/cpuinfo, checked at start) the time stamp counter scaled by the rate calibrated against
 * CLOCK_MONOTONIC at MPI_Init: about a third of clock_gettime's cost, which is most of what a
 * recorded call costs; elsewhere CLOCK_MONOTONIC. */
#if defined(__x86_64__)
#include <x86intrin.h>
static uint64_t now(void)
{
    if (!clk.tsc_mult) return mono();
    uint64_t d = __rdtsc() - clk.tsc0;
    return (uint64_t)(((unsigned __int128)d * clk.tsc_mult) >> 32);
}

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
static uint64_t now(void) { return mono(); }
static void calibrate(void) {}
static void rebase(void) { clock_gettime(CLOCK_MONOTONIC, &clk.base); }
#endif

#endif
