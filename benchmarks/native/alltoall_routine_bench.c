/* Times a routine of `hypercuboid alltoall generate` against the library's MPI_Alltoall
 * (PMPI_Alltoall) with osu_alltoall's conventions: for each size (bytes a rank sends to each
 * rank, MPI_CHAR), warm-up, then timed iterations, the two interleaved in rounds so that both
 * see the same machine; a rank's latency is its mean per call, and rank 0 prints the average
 * over the ranks (µs): "SIZE ROUTINE_US LIBRARY_US". Built by benchmarks/alltoall_sync.py with
 * -DROUTINE=name. Usage: alltoall_routine_bench ITERATIONS WARMUP SIZE...
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ROUTINE(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

static double timed(int which, char *s, char *r, int n, int iters)
{
    double t0;
    int i;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (i = 0; i < iters; i++) {
        if (which)
            PMPI_Alltoall(s, n, MPI_CHAR, r, n, MPI_CHAR, MPI_COMM_WORLD);
        else
            ROUTINE(s, n, MPI_CHAR, r, n, MPI_CHAR, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    int size, rank, a, iters, warm, rounds = 5, k;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4) {
        if (rank == 0) fprintf(stderr, "usage: %s ITERATIONS WARMUP SIZE...\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    iters = atoi(argv[1]);
    warm = atoi(argv[2]);
    for (a = 3; a < argc; a++) {
        int n = atoi(argv[a]);
        size_t bytes = (size_t)n * size;
        char *s = malloc(bytes), *r = malloc(bytes);
        double t[2] = {0, 0}, sum[2];
        memset(s, rank, bytes);
        timed(0, s, r, n, warm);
        timed(1, s, r, n, warm);
        for (k = 0; k < rounds; k++) {
            int per = iters / rounds > 0 ? iters / rounds : 1;
            t[0] += timed(0, s, r, n, per) / (per * rounds);
            t[1] += timed(1, s, r, n, per) / (per * rounds);
        }
        MPI_Reduce(t, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("%d %.3f %.3f\n", n, sum[0] / size * 1e6, sum[1] / size * 1e6);
        fflush(stdout);
        free(s);
        free(r);
    }
    MPI_Finalize();
    return 0;
}
