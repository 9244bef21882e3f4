/* Checks a routine of `hypercuboid alltoall generate` against the library's MPI_Alltoall
 * (called as PMPI_Alltoall, so that a --pmpi routine does not replace the reference): every
 * datatype and count below, out of place and in place, must give the same bytes on every rank.
 * Built by tests/test_alltoall_routine.py with -DROUTINE=name and, for a --pmpi file,
 * -DVIA_MPI_ALLTOALL (the calls then go through MPI_Alltoall). Prints one line on rank 0:
 * "alltoall_routine_test: N checks, F failures". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ROUTINE
#define ROUTINE hc_alltoall
#endif

int ROUTINE(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

static int call(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                MPI_Comm comm)
{
#ifdef VIA_MPI_ALLTOALL
    return MPI_Alltoall(s, sc, st, r, rc, rt, comm);
#else
    return ROUTINE(s, sc, st, r, rc, rt, comm);
#endif
}

static int checks = 0, failures = 0;

/* One case: send `sc` of `st`, receive `rc` of `rt`; buffers of `bytes` bytes per rank. */
static void one(const char *what, int sc, MPI_Datatype st, int rc, MPI_Datatype rt,
                size_t bytes, int in_place)
{
    int rank, size, i, rc1, rc2, bad = 0, any = 0;
    unsigned char *send, *got, *want;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    send = malloc(bytes ? bytes : 1);
    got = malloc(bytes ? bytes : 1);
    want = malloc(bytes ? bytes : 1);
    for (i = 0; i < (int)bytes; i++) send[i] = (unsigned char)(rank * 131 + i * 7 + 3);
    /* Gaps the datatype skips must stay as they were: same filler in both outputs. */
    memset(got, 0xA5, bytes);
    memset(want, 0xA5, bytes);
    if (in_place) {
        memcpy(got, send, bytes);
        memcpy(want, send, bytes);
        rc2 = PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want, rc, rt, MPI_COMM_WORLD);
        rc1 = call(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, rc, rt, MPI_COMM_WORLD);
    } else {
        rc2 = PMPI_Alltoall(send, sc, st, want, rc, rt, MPI_COMM_WORLD);
        rc1 = call(send, sc, st, got, rc, rt, MPI_COMM_WORLD);
    }
    if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS || memcmp(got, want, bytes) != 0) bad = 1;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    checks++;
    if (any) {
        failures++;
        if (rank == 0)
            fprintf(stderr, "FAIL %s%s: rc %d / %d\n", what, in_place ? " (in place)" : "", rc1,
                    rc2);
    }
    free(send);
    free(got);
    free(want);
}

int main(int argc, char **argv)
{
    int size, rank, c, k;
    MPI_Datatype vec, pair, resized;
    static const int counts[] = {0, 1, 7, 1000};
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* A strided vector: 3 blocks of 2 ints, stride 3 (a gap of 1 int in each). */
    MPI_Type_vector(3, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    /* Two doubles as one element. */
    MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
    MPI_Type_commit(&pair);
    /* One int every 16 bytes (extent resized above the size). */
    MPI_Type_create_resized(MPI_INT, 0, 16, &resized);
    MPI_Type_commit(&resized);
    for (k = 0; k < 4; k++) {
        int n = counts[k];
        size_t all = (size_t)size * n;
        for (c = 0; c < 2; c++) {
            one("MPI_INT", n, MPI_INT, n, MPI_INT, all * 4, c);
            one("MPI_DOUBLE", n, MPI_DOUBLE, n, MPI_DOUBLE, all * 8, c);
            one("MPI_CHAR", n, MPI_CHAR, n, MPI_CHAR, all, c);
            one("vector(3,2,3,int)", n, vec, n, vec, all * 36, c);
            one("resized(int,16)", n, resized, n, resized, all * 16, c);
        }
        /* Send and receive types that differ but have the same signature. */
        one("2n MPI_DOUBLE -> n pair", 2 * n, MPI_DOUBLE, n, pair, all * 16, 0);
        one("n pair -> 2n MPI_DOUBLE", n, pair, 2 * n, MPI_DOUBLE, all * 16, 0);
    }
    if (rank == 0) printf("alltoall_routine_test: %d checks, %d failures\n", checks, failures);
    MPI_Type_free(&vec);
    MPI_Type_free(&pair);
    MPI_Type_free(&resized);
    MPI_Finalize();
    return failures != 0;
}
