/* Erroneous MPI_Allreduce calls for tests/test_pmpi.py: each is made by every rank with
 * MPI_ERRORS_RETURN, and rank 0 prints the error class it returned on every rank, one line per
 * call:
 *
 *   allreduce_errors: NAME: class C (the class's string)
 *
 * The test runs this program without the PMPI library and with it (LD_PRELOAD) and requires the
 * same lines: the library returns what the MPI library alone returns. A valid call follows each
 * erroneous one and its result is checked (a line "FAILED" otherwise), and with the library
 * loaded every erroneous call must have been passed to PMPI_Allreduce (hc_pmpi_counts), never
 * served. The first call of the program is erroneous (no state yet), and a valid call of the
 * same count, type and operator precedes the others (the library's fast path of a repeated
 * call).
 *
 *   allreduce_errors [CASE...]
 *
 * runs the cases named (their ids: aliased-first, aliased, null-send, ...; see main), or every
 * case. Open MPI does not check NULL buffers (it crashes in its algorithm), so the test runs
 * those alone and compares how the program ends.
 *
 * Prints "allreduce_errors: N calls checked (S served, P passed)" on rank 0 at the end. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void hc_pmpi_counts(uint64_t *served, uint64_t *passed) __attribute__((weak));

#define COUNT 8

static int rank, size, checked;

static uint64_t passed_now(void)
{
    uint64_t passed = 0;
    if (hc_pmpi_counts) hc_pmpi_counts(NULL, &passed);
    return passed;
}

/* A valid served call: the sum of rank + 1 + i over the ranks, in every element. */
static void valid(const char *after)
{
    int in[COUNT], out[COUNT];
    for (int i = 0; i < COUNT; i++) in[i] = rank + 1 + i, out[i] = -1;
    int rc = MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < COUNT; i++)
        if (rc != MPI_SUCCESS || out[i] != size * (size + 1) / 2 + size * i) {
            printf("allreduce_errors: rank %d: FAILED: the valid call after %s gave rc %d, "
                   "element %d = %d\n",
                   rank, after, rc, i, out[i]);
            break;
        }
    checked++;
}

/* Reports the class `rc` of the call `name` on every rank (rank 0 prints it). */
static void report(const char *name, int rc, uint64_t before)
{
    int class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &class);
    if (hc_pmpi_counts && passed_now() != before + 1)
        printf("allreduce_errors: rank %d: FAILED: %s was not passed to PMPI_Allreduce\n",
               rank, name);
    int *all = malloc(sizeof(int) * (size_t)size);
    MPI_Gather(&class, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            if (all[r] != class)
                printf("allreduce_errors: FAILED: %s: class %d on rank 0, %d on rank %d\n",
                       name, class, all[r], r);
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(class, text, &len);
        printf("allreduce_errors: %s: class %d (%s)\n", name, class, text);
    }
    free(all);
    checked++;
    valid(name);
}

static int nselected;
static char **selected;

/* Whether the case `id` runs: every case without arguments, else those named. */
static int wanted(const char *id)
{
    for (int i = 0; i < nselected; i++)
        if (strcmp(selected[i], id) == 0) return 1;
    return nselected == 0;
}

#define CALL(id, name, ...)                                                                   \
    do {                                                                                      \
        if (wanted(id)) {                                                                     \
            uint64_t before = passed_now();                                                   \
            report(name, MPI_Allreduce(__VA_ARGS__), before);                                 \
        }                                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    nselected = argc - 1;
    selected = argv + 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int x[2 * COUNT], y[COUNT];
    for (int i = 0; i < 2 * COUNT; i++) x[i] = rank + i;
    MPI_Comm W = MPI_COMM_WORLD;

    CALL("aliased-first", "aliased buffers (the first call)", x, x, COUNT, MPI_INT, MPI_SUM, W);
    CALL("aliased", "aliased buffers", x, x, COUNT, MPI_INT, MPI_SUM, W);
    CALL("aliased-double", "aliased buffers, MPI_DOUBLE", x, x, COUNT / 2, MPI_DOUBLE, MPI_MAX,
         W);
    CALL("aliased-one", "aliased buffers, count 1", x, x, 1, MPI_INT, MPI_SUM, W);
    CALL("inplace-recv", "MPI_IN_PLACE as recvbuf", x, MPI_IN_PLACE, COUNT, MPI_INT, MPI_SUM, W);
    CALL("inplace-both", "MPI_IN_PLACE as both buffers", MPI_IN_PLACE, MPI_IN_PLACE, COUNT,
         MPI_INT, MPI_SUM, W);
    CALL("null-send", "NULL sendbuf", NULL, y, COUNT, MPI_INT, MPI_SUM, W);
    CALL("null-recv", "NULL recvbuf", x, NULL, COUNT, MPI_INT, MPI_SUM, W);
    CALL("negative-count", "negative count", x, y, -1, MPI_INT, MPI_SUM, W);
    CALL("null-type", "MPI_DATATYPE_NULL", x, y, COUNT, MPI_DATATYPE_NULL, MPI_SUM, W);
    CALL("null-op", "MPI_OP_NULL", x, y, COUNT, MPI_INT, MPI_OP_NULL, W);
    CALL("null-comm", "MPI_COMM_NULL", x, y, COUNT, MPI_INT, MPI_SUM, MPI_COMM_NULL);
    MPI_Datatype open_type;
    MPI_Type_contiguous(2, MPI_INT, &open_type);
    CALL("uncommitted", "an uncommitted datatype", x, y, COUNT / 2, open_type, MPI_SUM, W);
    MPI_Type_free(&open_type);
    CALL("maxloc", "MPI_MAXLOC on MPI_INT", x, y, COUNT, MPI_INT, MPI_MAXLOC, W);

    /* A communicator served once, then freed: its old handle. */
    if (wanted("freed-comm")) {
        MPI_Comm dup, old;
        for (int i = 0; i < 2 * COUNT; i++) x[i] = rank + i;
        MPI_Comm_dup(W, &dup);
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        int rc = MPI_Allreduce(x, y, COUNT, MPI_INT, MPI_SUM, dup);
        if (rc != MPI_SUCCESS || y[0] != size * (size - 1) / 2)
            printf("allreduce_errors: rank %d: FAILED: the call on the copy gave rc %d, %d\n",
                   rank, rc, y[0]);
        old = dup;
        MPI_Comm_free(&dup);
        CALL("freed-comm", "a freed communicator", x, y, COUNT, MPI_INT, MPI_SUM, old);
    }

    /* Overlapping buffers: erroneous, not checked by the libraries (the class only). */
    CALL("overlap", "overlapping buffers", x, x + 1, COUNT, MPI_INT, MPI_SUM, W);

    uint64_t served = 0, passed = 0;
    if (hc_pmpi_counts) hc_pmpi_counts(&served, &passed);
    if (rank == 0)
        printf("allreduce_errors: %d calls checked (%llu served, %llu passed)\n", checked,
               (unsigned long long)served, (unsigned long long)passed);
    MPI_Finalize();
    return 0;
}
