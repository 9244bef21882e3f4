/* The loop of benchmarks/pmpi.py: MPI_Allreduce of one double (8 B, MPI_SUM) on
 * MPI_COMM_WORLD, timed as OSU times a collective: warm-up calls, then rounds of `block`
 * back-to-back calls, each round timed alone and followed by a barrier outside the timing;
 * a round's sample is its time / block. The same program runs with and without the PMPI
 * library (LD_PRELOAD).
 *
 *   allreduce_loop [calls=100000] [block=100] [seconds=20]
 *
 * `calls` timed calls in all, fewer when they would take more than about `seconds` (rank 0
 * decides from the first warm-up calls and tells the others). Rank 0 prints one JSON line:
 * calls, rounds, block, the median, minimum, mean and 90th percentile of the samples in
 * microseconds, and the calls the PMPI library served (-1 without it). Every result is
 * checked. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern void hc_pmpi_counts(uint64_t *served, uint64_t *passed) __attribute__((weak));

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    int block = argc > 2 ? atoi(argv[2]) : 100;
    double seconds = argc > 3 ? atof(argv[3]) : 20;
    if (calls < 1 || block < 1 || seconds <= 0) {
        if (rank == 0) fprintf(stderr, "usage: allreduce_loop [calls] [block] [seconds]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double x = rank + 1, y = 0, want = size * (size + 1) / 2.0;
    int bad = 0;

    /* warm-up: 11 calls, whose median time is a call's, then up to a hundredth of the calls
     * (at most 1000 in all) within a tenth of the time; rank 0 decides for everyone */
    MPI_Barrier(MPI_COMM_WORLD);
    double first[11];
    for (int i = 0; i < 11; i++) {
        double t = MPI_Wtime();
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        first[i] = MPI_Wtime() - t;
        bad |= y != want;
    }
    qsort(first, 11, sizeof first[0], cmp);
    double per = first[5];
    long plan[2] = {calls / 100 < 990 ? calls / 100 : 990, (calls + block - 1) / block};
    if (per * (double)plan[0] > seconds / 10) plan[0] = (long)(seconds / 10 / per);
    if (per * (double)plan[1] * block > seconds) plan[1] = (long)(seconds / (per * block));
    if (plan[1] < 10) plan[1] = 10;
    MPI_Bcast(plan, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    for (long i = 0; i < plan[0]; i++) {
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        bad |= y != want;
    }
    long rounds = plan[1];

    double *samples = malloc((size_t)rounds * sizeof *samples);
    if (!samples) MPI_Abort(MPI_COMM_WORLD, 3);
    for (long r = 0; r < rounds; r++) {
        double t = MPI_Wtime();
        for (int b = 0; b < block; b++)
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        samples[r] = (MPI_Wtime() - t) / block * 1e6;
        bad |= y != want;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int anybad = 0;
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(samples, (size_t)rounds, sizeof *samples, cmp);
        double mean = 0;
        for (long r = 0; r < rounds; r++) mean += samples[r];
        mean /= (double)rounds;
        uint64_t served = 0;
        if (hc_pmpi_counts) hc_pmpi_counts(&served, NULL);
        printf("{\"np\": %d, \"calls\": %ld, \"rounds\": %ld, \"block\": %d, "
               "\"median_us\": %.4f, \"min_us\": %.4f, \"mean_us\": %.4f, "
               "\"p90_us\": %.4f, \"served\": %lld, \"correct\": %s}\n",
               size, rounds * block, rounds, block, samples[rounds / 2], samples[0], mean,
               samples[(long)(rounds * 0.9)], hc_pmpi_counts ? (long long)served : -1LL,
               anybad ? "false" : "true");
    }
    free(samples);
    MPI_Finalize();
    return anybad;
}
