/* hypercuboid's PMPI recorder (libhc_trace.so): loaded with LD_PRELOAD under an unmodified MPI
 * application, it records every point-to-point call, collective and communicator creation of
 * each rank with its timestamps, and writes them in the binary format of docs/trace.md
 * (`hypercuboid trace run` sets it up; `hypercuboid trace convert` reads it).
 *
 * Environment (read at MPI_Init):
 *   HYPERCUBOID_TRACE_PREFIX  files are <prefix>.<world rank> (default "hctrace")
 *   HYPERCUBOID_TRACE_FLUSH   bytes of records kept in memory before they are appended to the
 *                             file (default 4 MiB, at least 64 KiB): a crashed run leaves every
 *                             record up to its last flush.
 *
 * Each call appends one record (a dozen bytes in the compact form of docs/trace.md, and, for a
 * wait on several requests, a v-collective or a communicator creation, a few 8-byte words after
 * it) to a per-rank buffer; the file is opened at MPI_Init, the header written at once, the
 * buffer appended when full and at MPI_Finalize. Calls are recorded from the thread that makes
 * them with no lock: recorded applications call MPI from one thread at a time
 * (MPI_THREAD_SINGLE, FUNNELED or SERIALIZED), so the state is plain static data, not
 * thread-local (which in a shared library would cost a __tls_get_addr call per access).
 * Fortran bindings are not intercepted. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hc_trace.h"

#define HC_EXPORT __attribute__((visibility("default")))

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the trace format is little-endian; this recorder writes records as the host lays them out"
#endif

/* -- state -------------------------------------------------------------------------------- */

static struct {
    int on;
    FILE *f;
    unsigned char *buf;
    size_t len, cap;
    uint64_t last;   /* the now() reading the last encoded record returned at */
    uint32_t next_req, next_comm;
    int world_rank;
} g;

typedef struct {
    MPI_Comm h;
    uint32_t id;
} comm_slot;
static comm_slot *comms;
static size_t ncomms, capcomms;

static table reqs, persistent;

/* -- the compact form (docs/trace.md, "Record"): the call, a mask of the fields that differ
 * from their defaults, the times as tick deltas, those fields as varints, then the extra words
 * as they are. A wrapper fills in its call's record as a local `rec` and its extra words where
 * claim() says, and emit() encodes the record at the buffer's end in one pass: inlined into the
 * wrapper, the fields the call never sets are constants that the compiler folds out of the mask
 * and the varints. The buffer holds a dozen bytes a call, not 64. */

#define SLACK 32 /* an encoded record is at most sizeof(rec) + SLACK bytes (docs/trace.md) */
#define HEAD_MAX (sizeof(rec) + SLACK) /* room claimed for an encoded head */

static void flush_buf(void)
{
    if (g.f && g.len) {
        fwrite(g.buf, 1, g.len, g.f);
        fflush(g.f);
    }
    g.len = 0;
}

/* Room for `need` bytes when the buffer has none left: written out, or grown for one record
 * larger than it; 0 when out of memory. */
static __attribute__((noinline)) int make_room(size_t need)
{
    flush_buf();
    if (need <= g.cap) return 1;
    unsigned char *b = realloc(g.buf, need);
    if (!b) return 0;
    g.buf = b;
    g.cap = need;
    return 1;
}

/* Starts the record *r of the call `kind` entered at t0 and returned at t1 with `extra` words
 * after it: its fields zero but peer and src (P_NONE) and mtag (-1), and *x where the extra
 * words go (8-byte aligned, past the room of its head). 0 when memory ran out: nothing to
 * record. */
static inline __attribute__((always_inline)) int claim_at(rec *r, uint64_t **x, int kind,
                                                          uint64_t t0, uint64_t t1,
                                                          uint32_t extra)
{
    size_t need = HEAD_MAX + 7 + 8u * (size_t)extra;
    if (__builtin_expect(g.len + need > g.cap, 0) && !make_room(need)) return 0;
    *r = (rec){.kind = (uint16_t)kind, .t0 = t0, .t1 = t1, .peer = P_NONE, .src = P_NONE,
               .mtag = -1, .nextra = extra};
    *x = (uint64_t *)(g.buf + ((g.len + HEAD_MAX + 7) & ~(size_t)7));
    return 1;
}

/* claim_at() returning now; 0 also when recording is off. */
static inline __attribute__((always_inline)) int claim(rec *r, uint64_t **x, int kind,
                                                       uint64_t t0, uint32_t extra)
{
    return g.on && claim_at(r, x, kind, t0, now(), extra);
}

/* the kept records of repeat(), by call code (hc_trace.h, sig) */
static sig sigs[128];

static void sigs_clear(void) { memset(sigs, 0, sizeof sigs); }

/* Writes the times of a record entered at t0 and returned at t1 at p (the running time moves
 * to t1); returns their end. */
static inline __attribute__((always_inline)) unsigned char *put_times(unsigned char *p,
                                                                      uint64_t t0, uint64_t t1)
{
    uint64_t dt0 = t0 > g.last ? t0 - g.last : 0; /* a clock read on another core */
    uint64_t at = g.last + dt0, dur = t1 > at ? t1 - at : 0;
    g.last = at + dur;
    return uvar(uvar(p, dt0), dur);
}

/* Records the call `kind` (entered at t0, returned at t1) whose arguments k are those its last
 * record kept in s; 0 when they are not (nothing written). */
static inline __attribute__((always_inline)) int repeat(sig *s, const uint64_t *k,
                                                        uint64_t t0, uint64_t t1)
{
    uint64_t d = (uint64_t)!s->ok | (k[0] ^ s->key[0]) | (k[1] ^ s->key[1]) |
                 (k[2] ^ s->key[2]) | (k[3] ^ s->key[3]) | (k[4] ^ s->key[4]);
    if (d || __builtin_expect(g.len + HEAD_MAX > g.cap, 0)) return 0;
    unsigned char *p = g.buf + g.len;
    memcpy(p, s->head, sizeof s->head);
    p = put_times(p + s->hlen, t0, t1);
    memcpy(p, s->f, TAIL);
    g.len = (size_t)(p + s->flen - g.buf);
    return 1;
}

/* Encodes the record r, with the extra words at x that claim() gave, at the buffer's end;
 * with s, keeps its mask and encoded fields there for repeat(), under the arguments k. */
static inline __attribute__((always_inline)) void emit(const rec *r, const uint64_t *x, sig *s,
                                                       const uint64_t *k)
{
    unsigned mask = (unsigned)(r->op != 0) | (unsigned)(r->comm != 0) << 1 |
                    (unsigned)(r->peer != P_NONE) << 2 | (unsigned)(r->tag != 0) << 3 |
                    (unsigned)(r->src != P_NONE) << 4 | (unsigned)(r->mtag != -1) << 5 |
                    (unsigned)(r->bytes != 0) << 6 | (unsigned)(r->rbytes != 0) << 7 |
                    (unsigned)(r->req != 0) << 8 | (unsigned)(r->nextra != 0) << 9;
    unsigned char *h = g.buf + g.len, *p = h;
    *p++ = (unsigned char)r->kind;
    p = uvar(p, mask);
    unsigned hlen = (unsigned)(p - h);
    p = put_times(p, r->t0, r->t1);
    unsigned char *f = p;
    if (mask & 1) p = uvar(p, r->op);
    if (mask & 2) p = uvar(p, r->comm);
    if (mask & 4) p = svar(p, r->peer);
    if (mask & 8) p = svar(p, r->tag);
    if (mask & 16) p = svar(p, r->src);
    if (mask & 32) p = svar(p, r->mtag);
    if (mask & 64) p = uvar(p, r->bytes);
    if (mask & 128) p = uvar(p, r->rbytes);
    if (mask & 256) p = uvar(p, r->req);
    if (mask & 512) p = uvar(p, r->nextra);
    if (s) {
        s->ok = p - f <= TAIL && !r->nextra;
        memcpy(s->key, k, sizeof s->key);
        memcpy(s->head, h, sizeof s->head);
        memcpy(s->f, f, TAIL); /* within the head's room */
        s->hlen = (uint8_t)hlen;
        s->flen = (uint8_t)(p - f);
    }
    if (r->nextra) { /* the head is shorter than its room: the words move down */
        memmove(p, x, 8u * (size_t)r->nextra);
        p += 8u * (size_t)r->nextra;
    }
    g.len = (size_t)(p - g.buf);
}

/* Records the call `kind` entered at t0 with its fields at their defaults
 * (MPI_Init, MPI_Finalize). */
static void record(int kind, uint64_t t0)
{
    rec r;
    uint64_t *x;
    if (claim(&r, &x, kind, t0, 0)) emit(&r, x, NULL, NULL);
}

static uint32_t comm_id(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD) return 0;
    if (c == MPI_COMM_SELF) return 1;
    for (size_t i = ncomms; i-- > 0;)
        if (comms[i].h == c) return comms[i].id;
    return UINT32_MAX; /* a communicator this recorder never saw created */
}

static void comm_add(MPI_Comm c, uint32_t id)
{
    if (ncomms == capcomms) {
        size_t cap = capcomms ? 2 * capcomms : 16;
        comm_slot *n = realloc(comms, cap * sizeof *n);
        if (!n) return;
        comms = n;
        capcomms = cap;
    }
    comms[ncomms].h = c;
    comms[ncomms++].id = id;
    sigs_clear(); /* c may be the handle of one freed unseen (MPI_Comm_disconnect) */
}

static void comm_remove(MPI_Comm c)
{
    for (size_t i = 0; i < ncomms; i++)
        if (comms[i].h == c) {
            comms[i] = comms[--ncomms];
            return;
        }
}

static uint64_t req_key(const MPI_Request *r) { return handle_key(r, sizeof *r); }

static uint32_t req_take(uint64_t key) { return find(&reqs, key, 1); }

static uint32_t new_req(MPI_Request *r)
{
    if (!g.on) return 0;
    uint32_t id = ++g.next_req;
    put(&reqs, req_key(r), id);
    return id;
}

/* The sizes of the datatypes seen, direct-mapped on the handle's bits (size -1: empty), so that
 * a call's record does not ask MPI each time; MPI_Type_free empties it, as a freed handle may
 * come back as another type. */
#define TYPES 64
static struct {
    uint64_t key;
    int64_t size;
} types[TYPES];

static void types_clear(void)
{
    for (size_t i = 0; i < TYPES; i++) types[i].size = -1;
}

static inline int64_t type_size(MPI_Datatype t)
{
    uint64_t k = handle_key(&t, sizeof t);
    size_t i = (size_t)((k ^ k >> 6 ^ k >> 12) % TYPES);
    if (__builtin_expect(types[i].key == k && types[i].size >= 0, 1)) return types[i].size;
    int s = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &s) != MPI_SUCCESS || s < 0) return 0;
    types[i].key = k;
    types[i].size = s;
    return s;
}

static inline uint64_t tsize(MPI_Datatype t, uint64_t count)
{
    return (uint64_t)type_size(t) * count;
}

static inline int32_t elem_size(MPI_Datatype t) { return (int32_t)type_size(t); }

HC_EXPORT int MPI_Type_free(MPI_Datatype *t)
{
    types_clear();
    sigs_clear();
    return PMPI_Type_free(t);
}

/* The last operator a reduction used and its code (most programs reduce with one or two);
 * MPI_OP_NULL's code is 255, as op_lookup() gives it. */
static struct {
    MPI_Op op;
    uint16_t code;
} last_op = {MPI_OP_NULL, 255};

static __attribute__((noinline)) uint16_t op_lookup(MPI_Op op)
{
    MPI_Op ops[] = {MPI_SUM,  MPI_PROD, MPI_MAX,  MPI_MIN,    MPI_LAND,   MPI_LOR,    MPI_LXOR,
                    MPI_BAND, MPI_BOR,  MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE};
    uint16_t code = 255;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op == ops[i]) {
            code = (uint16_t)(i + 1);
            break;
        }
    if (code != 255) { /* user ops may be freed and their handles reused: not cached */
        last_op.op = op;
        last_op.code = code;
    }
    return code;
}

static inline uint16_t op_code(MPI_Op op)
{
    return op == last_op.op ? last_op.code : op_lookup(op);
}

static int32_t peer_of(int p)
{
    return p == MPI_ANY_SOURCE ? P_ANY : p == MPI_PROC_NULL ? P_NULL : p;
}

static uint64_t status_bytes(const MPI_Status *st)
{
    MPI_Count c = 0;
    if (PMPI_Get_elements_x(st, MPI_BYTE, &c) != MPI_SUCCESS || c < 0) return 0;
    return (uint64_t)c;
}

static void put_status(rec *r, const MPI_Status *st)
{
    r->src = peer_of(st->MPI_SOURCE);
    r->mtag = st->MPI_TAG;
    r->rbytes = status_bytes(st);
}

/* -- init and finalize -------------------------------------------------------------------- */

static void start(void)
{
    int flag = 0;
    if (PMPI_Initialized(&flag) != MPI_SUCCESS || !flag) return;
    int rank = 0, size = 0, len = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    PMPI_Get_library_version(lib, &len);
    len = (int)strnlen(lib, sizeof lib);
    while (len > 0 && (lib[len - 1] == '\n' || lib[len - 1] == ' ')) len--;
    const char *prefix = getenv("HYPERCUBOID_TRACE_PREFIX");
    if (!prefix || !*prefix) prefix = "hctrace";
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", prefix, rank);
    g.f = fopen(path, "wb");
    if (!g.f) {
        fprintf(stderr, "hypercuboid: trace: cannot write %s; rank %d is not recorded\n", path,
                rank);
        return;
    }
    const char *fl = getenv("HYPERCUBOID_TRACE_FLUSH");
    long long cap = fl ? atoll(fl) : 0;
    g.cap = cap >= (1 << 16) ? (size_t)cap : (size_t)4 << 20;
    g.buf = malloc(g.cap);
    if (g.buf) memset(g.buf, 0, g.cap); /* its pages faulted in now, not in recorded calls */
    if (!g.buf) {
        fclose(g.f);
        g.f = NULL;
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &clk.base);
    calibrate();
    rebase();
    types_clear();
    /* the rate of the ticks: ns per tick, 32.32 fixed point */
    uint64_t rate = clk.tsc_mult ? clk.tsc_mult : (uint64_t)1 << 32;
    unsigned char h[32] = "HCTRACE";
    uint32_t v[4] = {HCT_VERSION, (uint32_t)rank, (uint32_t)size, (uint32_t)len};
    memcpy(h + 8, v, sizeof v);
    memcpy(h + 24, &rate, sizeof rate);
    fwrite(h, 1, sizeof h, g.f);
    fwrite(lib, 1, (size_t)len, g.f);
    fflush(g.f);
    g.world_rank = rank;
    g.next_comm = 2;
    g.last = origin();
    g.on = 1;
    record(K_INIT, origin());
}

HC_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) start();
    return rc;
}

HC_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) start();
    return rc;
}

HC_EXPORT int MPI_Finalize(void)
{
    if (g.on) {
        record(K_FINALIZE, now());
        flush_buf();
        fclose(g.f);
        g.f = NULL;
        g.on = 0;
        free(g.buf);
        g.buf = NULL;
    }
    return PMPI_Finalize();
}

/* -- the wrappers ------------------------------------------------------------------------- */

/* PCALL(MPI_Send) is PMPI_Send, after its argument is expanded. */
#define PCALL(NAME) PCALL_(NAME)
#define PCALL_(NAME) P##NAME

/* The wrapper NAME PARAMS: calls PMPI_NAME ARGS and records the call KIND with EXTRA words,
 * whose fields the statements after them fill in (r: the record; x: its extra words; rc: what
 * the call returned; STATUS(s): the status to fill, own where the caller ignores it). KEY is
 * NOKEY, or KEY(HK(arg), ...): the arguments (at most KEYS) that decide every field, for
 * repeat(); either is one parenthesized list, which passes through other macros whole. */
#define WRAP(NAME, KIND, EXTRA, PARAMS, ARGS, KEY, ...)                                        \
    HC_EXPORT int NAME PARAMS                                                                  \
    {                                                                                          \
        uint64_t t0 = g.on ? now() : 0;                                                        \
        MPI_Status own __attribute__((unused));                                                \
        int rc = PCALL(NAME) ARGS;                                                             \
        if (!g.on) return rc;                                                                  \
        uint64_t t1 = now();                                                                   \
        const uint64_t k[1 + KEYS] = {UNPAREN KEY};                                            \
        sig *s = k[0] ? &sigs[KIND] : NULL;                                                    \
        if (s && repeat(s, k + 1, t0, t1)) return rc;                                          \
        rec R, *r = &R;                                                                        \
        uint64_t *x;                                                                           \
        if (claim_at(r, &x, KIND, t0, t1, EXTRA)) {                                            \
            __VA_ARGS__                                                                        \
            emit(r, x, s, k + 1);                                                              \
        }                                                                                      \
        return rc;                                                                             \
    }
#define NOKEY (0)
#define KEY(...) (1, __VA_ARGS__)
#define UNPAREN(...) __VA_ARGS__
#define HK(ARG) handle_key(&(ARG), sizeof(ARG))
#define STATUS(s) ((s) == MPI_STATUS_IGNORE ? &own : (s))

/* the fields of a point-to-point call: communicator, peer and tag */
#define TO(COMM, PEER, TAG)                                                                    \
    r->comm = comm_id(COMM);                                                                   \
    r->peer = peer_of(PEER);                                                                   \
    r->tag = TAG;
/* a request started: its id */
#define STARTED(REQ)                                                                           \
    if (rc == MPI_SUCCESS) r->req = new_req(REQ);
/* a persistent request made: its id */
#define PERSISTENT(REQ)                                                                        \
    if (rc == MPI_SUCCESS) {                                                                   \
        r->req = ++g.next_req;                                                                 \
        put(&persistent, req_key(REQ), r->req);                                                \
    }

/* -- point-to-point ----------------------------------------------------------------------- */

#define SEND_P(CT) const void *buf, CT count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm
#define RECV_P(CT) void *buf, CT count, MPI_Datatype dt, int source, int tag, MPI_Comm comm
#define SEND(NAME, KIND, CT)                                                                   \
    WRAP(NAME, KIND, 0, (SEND_P(CT)), (buf, count, dt, dest, tag, comm),                       \
         KEY(HK(count), HK(dt), HK(dest), HK(tag), HK(comm)), TO(comm, dest, tag)              \
         r->bytes = tsize(dt, (uint64_t)count);)
#define ISEND(NAME, KIND, CT)                                                                  \
    WRAP(NAME, KIND, 0, (SEND_P(CT), MPI_Request *req), (buf, count, dt, dest, tag, comm, req), \
         NOKEY, TO(comm, dest, tag) r->bytes = tsize(dt, (uint64_t)count); STARTED(req))
#define RECV(NAME, CT)                                                                         \
    WRAP(NAME, K_RECV, 0, (RECV_P(CT), MPI_Status *status),                                     \
         (buf, count, dt, source, tag, comm, STATUS(status)), NOKEY, TO(comm, source, tag)     \
         put_status(r, STATUS(status));)
#define IRECV(NAME, CT)                                                                        \
    WRAP(NAME, K_IRECV, 0, (RECV_P(CT), MPI_Request *req),                                      \
         (buf, count, dt, source, tag, comm, req), NOKEY, TO(comm, source, tag)                \
         r->rbytes = tsize(dt, (uint64_t)count); STARTED(req))
/* Sendrecv: the receive's source (low 32 bits) and tag (high) in one extra word */
#define RECV_HALF(source, rtag, status)                                                        \
    put_status(r, STATUS(status));                                                             \
    x[0] = (uint64_t)(uint32_t)peer_of(source) | (uint64_t)(uint32_t)rtag << 32;
#define SENDRECV(NAME, CT)                                                                     \
    WRAP(NAME, K_SENDRECV, 1,                                                                  \
         (const void *sbuf, CT scount, MPI_Datatype stype, int dest, int stag, void *rbuf,     \
          CT rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,                  \
          MPI_Status *status),                                                                 \
         (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,            \
          STATUS(status)),                                                                     \
         NOKEY, TO(comm, dest, stag) r->bytes = tsize(stype, (uint64_t)scount);                      \
         RECV_HALF(source, rtag, status))
#define SENDRECV_REPLACE(NAME, CT)                                                             \
    WRAP(NAME, K_SENDRECV, 1,                                                                  \
         (void *buf, CT count, MPI_Datatype dt, int dest, int stag, int source, int rtag,      \
          MPI_Comm comm, MPI_Status *status),                                                  \
         (buf, count, dt, dest, stag, source, rtag, comm, STATUS(status)), NOKEY,              \
         TO(comm, dest, stag) r->bytes = tsize(dt, (uint64_t)count);                          \
         RECV_HALF(source, rtag, status))

/* every point-to-point call in the form SUF gives (int counts, or the large-count _c forms) */
#define P2P_ALL(SUF, CT)                                                                       \
    SEND(SUF(Send), K_SEND, CT)                                                                \
    SEND(SUF(Ssend), K_SSEND, CT)                                                              \
    SEND(SUF(Bsend), K_BSEND, CT)                                                              \
    SEND(SUF(Rsend), K_RSEND, CT)                                                              \
    ISEND(SUF(Isend), K_ISEND, CT)                                                             \
    ISEND(SUF(Issend), K_ISSEND, CT)                                                           \
    ISEND(SUF(Ibsend), K_IBSEND, CT)                                                           \
    ISEND(SUF(Irsend), K_IRSEND, CT)                                                           \
    RECV(SUF(Recv), CT)                                                                        \
    IRECV(SUF(Irecv), CT)                                                                      \
    SENDRECV(SUF(Sendrecv), CT)                                                                \
    SENDRECV_REPLACE(SUF(Sendrecv_replace), CT)
#define INT_(X) MPI_##X
P2P_ALL(INT_, int)
#if MPI_VERSION >= 4
#define COUNT_(X) MPI_##X##_c
P2P_ALL(COUNT_, MPI_Count)
#endif

WRAP(MPI_Probe, K_PROBE, 0, (int source, int tag, MPI_Comm comm, MPI_Status *status),
     (source, tag, comm, STATUS(status)), NOKEY, TO(comm, source, tag)
     put_status(r, STATUS(status));)
WRAP(MPI_Iprobe, K_IPROBE, 0,
     (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status),
     (source, tag, comm, flag, STATUS(status)), NOKEY, TO(comm, source, tag)
     if (*flag) put_status(r, STATUS(status));)

/* -- persistent requests ------------------------------------------------------------------ */

/* A persistent request gets an id at its creation (MPI_Send_init ...: the record's req); each
 * MPI_Start gives it a new request id for the operation it starts, which the waits complete. */
#define SEND_INIT(NAME)                                                                        \
    WRAP(NAME, K_SEND_INIT, 0, (SEND_P(int), MPI_Request *req),                                 \
         (buf, count, dt, dest, tag, comm, req), NOKEY, TO(comm, dest, tag)                    \
         r->bytes = tsize(dt, (uint64_t)count); PERSISTENT(req))

SEND_INIT(MPI_Send_init)
SEND_INIT(MPI_Ssend_init)
SEND_INIT(MPI_Bsend_init)
SEND_INIT(MPI_Rsend_init)
WRAP(MPI_Recv_init, K_RECV_INIT, 0, (RECV_P(int), MPI_Request *req),
     (buf, count, dt, source, tag, comm, req), NOKEY, TO(comm, source, tag)
     r->rbytes = tsize(dt, (uint64_t)count); PERSISTENT(req))

/* One word per started request: the persistent id (low 32 bits), the new request id (high). */
static uint64_t started(MPI_Request *req)
{
    uint32_t p = find(&persistent, req_key(req), 0);
    uint32_t a = p ? new_req(req) : 0;
    return (uint64_t)p | (uint64_t)a << 32;
}

HC_EXPORT int MPI_Start(MPI_Request *req)
{
    uint64_t t0 = g.on ? now() : 0;
    int rc = PMPI_Start(req);
    rec r;
    uint64_t *x;
    if (claim(&r, &x, K_START, t0, 1)) {
        x[0] = rc == MPI_SUCCESS ? started(req) : 0;
        emit(&r, x, NULL, NULL);
    }
    return rc;
}

HC_EXPORT int MPI_Startall(int n, MPI_Request rq[])
{
    uint64_t t0 = g.on ? now() : 0;
    int rc = PMPI_Startall(n, rq);
    rec r;
    uint64_t *x;
    if (claim(&r, &x, K_STARTALL, t0, n > 0 ? (uint32_t)n : 0)) {
        for (int i = 0; i < n; i++) x[i] = rc == MPI_SUCCESS ? started(&rq[i]) : 0;
        emit(&r, x, NULL, NULL);
    }
    return rc;
}

HC_EXPORT int MPI_Request_free(MPI_Request *req)
{
    if (g.on && *req != MPI_REQUEST_NULL) {
        find(&persistent, req_key(req), 1);
        find(&reqs, req_key(req), 1);
    }
    return PMPI_Request_free(req);
}

/* -- completion --------------------------------------------------------------------------- */

/* Records the completion of request `id` with its status as three extra words. */
static void put_done(uint64_t *w, uint32_t id, const MPI_Status *st)
{
    w[0] = (uint64_t)id | (uint64_t)(uint32_t)(st ? peer_of(st->MPI_SOURCE) : P_NONE) << 32;
    w[1] = (uint64_t)(uint32_t)(st ? st->MPI_TAG : -1);
    w[2] = st ? status_bytes(st) : 0;
}

#define SMALL 64

/* Sets n statuses as Open MPI completes a send's (source MPI_PROC_NULL, tag MPI_ANY_TAG, no
 * elements) before a wait or test fills them: MPICH leaves a completed send's status as it
 * was, and put_done() reads it, so that without this a send's completion would record
 * whatever the memory held. */
static void blank(MPI_Status *st, int n)
{
    if (n <= 0) return;
    memset(st, 0, (size_t)n * sizeof *st);
    for (int i = 0; i < n; i++) {
        st[i].MPI_SOURCE = MPI_PROC_NULL;
        st[i].MPI_TAG = MPI_ANY_TAG;
    }
}

/* The ids of n requests (before the call completes them); `ids` has room for n. */
static void ids_of(int n, const MPI_Request *rq, uint64_t *keys)
{
    for (int i = 0; i < n; i++) keys[i] = rq[i] == MPI_REQUEST_NULL ? 0 : req_key(&rq[i]);
}

/* Waits and tests on one request. */
static int one(int kind, MPI_Request *req, int *flag, MPI_Status *status)
{
    uint64_t t0 = g.on ? now() : 0;
    uint64_t key = *req == MPI_REQUEST_NULL ? 0 : req_key(req);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    if (g.on) blank(st, 1);
    int done = 1;
    int rc = kind == K_WAIT ? PMPI_Wait(req, st) : PMPI_Test(req, &done, st);
    if (flag) *flag = done;
    if (!g.on) return rc;
    uint32_t id = done && key ? req_take(key) : 0;
    rec r;
    uint64_t *x;
    if (claim(&r, &x, kind, t0, id ? 3 : 0)) {
        if (id) put_done(x, id, st);
        emit(&r, x, NULL, NULL);
    }
    return rc;
}

HC_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    return one(K_WAIT, req, NULL, status);
}

HC_EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    return one(K_TEST, req, flag, status);
}

/* Waitall, Testall, Waitany, Testany, Waitsome, Testsome: `done[i]` says which of the n
 * requests the call completed, with statuses in st (index i, or j for the some-forms). */
static void many(int kind, uint64_t t0, int n, const uint64_t *keys, const int *idx, int nidx,
                 const MPI_Status *st)
{
    uint32_t ids[SMALL];
    uint32_t *id = nidx <= SMALL ? ids : malloc((size_t)nidx * sizeof *id);
    if (!id) return;
    uint32_t k = 0;
    for (int j = 0; j < nidx; j++) {
        int i = idx ? idx[j] : j;
        id[j] = i >= 0 && i < n && keys[i] ? req_take(keys[i]) : 0;
        k += id[j] != 0;
    }
    rec r;
    uint64_t *x;
    if (claim(&r, &x, kind, t0, 3 * k)) {
        uint64_t *w = x;
        for (int j = 0; j < nidx; j++)
            if (id[j]) {
                put_done(w, id[j], st ? &st[j] : NULL);
                w += 3;
            }
        emit(&r, x, NULL, NULL);
    }
    if (id != ids) free(id);
}

/* Waitall/Testall and Waitsome/Testsome: the requests' keys and, where the caller ignores the
 * statuses, statuses of our own; on the stack up to SMALL requests. */
struct scratch {
    uint64_t kb[SMALL];
    MPI_Status sb[SMALL];
    uint64_t *keys;
    MPI_Status *st;
    MPI_Status *given;
};

/* 1 with s->keys and s->st (blank) ready for n requests; 0 (nothing held) when memory ran out */
static int scratch_get(struct scratch *s, int n, MPI_Status *statuses)
{
    s->given = statuses;
    s->keys = n <= SMALL ? s->kb : malloc((size_t)n * sizeof *s->keys);
    s->st = statuses != MPI_STATUSES_IGNORE ? statuses
            : n <= SMALL                    ? s->sb
                                            : malloc((size_t)n * sizeof *s->st);
    if (s->keys && s->st) {
        blank(s->st, n);
        return 1;
    }
    if (s->keys != s->kb) free(s->keys);
    if (s->st != s->sb && s->st != statuses) free(s->st);
    return 0;
}

static void scratch_free(struct scratch *s)
{
    if (s->keys != s->kb) free(s->keys);
    if (s->st != s->sb && s->st != s->given) free(s->st);
}

static int all(int kind, int n, MPI_Request *rq, int *flag, MPI_Status *statuses)
{
    struct scratch s;
    uint64_t t0 = g.on ? now() : 0;
    if (!g.on || !scratch_get(&s, n, statuses))
        return kind == K_WAITALL ? PMPI_Waitall(n, rq, statuses)
                                 : PMPI_Testall(n, rq, flag, statuses);
    ids_of(n, rq, s.keys);
    int done = 1;
    int rc = kind == K_WAITALL ? PMPI_Waitall(n, rq, s.st) : PMPI_Testall(n, rq, &done, s.st);
    if (flag) *flag = done;
    many(kind, t0, n, s.keys, NULL, done ? n : 0, s.st);
    scratch_free(&s);
    return rc;
}

HC_EXPORT int MPI_Waitall(int n, MPI_Request rq[], MPI_Status statuses[])
{
    return all(K_WAITALL, n, rq, NULL, statuses);
}

HC_EXPORT int MPI_Testall(int n, MPI_Request rq[], int *flag, MPI_Status statuses[])
{
    return all(K_TESTALL, n, rq, flag, statuses);
}

static int any(int kind, int n, MPI_Request *rq, int *index, int *flag, MPI_Status *status)
{
    if (!g.on)
        return kind == K_WAITANY ? PMPI_Waitany(n, rq, index, status)
                                 : PMPI_Testany(n, rq, index, flag, status);
    uint64_t t0 = now();
    uint64_t kb[SMALL];
    uint64_t *keys = n <= SMALL ? kb : malloc((size_t)n * sizeof *keys);
    if (!keys)
        return kind == K_WAITANY ? PMPI_Waitany(n, rq, index, status)
                                 : PMPI_Testany(n, rq, index, flag, status);
    ids_of(n, rq, keys);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    blank(st, 1);
    int done = 1;
    int rc = kind == K_WAITANY ? PMPI_Waitany(n, rq, index, st)
                               : PMPI_Testany(n, rq, index, &done, st);
    if (flag) *flag = done;
    int got = done && *index != MPI_UNDEFINED;
    many(kind, t0, n, keys, index, got, st);
    if (keys != kb) free(keys);
    return rc;
}

HC_EXPORT int MPI_Waitany(int n, MPI_Request rq[], int *index, MPI_Status *status)
{
    return any(K_WAITANY, n, rq, index, NULL, status);
}

HC_EXPORT int MPI_Testany(int n, MPI_Request rq[], int *index, int *flag, MPI_Status *status)
{
    return any(K_TESTANY, n, rq, index, flag, status);
}

static int some(int kind, int n, MPI_Request *rq, int *outcount, int *indices,
                MPI_Status *statuses)
{
    struct scratch s;
    uint64_t t0 = g.on ? now() : 0;
    if (!g.on || !scratch_get(&s, n, statuses))
        return kind == K_WAITSOME ? PMPI_Waitsome(n, rq, outcount, indices, statuses)
                                  : PMPI_Testsome(n, rq, outcount, indices, statuses);
    ids_of(n, rq, s.keys);
    int rc = kind == K_WAITSOME ? PMPI_Waitsome(n, rq, outcount, indices, s.st)
                                : PMPI_Testsome(n, rq, outcount, indices, s.st);
    int got = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    many(kind, t0, n, s.keys, indices, got, s.st);
    scratch_free(&s);
    return rc;
}

HC_EXPORT int MPI_Waitsome(int n, MPI_Request rq[], int *outcount, int indices[],
                           MPI_Status statuses[])
{
    return some(K_WAITSOME, n, rq, outcount, indices, statuses);
}

HC_EXPORT int MPI_Testsome(int n, MPI_Request rq[], int *outcount, int indices[],
                           MPI_Status statuses[])
{
    return some(K_TESTSOME, n, rq, outcount, indices, statuses);
}

/* -- collectives -------------------------------------------------------------------------- */

static int csize(MPI_Comm comm)
{
    int n = 0;
    if (PMPI_Comm_size(comm, &n) != MPI_SUCCESS || n < 0) n = 0;
    return n;
}

/* Each collective has a blocking form (F = B) and a non-blocking one (F = NB): ARGS_F is the
 * request parameter, PASS_F passes it on, KIND_F(K) is the code of the form, REQ_F records the
 * request's id. */
#define ARGS_B
#define ARGS_NB , MPI_Request *req
#define PASS_B
#define PASS_NB , req
#define KIND_B(K) K
#define KIND_NB(K) (K + K_NB)
#define REQ_B
#define REQ_NB STARTED(req)

#define KEYED_B 1
#define KEYED_NB 0 /* a request id in every record: no repeat() */

/* COLL(NAME, F, K, EXTRA, PARAMS, ARGS, KEY, fields...): the collective K on comm; KEY is NOKEY
 * or CKEY(F, HK(arg), ...), keyed in the blocking form only */
#define COLL(NAME, F, K, EXTRA, PARAMS, ARGS, KEY, ...)                                        \
    WRAP(NAME, KIND_##F(K), EXTRA, (UNPAREN PARAMS ARGS_##F), (UNPAREN ARGS PASS_##F), KEY,    \
         r->comm = comm_id(comm);                                                              \
         REQ_##F __VA_ARGS__)
#define CKEY(F, ...) (KEYED_##F, __VA_ARGS__)
/* the datatype's size and a count of it */
#define SIZES(DT, COUNT)                                                                       \
    r->tag = elem_size(DT);                                                                    \
    r->bytes = tsize(DT, (uint64_t)(COUNT));

#define DEF_BARRIER(NAME, F) COLL(NAME, F, K_BARRIER, 0, (MPI_Comm comm), (comm), CKEY(F, HK(comm)))
#define DEF_BCAST(NAME, F, CT)                                                                 \
    COLL(NAME, F, K_BCAST, 0, (void *buf, CT count, MPI_Datatype dt, int root, MPI_Comm comm),  \
         (buf, count, dt, root, comm), CKEY(F, HK(count), HK(dt), HK(root), HK(comm)),          \
         r->peer = root; SIZES(dt, count))
#define DEF_REDUCE(NAME, F, CT)                                                                \
    COLL(NAME, F, K_REDUCE, 0,                                                                 \
         (const void *sbuf, void *rbuf, CT count, MPI_Datatype dt, MPI_Op op, int root,        \
          MPI_Comm comm),                                                                       \
         (sbuf, rbuf, count, dt, op, root, comm),                                               \
         CKEY(F, HK(count), HK(dt), HK(op), HK(root), HK(comm)), r->peer = root;                \
         r->op = op_code(op); SIZES(dt, count))
/* Allreduce, Scan, Exscan, Reduce_scatter_block (count: each rank's block) */
#define DEF_ALLRED(NAME, KIND, F, CT)                                                          \
    COLL(NAME, F, KIND, 0,                                                                     \
         (const void *sbuf, void *rbuf, CT count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),   \
         (sbuf, rbuf, count, dt, op, comm), CKEY(F, HK(count), HK(dt), HK(op), HK(comm)),       \
         r->op = op_code(op); SIZES(dt, count))
/* Allgather, Alltoall: bytes = one rank's block (the receive side's when sending in place) */
#define DEF_ALLX(NAME, KIND, F, CT)                                                            \
    COLL(NAME, F, KIND, 0,                                                                     \
         (const void *sbuf, CT scount, MPI_Datatype stype, void *rbuf, CT rcount,              \
          MPI_Datatype rtype, MPI_Comm comm),                                                   \
         (sbuf, scount, stype, rbuf, rcount, rtype, comm), NOKEY,                               \
         r->tag = elem_size(rtype);                                                            \
         r->bytes = sbuf == MPI_IN_PLACE ? tsize(rtype, (uint64_t)rcount)                      \
                                         : tsize(stype, (uint64_t)scount);                     \
         r->rbytes = tsize(rtype, (uint64_t)rcount);)
/* the v-forms: one extra word per rank of comm (Alltoallv: two) */
#define DEF_ALLGATHERV(NAME, F, CT, DT)                                                        \
    COLL(NAME, F, K_ALLGATHERV, g.on ? (uint32_t)csize(comm) : 0,                              \
         (const void *sbuf, CT scount, MPI_Datatype stype, void *rbuf, const CT rcounts[],     \
          const DT displs[], MPI_Datatype rtype, MPI_Comm comm),                                \
         (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm), NOKEY,                      \
         r->tag = elem_size(rtype);                                                            \
         for (uint32_t i = 0; i < r->nextra; i++)                                              \
             x[i] = tsize(rtype, (uint64_t)rcounts[i]);)
#define DEF_ALLTOALLV(NAME, F, CT, DT)                                                         \
    COLL(NAME, F, K_ALLTOALLV, g.on ? 2u * (uint32_t)csize(comm) : 0,                          \
         (const void *sbuf, const CT scounts[], const DT sdispls[], MPI_Datatype stype,        \
          void *rbuf, const CT rcounts[], const DT rdispls[], MPI_Datatype rtype,              \
          MPI_Comm comm),                                                                       \
         (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm), NOKEY,           \
         r->tag = elem_size(rtype);                                                            \
         for (uint32_t i = 0, n = r->nextra / 2; i < n; i++) {                                 \
             x[i] = sbuf == MPI_IN_PLACE ? tsize(rtype, (uint64_t)rcounts[i])                  \
                           : tsize(stype, (uint64_t)scounts[i]);                               \
             x[n + i] = tsize(rtype, (uint64_t)rcounts[i]);                                    \
         })
#define DEF_REDSCAT(NAME, F, CT)                                                               \
    COLL(NAME, F, K_REDUCE_SCATTER, g.on ? (uint32_t)csize(comm) : 0,                          \
         (const void *sbuf, void *rbuf, const CT rcounts[], MPI_Datatype dt, MPI_Op op,        \
          MPI_Comm comm),                                                                       \
         (sbuf, rbuf, rcounts, dt, op, comm), NOKEY, r->op = op_code(op);                       \
         r->tag = elem_size(dt);                                                               \
         for (uint32_t i = 0; i < r->nextra; i++)                                              \
             x[i] = tsize(dt, (uint64_t)rcounts[i]);)

#define DEF_ALL(SUF, F, CT)                                                                    \
    DEF_BCAST(SUF(Bcast, bcast), F, CT)                                                        \
    DEF_REDUCE(SUF(Reduce, reduce), F, CT)                                                     \
    DEF_ALLRED(SUF(Allreduce, allreduce), K_ALLREDUCE, F, CT)                                  \
    DEF_ALLRED(SUF(Scan, scan), K_SCAN, F, CT)                                                 \
    DEF_ALLRED(SUF(Exscan, exscan), K_EXSCAN, F, CT)                                           \
    DEF_ALLRED(SUF(Reduce_scatter_block, reduce_scatter_block), K_REDUCE_SCATTER_BLOCK, F, CT) \
    DEF_ALLX(SUF(Allgather, allgather), K_ALLGATHER, F, CT)                                    \
    DEF_ALLX(SUF(Alltoall, alltoall), K_ALLTOALL, F, CT)                                       \
    DEF_REDSCAT(SUF(Reduce_scatter, reduce_scatter), F, CT)

/* every collective but the barrier in its blocking (names BSUF) and non-blocking (NBSUF) form
 * with counts CT and displacements DT */
#define DEF_BOTH(BSUF, NBSUF, CT, DT)                                                          \
    DEF_ALL(BSUF, B, CT)                                                                       \
    DEF_ALL(NBSUF, NB, CT)                                                                     \
    DEF_ALLGATHERV(BSUF(Allgatherv, allgatherv), B, CT, DT)                                    \
    DEF_ALLGATHERV(NBSUF(Allgatherv, allgatherv), NB, CT, DT)                                  \
    DEF_ALLTOALLV(BSUF(Alltoallv, alltoallv), B, CT, DT)                                       \
    DEF_ALLTOALLV(NBSUF(Alltoallv, alltoallv), NB, CT, DT)

/* SUF(Name, name): the blocking or non-blocking form's name */
#define B_(X, x) MPI_##X
#define NB_(X, x) MPI_I##x
DEF_BARRIER(MPI_Barrier, B)
DEF_BARRIER(MPI_Ibarrier, NB)
DEF_BOTH(B_, NB_, int, int)
#if MPI_VERSION >= 4
#define BC_(X, x) MPI_##X##_c
#define NBC_(X, x) MPI_I##x##_c
DEF_BOTH(BC_, NBC_, MPI_Count, MPI_Aint)
#endif

/* -- communicators ------------------------------------------------------------------------ */

/* Records the new communicator (its world ranks as extra words) made from parent. */
static void created(int kind, uint64_t t0, MPI_Comm parent, MPI_Comm *out, int rc)
{
    if (!g.on) return;
    if (rc != MPI_SUCCESS || *out == MPI_COMM_NULL) {
        rec r;
        uint64_t *x;
        if (claim(&r, &x, kind, t0, 0)) {
            r.comm = comm_id(parent);
            r.req = UINT32_MAX; /* no new communicator on this rank */
            emit(&r, x, NULL, NULL);
        }
        return;
    }
    int n = csize(*out);
    MPI_Group wg, ng;
    int *mine = malloc(2 * (size_t)(n ? n : 1) * sizeof *mine);
    if (!mine) return;
    int *world = mine + n;
    for (int i = 0; i < n; i++) mine[i] = i;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Comm_group(*out, &ng);
    PMPI_Group_translate_ranks(ng, n, mine, wg, world);
    PMPI_Group_free(&ng);
    PMPI_Group_free(&wg);
    uint32_t id = g.next_comm++;
    comm_add(*out, id);
    rec r;
    uint64_t *x;
    if (claim(&r, &x, kind, t0, (uint32_t)n)) {
        r.comm = comm_id(parent);
        r.req = id;
        r.bytes = (uint64_t)n;
        for (int i = 0; i < n; i++) x[i] = (uint64_t)(uint32_t)world[i];
        emit(&r, x, NULL, NULL);
    }
    free(mine);
}

/* The wrapper NAME PARAMS of a communicator creation KIND from comm into *out (ARGS: PARAMS'
 * names). */
#define CREATE(NAME, KIND, PARAMS, ARGS)                                                       \
    HC_EXPORT int NAME PARAMS                                                                  \
    {                                                                                          \
        uint64_t t0 = g.on ? now() : 0;                                                        \
        int rc = PCALL(NAME) ARGS;                                                             \
        created(KIND, t0, comm, out, rc);                                                      \
        return rc;                                                                             \
    }

CREATE(MPI_Comm_dup, K_COMM_DUP, (MPI_Comm comm, MPI_Comm *out), (comm, out))
CREATE(MPI_Comm_split, K_COMM_SPLIT, (MPI_Comm comm, int color, int key, MPI_Comm *out),
       (comm, color, key, out))
CREATE(MPI_Comm_create, K_COMM_CREATE, (MPI_Comm comm, MPI_Group group, MPI_Comm *out),
       (comm, group, out))
CREATE(MPI_Comm_split_type, K_COMM_SPLIT_TYPE,
       (MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out),
       (comm, type, key, info, out))

HC_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    comm_remove(*comm);
    sigs_clear();
    return PMPI_Comm_free(comm);
}
