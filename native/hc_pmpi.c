/* hypercuboid's PMPI library: MPI_Allreduce of an unmodified application (picked up with
 * LD_PRELOAD, or linked before the MPI library) runs a schedule of the Rust core, generated at
 * run time through its C API (hypercuboid.h) and executed by the native runner (hc_runner.h).
 *
 * Environment (read once, at the first MPI_Allreduce):
 *   HYPERCUBOID_ALLREDUCE    the algorithm, as users type it (recursive_doubling, ring,
 *                            rabenseifner, recursive_multiplying:a4,a2, ...), or
 *                            recursive_multiplying:auto: the schedule the core's search ranks
 *                            first for the communicator's size. Unset or empty (and no
 *                            HYPERCUBOID_ALLREDUCE_TABLE): every call goes to PMPI_Allreduce.
 *                            A value the core refuses: one line on stderr
 *                            from rank 0 of MPI_COMM_WORLD, and every call goes to
 *                            PMPI_Allreduce (a bad variable never stops the application).
 *   HYPERCUBOID_ALLREDUCE_TABLE  a decision table (`hypercuboid predict --emit-table FILE`):
 *                            per rank count, size ranges and the algorithm predict found best
 *                            for each. A call of B bytes on a communicator of N ranks runs the
 *                            first line of N whose MAX_BYTES is at least B; a communicator of a
 *                            size the table lacks runs HYPERCUBOID_ALLREDUCE if set, else the
 *                            MPI library's own. Format: the line `# hypercuboid allreduce table
 *                            1`, then `NRANKS MAX_BYTES ALGORITHM` per line (MAX_BYTES `-`: no
 *                            bound), `#` comments and blank lines. A file that cannot be read:
 *                            one line on stderr, and every call goes to PMPI_Allreduce.
 *   HYPERCUBOID_MODEL_FILE   for recursive_multiplying:auto: the model file (JSON with a
 *                            'model' spec) to tune under; default the paper's Table 1 minimum.
 *   HYPERCUBOID_VERBOSE=1    rank 0 of each communicator says once per (size, count, type, op)
 *                            what runs.
 *   HYPERCUBOID_PMPI_CACHE   programs kept per communicator (default 16).
 *
 * Served: intracommunicators; the predefined integer types (by size and signedness), MPI_FLOAT
 * and MPI_DOUBLE; MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN; MPI_IN_PLACE; 0 < count and count x size
 * <= 2^31 - 1 bytes. Everything else goes to PMPI_Allreduce unchanged; so does every erroneous
 * call (erroneous(): aliased or overlapping buffers, MPI_IN_PLACE as the receive buffer, a NULL
 * buffer, a negative count, a null handle, a freed communicator, a call before MPI_Init or
 * after MPI_Finalize), so that the MPI library reports it with its own error class through the
 * communicator's error handler: an erroneous call is never served.
 *
 * Each rank decides alone, from its own arguments, so every rank of a communicator decides the
 * same when all pass the same predefined datatype (or ones of the same size and kind) and
 * operator. The first call served on a communicator makes a private copy of it
 * (PMPI_Comm_split, which copies no attributes) that carries the schedules' messages, so their
 * tags never meet the application's. Programs and runner plans are cached per (communicator,
 * count, type, op), the least recently used dropped beyond HYPERCUBOID_PMPI_CACHE; a new entry
 * is agreed on by all ranks (one PMPI_Allreduce on the private copy) so that a rank that cannot
 * build it sends them all to PMPI together. The cache and the copy are freed with the
 * communicator (an attribute's delete callback), and at MPI_Finalize (one on MPI_COMM_SELF). */
#define _POSIX_C_SOURCE 200112L
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hc_pmpi.h"
#include "hc_runner.h"
#include "hypercuboid.h"

#define HC_EXPORT __attribute__((visibility("default")))

#define SPEC_LEN 512
#define ERR_LEN 1024
#define CACHE_DEFAULT 16
#define SAID_MAX 256

/* One cached program: the key (hc codes) and the runner's plan bound to the last buffers. */
typedef struct entry {
    int count, dtype, op;
    MPI_Datatype type; /* the handles of the last call that used it */
    MPI_Op mop;
    hc_columns *cols;
    hc_plan *plan; /* NULL: not served (the schedule could not be built on some rank) */
    void *inbuf;   /* MPI_IN_PLACE: the input the program reads (it never writes it) */
    const void *bound_send;
    void *bound_recv;
    struct entry *next; /* most recently used first */
} entry;

/* What the library keeps for one of the application's communicators. */
typedef struct comm_state {
    MPI_Comm priv; /* the private copy carrying the schedules' messages; NULL: not served */
    int size, rank;
    int nentries;
    entry *head;
    struct comm_state *prev, *next; /* every state, for MPI_Finalize */
} comm_state;

static struct {
    int enabled, verbose, cache_max, world_rank;
    int started;             /* init has run (MPI was initialized) */
    int finalized;           /* MPI_Finalize has begun: every call is the library's */
    int multiple;            /* MPI_THREAD_MULTIPLE: the counters are atomic */
    int keyval, self_keyval;
    int is_auto;             /* recursive_multiplying:auto: tuned under g.model */
    char algorithm[SPEC_LEN];
    char model[SPEC_LEN];    /* the model auto is tuned under */
    char model_from[SPEC_LEN];
} g;

/* One line of HYPERCUBOID_ALLREDUCE_TABLE. */
typedef struct {
    int nranks;
    uint64_t max_bytes; /* UINT64_MAX: no bound */
    int line;
    int is_auto;
    char algorithm[SPEC_LEN];
} table_row;

#define TABLE_HEADER "# hypercuboid allreduce table 1"
#define TABLE_MAX 4096

static struct {
    table_row *rows;
    int nrows;
    char path[SPEC_LEN];
} table;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* states, said */
static comm_state *states;
static char *said[SAID_MAX];
static int nsaid;
static uint64_t nserved, npassed;

/* The predefined datatypes served, mapped to the core's dtypes at the first call. */
enum { KIND_SIGNED, KIND_UNSIGNED, KIND_FLOAT };
static struct {
    MPI_Datatype type;
    int code;
} types[32];
static int ntypes;

/* -- messages ----------------------------------------------------------------------------- */

/* Whether this process printed `line` before; after SAID_MAX different lines, `line` (of
 * `size` bytes) becomes the line that says so, once, and every later line counts as seen. */
static int seen_before(char *line, size_t size)
{
    pthread_mutex_lock(&lock);
    int seen = nsaid > SAID_MAX;
    for (int i = 0; i < nsaid && i < SAID_MAX && !seen; i++) seen = strcmp(said[i], line) == 0;
    if (!seen && nsaid == SAID_MAX) {
        snprintf(line, size, "%d different messages; no more are shown", SAID_MAX);
        nsaid++;
    } else if (!seen) {
        size_t n = strlen(line) + 1;
        said[nsaid] = malloc(n);
        if (said[nsaid]) memcpy(said[nsaid++], line, n);
    }
    pthread_mutex_unlock(&lock);
    return seen;
}

/* Prints "hypercuboid: ", the line `fmt` formats from `ap` and `tail` on stderr; with `once`,
 * unless seen_before. */
static void say(int once, const char *tail, const char *fmt, va_list ap)
{
    char line[SPEC_LEN + ERR_LEN];
    vsnprintf(line, sizeof line, fmt, ap);
    if (!once || !seen_before(line, sizeof line))
        fprintf(stderr, "hypercuboid: %s%s\n", line, tail);
}

/* Prints a line on stderr unless this process printed the same line before (seen_before). */
static void say_once(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(1, "", fmt, ap);
    va_end(ap);
}

static const char *type_name(MPI_Datatype t, char *buf)
{
    int len = 0;
    buf[0] = 0;
    if (PMPI_Type_get_name(t, buf, &len) != MPI_SUCCESS || !buf[0])
        snprintf(buf, MPI_MAX_OBJECT_NAME, "a derived datatype");
    return buf;
}

static const char *op_name(MPI_Op op)
{
    static const char *const names[] = {"MPI_SUM",  "MPI_PROD", "MPI_MAX",    "MPI_MIN",
                                        "MPI_LAND", "MPI_LOR",  "MPI_LXOR",   "MPI_BAND",
                                        "MPI_BOR",  "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC",
                                        "MPI_REPLACE"};
    MPI_Op ops[] = {MPI_SUM,  MPI_PROD, MPI_MAX,  MPI_MIN,    MPI_LAND,   MPI_LOR,    MPI_LXOR,
                    MPI_BAND, MPI_BOR,  MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op == ops[i]) return names[i];
    return "a user-defined operator";
}

/* -- set-up ------------------------------------------------------------------------------- */

static int delete_state(MPI_Comm comm, int keyval, void *attr, void *extra);
static int at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra);

static void add_type(MPI_Datatype t, int kind)
{
    int size = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &size) != MPI_SUCCESS) return;
    int code = -1;
    if (kind == KIND_FLOAT)
        code = size == 4 ? HC_DTYPE_FLOAT32 : size == 8 ? HC_DTYPE_FLOAT64 : -1;
    else if (kind == KIND_SIGNED)
        code = size == 1   ? HC_DTYPE_INT8
               : size == 2 ? HC_DTYPE_INT16
               : size == 4 ? HC_DTYPE_INT32
               : size == 8 ? HC_DTYPE_INT64
                           : -1;
    else
        code = size == 1   ? HC_DTYPE_UINT8
               : size == 2 ? HC_DTYPE_UINT16
               : size == 4 ? HC_DTYPE_UINT32
               : size == 8 ? HC_DTYPE_UINT64
                           : -1;
    if (code >= 0 && ntypes < (int)(sizeof types / sizeof types[0])) {
        types[ntypes].type = t;
        types[ntypes++].code = code;
    }
}

/* Whether a variable is set to something other than blanks. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v) return NULL;
    for (const char *c = v; *c; c++)
        if (*c != ' ' && *c != '\t') return v;
    return NULL;
}

/* Says why the library stays out of the way (rank 0 of MPI_COMM_WORLD only). */
static void refuse(const char *fmt, ...)
{
    if (g.world_rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    say(0, "; MPI_Allreduce stays the MPI library's own", fmt, ap);
    va_end(ap);
}

static size_t dtype_size(int code);

/* Reads the decision table at `path` into `table`; 0, or -1 with the reason in err. */
static int read_table(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot read it", path);
        return -1;
    }
    char buf[SPEC_LEN + 64];
    int lineno = 0, rc = 0;
    while (fgets(buf, sizeof buf, f)) {
        lineno++;
        size_t len = strlen(buf);
        if (len && buf[len - 1] != '\n' && !feof(f)) {
            snprintf(err, errlen, "%s, line %d: longer than %zu characters", path, lineno,
                     sizeof buf - 2);
            rc = -1;
            break;
        }
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
            buf[--len] = 0;
        if (lineno == 1) {
            if (strcmp(buf, TABLE_HEADER) != 0) {
                snprintf(err, errlen,
                         "%s: not a decision table (its first line is not '%s'; write one with "
                         "hypercuboid predict --emit-table)",
                         path, TABLE_HEADER);
                rc = -1;
                break;
            }
            continue;
        }
        const char *c = buf;
        while (*c == ' ' || *c == '\t') c++;
        if (!*c || *c == '#') continue;
        table_row r = {0};
        char bound[32], alg[SPEC_LEN], extra[2];
        int n = sscanf(c, "%d %31s %511s %1s", &r.nranks, bound, alg, extra);
        char *end = NULL;
        int bad = n != 3 || r.nranks < 1;
        if (!bad && strcmp(bound, "-") == 0) {
            r.max_bytes = UINT64_MAX;
        } else if (!bad) {
            unsigned long long v = strtoull(bound, &end, 10);
            bad = *end || bound[0] == '-';
            r.max_bytes = (uint64_t)v;
        }
        if (bad) {
            snprintf(err, errlen,
                     "%s, line %d: '%s' is not 'NRANKS MAX_BYTES ALGORITHM' (NRANKS >= 1, "
                     "MAX_BYTES a number of bytes or -)",
                     path, lineno, c);
            rc = -1;
            break;
        }
        char why[ERR_LEN / 2];
        if (hc_allreduce_check(alg, &r.is_auto, why, sizeof why) != HC_CAPI_OK) {
            snprintf(err, errlen, "%s, line %d: %s", path, lineno, why);
            rc = -1;
            break;
        }
        snprintf(r.algorithm, sizeof r.algorithm, "%s", alg);
        r.line = lineno;
        if (table.nrows == TABLE_MAX) {
            snprintf(err, errlen, "%s: more than %d lines", path, TABLE_MAX);
            rc = -1;
            break;
        }
        table_row *grown = realloc(table.rows, (size_t)(table.nrows + 1) * sizeof *grown);
        if (!grown) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -1;
            break;
        }
        table.rows = grown;
        table.rows[table.nrows++] = r;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: cannot read it", path);
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && table.nrows == 0) {
        snprintf(err, errlen, "%s: no line 'NRANKS MAX_BYTES ALGORITHM'", path);
        rc = -1;
    }
    if (rc != 0) {
        free(table.rows);
        table.rows = NULL;
        table.nrows = 0;
    }
    return rc;
}

/* The table's line for a call of `bytes` bytes on `nranks` ranks, or NULL. */
static const table_row *table_pick(int nranks, uint64_t bytes)
{
    for (int i = 0; i < table.nrows; i++)
        if (table.rows[i].nranks == nranks && bytes <= table.rows[i].max_bytes)
            return &table.rows[i];
    return NULL;
}

static void init(void)
{
    char err[ERR_LEN];
    __atomic_store_n(&g.started, 1, __ATOMIC_RELEASE);
    PMPI_Comm_rank(MPI_COMM_WORLD, &g.world_rank);
    const char *alg = env("HYPERCUBOID_ALLREDUCE");
    const char *tab = env("HYPERCUBOID_ALLREDUCE_TABLE");
    if (!alg && !tab) return;
    if (alg && strlen(alg) >= sizeof g.algorithm) {
        refuse("HYPERCUBOID_ALLREDUCE is %zu characters long, more than the %zu accepted",
               strlen(alg), sizeof g.algorithm - 1);
        return;
    }
    if (alg && hc_allreduce_check(alg, &g.is_auto, err, sizeof err) != HC_CAPI_OK) {
        refuse("HYPERCUBOID_ALLREDUCE='%s': %s", alg, err);
        return;
    }
    if (alg) snprintf(g.algorithm, sizeof g.algorithm, "%s", alg);
    if (tab) {
        if (strlen(tab) >= sizeof table.path) {
            refuse("HYPERCUBOID_ALLREDUCE_TABLE is %zu characters long, more than the %zu "
                   "accepted",
                   strlen(tab), sizeof table.path - 1);
            return;
        }
        if (read_table(tab, err, sizeof err) != 0) {
            refuse("HYPERCUBOID_ALLREDUCE_TABLE: %s", err);
            return;
        }
        snprintf(table.path, sizeof table.path, "%s", tab);
    }
    int any_auto = g.is_auto;
    for (int i = 0; i < table.nrows; i++) any_auto |= table.rows[i].is_auto;
    const char *verbose = env("HYPERCUBOID_VERBOSE");
    if (verbose && strcmp(verbose, "0") != 0) {
        if (strcmp(verbose, "1") == 0)
            g.verbose = 1;
        else if (g.world_rank == 0)
            fprintf(stderr, "hypercuboid: HYPERCUBOID_VERBOSE='%s' is neither 1 nor 0; quiet\n",
                    verbose);
    }
    g.cache_max = CACHE_DEFAULT;
    const char *cache = env("HYPERCUBOID_PMPI_CACHE");
    if (cache) {
        char *end;
        long n = strtol(cache, &end, 10);
        if (*end || n < 1 || n > 1 << 20) {
            if (g.world_rank == 0)
                fprintf(stderr,
                        "hypercuboid: HYPERCUBOID_PMPI_CACHE='%s' is not a number of programs "
                        "from 1 to %d; keeping %d per communicator\n",
                        cache, 1 << 20, CACHE_DEFAULT);
        } else {
            g.cache_max = (int)n;
        }
    }
    const char *file = env("HYPERCUBOID_MODEL_FILE");
    if (any_auto && file) {
        if (hc_model_file(file, g.model, sizeof g.model, err, sizeof err) != HC_CAPI_OK) {
            refuse("HYPERCUBOID_MODEL_FILE: %s", err);
            return;
        }
        snprintf(g.model_from, sizeof g.model_from, "from HYPERCUBOID_MODEL_FILE=%s", file);
    } else if (any_auto) {
        hc_default_model(g.model, sizeof g.model, err, sizeof err);
        snprintf(g.model_from, sizeof g.model_from,
                 "the default: no HYPERCUBOID_MODEL_FILE");
    }

    add_type(MPI_SIGNED_CHAR, KIND_SIGNED);
    add_type(MPI_UNSIGNED_CHAR, KIND_UNSIGNED);
    add_type(MPI_SHORT, KIND_SIGNED);
    add_type(MPI_UNSIGNED_SHORT, KIND_UNSIGNED);
    add_type(MPI_INT, KIND_SIGNED);
    add_type(MPI_UNSIGNED, KIND_UNSIGNED);
    add_type(MPI_LONG, KIND_SIGNED);
    add_type(MPI_UNSIGNED_LONG, KIND_UNSIGNED);
    add_type(MPI_LONG_LONG, KIND_SIGNED);
    add_type(MPI_UNSIGNED_LONG_LONG, KIND_UNSIGNED);
    add_type(MPI_INT8_T, KIND_SIGNED);
    add_type(MPI_INT16_T, KIND_SIGNED);
    add_type(MPI_INT32_T, KIND_SIGNED);
    add_type(MPI_INT64_T, KIND_SIGNED);
    add_type(MPI_UINT8_T, KIND_UNSIGNED);
    add_type(MPI_UINT16_T, KIND_UNSIGNED);
    add_type(MPI_UINT32_T, KIND_UNSIGNED);
    add_type(MPI_UINT64_T, KIND_UNSIGNED);
    add_type(MPI_AINT, KIND_SIGNED);
    add_type(MPI_OFFSET, KIND_SIGNED);
    add_type(MPI_COUNT, KIND_SIGNED);
    add_type(MPI_FLOAT, KIND_FLOAT);
    add_type(MPI_DOUBLE, KIND_FLOAT);

    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &g.keyval, NULL) !=
            MPI_SUCCESS ||
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &g.self_keyval, NULL) !=
            MPI_SUCCESS ||
        PMPI_Comm_set_attr(MPI_COMM_SELF, g.self_keyval, NULL) != MPI_SUCCESS) {
        refuse("cannot keep attributes on communicators");
        return;
    }
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    g.multiple = level == MPI_THREAD_MULTIPLE;
    g.enabled = 1;
}

/* -- the cache ---------------------------------------------------------------------------- */

static void free_entry(entry *e)
{
    hc_plan_free(e->plan);
    hc_columns_free(e->cols);
    free(e->inbuf);
    free(e);
}

/* Frees what a state holds (its entries and its private communicator); it may be called
 * again. */
static void release(comm_state *st)
{
    while (st->head) {
        entry *e = st->head;
        st->head = e->next;
        free_entry(e);
    }
    st->nentries = 0;
    if (st->priv != MPI_COMM_NULL) PMPI_Comm_free(&st->priv);
}

static int delete_state(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    comm_state *st = attr;
    pthread_mutex_lock(&lock);
    release(st);
    if (st->prev) st->prev->next = st->next;
    else states = st->next;
    if (st->next) st->next->prev = st->prev;
    pthread_mutex_unlock(&lock);
    free(st);
    return MPI_SUCCESS;
}

/* MPI_Finalize frees MPI_COMM_SELF first: free every private communicator while MPI still
 * runs (the states of communicators never freed are released, and freed with them if MPI
 * deletes their attributes later). */
static int at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)attr, (void)extra;
    pthread_mutex_lock(&lock);
    __atomic_store_n(&g.finalized, 1, __ATOMIC_RELEASE);
    for (comm_state *st = states; st; st = st->next) release(st);
    pthread_mutex_unlock(&lock);
    return MPI_SUCCESS;
}

/* The state of `comm`, made at its first served call (collectively: every rank of the
 * communicator is in the same call). NULL: the communicator is not served. */
static comm_state *state_of(MPI_Comm comm)
{
    comm_state *st = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, g.keyval, &st, &flag) != MPI_SUCCESS) return NULL;
    if (flag) return st->priv != MPI_COMM_NULL ? st : NULL;
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return NULL;
    st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->priv = MPI_COMM_NULL;
    if (!inter) {
        PMPI_Comm_size(comm, &st->size);
        PMPI_Comm_rank(comm, &st->rank);
        if (PMPI_Comm_split(comm, 0, st->rank, &st->priv) != MPI_SUCCESS)
            st->priv = MPI_COMM_NULL;
    }
    if (PMPI_Comm_set_attr(comm, g.keyval, st) != MPI_SUCCESS) {
        release(st);
        free(st);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    st->next = states;
    if (states) states->prev = st;
    states = st;
    pthread_mutex_unlock(&lock);
    return st->priv != MPI_COMM_NULL ? st : NULL;
}

/* The schedule for (count, dtype, op) on this rank of `st`, bound to the call's buffers: the
 * core resolves the algorithm for the communicator's size and builds this rank's program, the
 * runner binds it, and every rank agrees before it is used. */
static entry *make_entry(comm_state *st, int count, int dtype, int op, MPI_Datatype type,
                         MPI_Op mop, const void *sendbuf, void *recvbuf)
{
    char spec[SPEC_LEN], err[ERR_LEN] = "", from[SPEC_LEN + 64];
    entry *e = calloc(1, sizeof *e);
    int ok = e != NULL;
    /* the algorithm: the table's line for this size and count, else HYPERCUBOID_ALLREDUCE */
    const char *alg = g.algorithm;
    int is_auto = g.is_auto;
    snprintf(from, sizeof from, "HYPERCUBOID_ALLREDUCE='%s'", g.algorithm);
    const table_row *row = table_pick(st->size, (uint64_t)count * dtype_size(dtype));
    if (row) {
        alg = row->algorithm;
        is_auto = row->is_auto;
        snprintf(from, sizeof from, "HYPERCUBOID_ALLREDUCE_TABLE=%s, line %d", table.path,
                 row->line);
    } else if (!g.algorithm[0]) {
        ok = 0;
        snprintf(err, sizeof err, "HYPERCUBOID_ALLREDUCE_TABLE=%s has no line for %d ranks",
                 table.path, st->size);
    }
    if (ok) {
        e->count = count;
        e->dtype = dtype;
        e->op = op;
        ok = hc_allreduce_resolve(alg, g.model, (uint32_t)st->size, (uint64_t)count,
                                  dtype, spec, sizeof spec, err, sizeof err) == HC_CAPI_OK &&
             hc_allreduce_program(spec, (uint32_t)st->size, (uint32_t)st->rank,
                                  (uint64_t)count, dtype, op, &e->cols, err,
                                  sizeof err) == HC_CAPI_OK;
    }
    if (ok) {
        const hc_columns *c = e->cols;
        hc_program prog = {c->nops,     c->kind,     c->peer,     c->tag,      c->bytes,
                           c->combine,  c->time_ps,  c->buf_slot, c->buf_offset,
                           c->buf_len,  c->src_slot, c->src_offset,
                           c->src_len,  c->ndeps,    c->dep_op,   c->dep_on,   c->dep_kind,
                           c->nscratch, c->scratch};
        ok = hc_plan_create(&prog, dtype, op, sendbuf, recvbuf, (uint64_t)count, st->priv,
                            &e->plan, err, sizeof err) == HC_OK;
        e->bound_send = sendbuf;
        e->bound_recv = recvbuf;
    } else if (!e) {
        snprintf(err, sizeof err, "out of memory");
    }
    /* every rank serves, or none; the first rank that cannot says why */
    int first = ok ? st->size : st->rank;
    PMPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, st->priv);
    char tn[MPI_MAX_OBJECT_NAME];
    if (first < st->size) {
        if (first == st->rank && (row || g.algorithm[0]))
            say_once("%s on %d ranks (rank %d): %s; those calls run the MPI library's own",
                     from, st->size, st->rank, err);
        else if (first == st->rank && g.verbose)
            say_once("MPI_Allreduce of %d x %s (%s) on %d ranks: the MPI library's own (%s)",
                     count, type_name(type, tn), op_name(mop), st->size, err);
        if (e) {
            hc_plan_free(e->plan);
            e->plan = NULL;
        }
    } else if (g.verbose && st->rank == 0) {
        if (is_auto)
            say_once("MPI_Allreduce of %d x %s (%s) on %d ranks: %s (%s under %s, %s)", count,
                     type_name(type, tn), op_name(mop), st->size, spec, alg, g.model,
                     g.model_from);
        else if (row)
            say_once("MPI_Allreduce of %d x %s (%s) on %d ranks: %s (%s)", count,
                     type_name(type, tn), op_name(mop), st->size, spec, from);
        else
            say_once("MPI_Allreduce of %d x %s (%s) on %d ranks: %s", count,
                     type_name(type, tn), op_name(mop), st->size, spec);
    }
    return e;
}

/* The entry of (count, dtype, op), made if missing, first in the list; the least recently
 * used one dropped beyond the bound. Every rank of the communicator sees the same calls, so
 * all make and drop the same entries at the same calls. */
static entry *lookup(comm_state *st, int count, int dtype, int op, MPI_Datatype type,
                     MPI_Op mop, const void *sendbuf, void *recvbuf)
{
    entry **pp = &st->head;
    for (entry *e = st->head; e; pp = &e->next, e = e->next) {
        if (e->count == count && e->dtype == dtype && e->op == op) {
            if (e != st->head) {
                *pp = e->next;
                e->next = st->head;
                st->head = e;
            }
            e->type = type;
            e->mop = mop;
            return e;
        }
    }
    entry *e = make_entry(st, count, dtype, op, type, mop, sendbuf, recvbuf);
    if (!e) return NULL;
    e->type = type;
    e->mop = mop;
    e->next = st->head;
    st->head = e;
    if (++st->nentries > g.cache_max) {
        entry **last = &st->head;
        while ((*last)->next) last = &(*last)->next;
        free_entry(*last);
        *last = NULL;
        st->nentries--;
    }
    return e;
}

/* -- MPI_Allreduce ------------------------------------------------------------------------ */

static int dtype_code(MPI_Datatype t)
{
    for (int i = 0; i < ntypes; i++)
        if (types[i].type == t) return types[i].code;
    return -1;
}

static int op_code(MPI_Op op)
{
    if (op == MPI_SUM) return HC_REDUCE_SUM;
    if (op == MPI_PROD) return HC_REDUCE_PROD;
    if (op == MPI_MAX) return HC_REDUCE_MAX;
    if (op == MPI_MIN) return HC_REDUCE_MIN;
    return -1;
}

static size_t dtype_size(int code)
{
    switch (code) {
    case HC_DTYPE_INT8: case HC_DTYPE_UINT8: return 1;
    case HC_DTYPE_INT16: case HC_DTYPE_UINT16: return 2;
    case HC_DTYPE_INT32: case HC_DTYPE_UINT32: case HC_DTYPE_FLOAT32: return 4;
    default: return 8;
    }
}

static void counted(uint64_t *counter)
{
    if (g.multiple)
        __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    else
        ++*counter;
}

static int pass(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, const char *why)
{
    counted(&npassed);
    if (g.verbose && why) {
        int rank = -1, size = 0;
        if (PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == 0) {
            char tn[MPI_MAX_OBJECT_NAME];
            PMPI_Comm_size(comm, &size);
            say_once("MPI_Allreduce of %d x %s (%s) on %d ranks: the MPI library's own (%s)",
                     count, type_name(type, tn), op_name(op), size, why);
        }
    }
    return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

/* Runs the cached entry `e` of `st` on the call's buffers. */
static int serve(comm_state *st, entry *e, const void *sendbuf, void *recvbuf, MPI_Comm comm)
{
    const void *in = sendbuf;
    if (sendbuf == MPI_IN_PLACE) {
        size_t bytes = (size_t)e->count * dtype_size(e->dtype);
        if (!e->inbuf && !(e->inbuf = malloc(bytes))) {
            say_once("MPI_Allreduce on rank %d: out of memory for a copy of %zu bytes",
                     st->rank, bytes);
            PMPI_Comm_call_errhandler(comm, MPI_ERR_NO_MEM);
            return MPI_ERR_NO_MEM;
        }
        memcpy(e->inbuf, recvbuf, bytes);
        in = e->inbuf;
    }
    if (in != e->bound_send || recvbuf != e->bound_recv) {
        hc_plan_rebind(e->plan, in, recvbuf);
        e->bound_send = in;
        e->bound_recv = recvbuf;
    }
    char err[ERR_LEN];
    int64_t failed;
    int rc = hc_plan_run(e->plan, 0, &failed, err, sizeof err);
    if (rc != HC_OK) {
        fprintf(stderr, "hypercuboid: MPI_Allreduce on rank %d of %d: %s\n", st->rank,
                st->size, err);
        PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
        return MPI_ERR_OTHER;
    }
    counted(&nserved);
    return MPI_SUCCESS;
}

/* Why a call is erroneous in a way the MPI library detects from its arguments (MPICH's and
 * Open MPI's argument checks, MPI 4.1 section 6.9.1), or NULL. Such a call goes to
 * PMPI_Allreduce unchanged, which returns its error class through the communicator's error
 * handler (MPI_ERR_COMM, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP, MPI_ERR_BUFFER or
 * MPI_ERR_ARG, as that library decides). Overlapping buffers, which neither library checks,
 * go there too: what they give is the library's. `size` is the size of one element (0: not
 * known yet, buffers not compared). */
static const char *erroneous(const void *sendbuf, const void *recvbuf, int count,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm, size_t size)
{
    if (comm == MPI_COMM_NULL) return "MPI_COMM_NULL";
    if (count < 0) return "a negative count";
    if (type == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
    if (op == MPI_OP_NULL) return "MPI_OP_NULL";
    if (recvbuf == MPI_IN_PLACE) return "MPI_IN_PLACE as the receive buffer";
    if (count == 0) return NULL;
    if (!recvbuf || !sendbuf) return "a NULL buffer";
    if (sendbuf == recvbuf) return "the same buffer to send and to receive";
    if (size && sendbuf != MPI_IN_PLACE) {
        uintptr_t s = (uintptr_t)sendbuf, r = (uintptr_t)recvbuf, n = (uintptr_t)count * size;
        if (s < r + n && r < s + n) return "overlapping send and receive buffers";
    }
    return NULL;
}

/* An erroneous call: to PMPI_Allreduce, which reports it. */
static int refer(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 MPI_Comm comm, const char *why)
{
    counted(&npassed);
    if (g.verbose && g.world_rank == 0)
        say_once("an erroneous MPI_Allreduce (%s) goes to the MPI library, which reports it",
                 why);
    return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

HC_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm)
{
    /* Before MPI_Init (or after MPI_Finalize) the library reports the call, not us. */
    if (!__atomic_load_n(&g.started, __ATOMIC_ACQUIRE)) {
        int initialized = 0;
        if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized)
            return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    }
    pthread_once(&once, init);
    if (!g.enabled || __atomic_load_n(&g.finalized, __ATOMIC_ACQUIRE))
        return pass(sendbuf, recvbuf, count, type, op, comm, NULL);
    const char *bad = erroneous(sendbuf, recvbuf, count, type, op, comm, 0);
    if (bad) return refer(sendbuf, recvbuf, count, type, op, comm, bad);
    /* A communicator the library refuses (a freed one): its error, from PMPI_Allreduce. */
    comm_state *st = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, g.keyval, &st, &flag) != MPI_SUCCESS)
        return refer(sendbuf, recvbuf, count, type, op, comm, "an invalid communicator");
    /* The last call on this communicator again (a loop): its entry, as it is. */
    if (flag && st->head && st->head->count == count && st->head->type == type &&
        st->head->mop == op) {
        if (!st->head->plan) return pass(sendbuf, recvbuf, count, type, op, comm, NULL);
        bad = erroneous(sendbuf, recvbuf, count, type, op, comm, dtype_size(st->head->dtype));
        if (bad) return refer(sendbuf, recvbuf, count, type, op, comm, bad);
        return serve(st, st->head, sendbuf, recvbuf, comm);
    }
    int dtype = dtype_code(type), code = op_code(op);
    if (dtype < 0)
        return pass(sendbuf, recvbuf, count, type, op, comm,
                    "a datatype other than a predefined integer, MPI_FLOAT or MPI_DOUBLE");
    if (code < 0)
        return pass(sendbuf, recvbuf, count, type, op, comm,
                    "an operator other than MPI_SUM, MPI_PROD, MPI_MAX or MPI_MIN");
    if (count <= 0)
        return pass(sendbuf, recvbuf, count, type, op, comm, "nothing to reduce");
    if ((size_t)count * dtype_size(dtype) > (size_t)INT_MAX)
        return pass(sendbuf, recvbuf, count, type, op, comm,
                    "above the 2^31 - 1 bytes of one message of the runner");
    bad = erroneous(sendbuf, recvbuf, count, type, op, comm, dtype_size(dtype));
    if (bad) return refer(sendbuf, recvbuf, count, type, op, comm, bad);
    st = state_of(comm);
    if (!st) return pass(sendbuf, recvbuf, count, type, op, comm, "an intercommunicator");
    entry *e = lookup(st, count, dtype, code, type, op,
                      sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf);
    if (!e || !e->plan) return pass(sendbuf, recvbuf, count, type, op, comm, NULL);
    return serve(st, e, sendbuf, recvbuf, comm);
}

HC_EXPORT void hc_pmpi_counts(uint64_t *served, uint64_t *passed)
{
    if (served) *served = __atomic_load_n(&nserved, __ATOMIC_RELAXED);
    if (passed) *passed = __atomic_load_n(&npassed, __ATOMIC_RELAXED);
}
