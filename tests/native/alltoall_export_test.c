/* Runs exported alltoall routines (hypercuboid schedule export --format c alltoall ...) and
 * compares each bitwise with the library's MPI_Alltoall, out of place and in place.
 * routines.h (written by tests/test_alltoall_export_c.py) defines
 *     #define ROUTINES(X) X(name, nranks, ctype, mpi_type, count) ...
 * A routine runs when the job has its number of ranks. Rank 0 prints one summary line;
 * the exit status is 1 when any check failed on any rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routines.h"

#define DECLARE(name, n, T, MT, count) int name(const void *sendbuf, void *recvbuf, MPI_Comm comm);
ROUTINES(DECLARE)

int main(int argc, char **argv)
{
    int rank, size, routines = 0, checks = 0, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#define RUN(name, n, T, MT, count)                                                          \
    routines++;                                                                             \
    if (size == (n)) {                                                                      \
        size_t len = (size_t)(n) * (count);                                                 \
        T *x = malloc(sizeof(T) * len + 1), *y = malloc(sizeof(T) * len + 1);               \
        T *ref = malloc(sizeof(T) * len + 1);                                               \
        for (size_t i = 0; i < len; i++) x[i] = (T)(1000 * rank + i) + (T)1 / (T)4;         \
        memset(y, 0xA5, sizeof(T) * len);                                                   \
        MPI_Alltoall(x, (count), MT, ref, (count), MT, MPI_COMM_WORLD);                     \
        int rc = name(x, y, MPI_COMM_WORLD);                                                \
        checks++;                                                                           \
        if (rc != MPI_SUCCESS || memcmp(y, ref, sizeof(T) * len) != 0) {                    \
            failures++;                                                                     \
            fprintf(stderr, "rank %d: %s differs from MPI_Alltoall (rc %d)\n", rank, #name, \
                    rc);                                                                    \
        }                                                                                   \
        memcpy(y, x, sizeof(T) * len);                                                      \
        rc = name(MPI_IN_PLACE, y, MPI_COMM_WORLD);                                         \
        checks++;                                                                           \
        if (rc != MPI_SUCCESS || memcmp(y, ref, sizeof(T) * len) != 0) {                    \
            failures++;                                                                     \
            fprintf(stderr, "rank %d: %s in place differs from MPI_Alltoall (rc %d)\n",     \
                    rank, #name, rc);                                                       \
        }                                                                                   \
        free(x);                                                                            \
        free(y);                                                                            \
        free(ref);                                                                          \
    }
    ROUTINES(RUN)
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("alltoall_export_test: %d routines, %d checks, %d failures\n", routines, checks,
               failures);
    MPI_Finalize();
    return failures != 0;
}
