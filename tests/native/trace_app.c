/* The application tests/test_trace.py records with libhc_trace.so (docs/trace.md): point-to-point
 * (blocking, non-blocking, MPI_ANY_SOURCE, Sendrecv), collectives on MPI_COMM_WORLD and on a
 * split communicator (blocking and non-blocking), the v-forms, and compute between the calls.
 * It checks its own results and prints "trace_app ok" from rank 0; any rank count >= 2.
 *
 * Calls each rank makes, for the record counts the test expects (n ranks, rank r):
 *   phase 1: Irecv, Isend, Waitall                      ring exchange, 16 doubles
 *   phase 2: r != 0: Send; r == 0: n - 1 Recv (ANY_SOURCE)   8 ints, tag 2
 *   phase 3: Sendrecv with r ^ 1 (when it exists)       100 bytes, tag 3
 *   phase 4: Allreduce, Bcast, Barrier, Alltoall, Allgather, Reduce, Scan, Reduce_scatter_block,
 *            Alltoallv, Allgatherv                       on MPI_COMM_WORLD
 *   phase 5: Comm_split (color r % 2), Allreduce, Bcast, Iallreduce + Wait, and on the split
 *            communicator of two or more ranks: Isend + Irecv + Waitany + Wait (ring)
 *   phase 6: persistent ring exchange: Send_init, Recv_init, Startall + Waitall, Start, Start,
 *            Waitall (Request_free twice, not recorded)
 *   Comm_free, Finalize */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* About `us` microseconds of arithmetic. */
static void compute(double us)
{
    double t = MPI_Wtime(), x = 0;
    while ((MPI_Wtime() - t) * 1e6 < us) x += 1e-9;
    sink = x;
}

static int fail(int rank, const char *what)
{
    fprintf(stderr, "trace_app: rank %d: %s FAILED\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    double sbuf[1024], rbuf[1024];
    for (int i = 0; i < 1024; i++) sbuf[i] = rank * 1000 + i;
    MPI_Request rq[2];

    /* phase 1: ring exchange */
    compute(200);
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    MPI_Irecv(rbuf, 16, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(sbuf, 16, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    if (rbuf[3] != left * 1000 + 3) return fail(rank, "ring exchange");

    /* phase 2: everyone to rank 0, any source */
    compute(100);
    int ints[8];
    if (rank != 0) {
        for (int i = 0; i < 8; i++) ints[i] = rank;
        MPI_Send(ints, 8, MPI_INT, 0, 2, MPI_COMM_WORLD);
    } else {
        int seen = 0;
        for (int k = 1; k < n; k++) {
            MPI_Status st;
            MPI_Recv(ints, 8, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
            if (ints[0] != st.MPI_SOURCE) return fail(rank, "any-source receive");
            seen += st.MPI_SOURCE;
        }
        if (seen != n * (n - 1) / 2) return fail(rank, "any-source senders");
    }

    /* phase 3: pairs */
    char cs[100], cr[100];
    memset(cs, rank, sizeof cs);
    int partner = rank ^ 1;
    if (partner < n) {
        MPI_Sendrecv(cs, 100, MPI_CHAR, partner, 3, cr, 100, MPI_CHAR, partner, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (cr[7] != (char)partner) return fail(rank, "sendrecv");
    }

    /* phase 4: collectives on the world */
    compute(300);
    double x[8], y[8];
    for (int i = 0; i < 8; i++) x[i] = rank + i;
    MPI_Allreduce(x, y, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (y[1] != n * (n - 1) / 2.0 + n) return fail(rank, "allreduce");
    char big[1000];
    memset(big, rank == 0 ? 7 : 0, sizeof big);
    MPI_Bcast(big, 1000, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (big[999] != 7) return fail(rank, "bcast");
    MPI_Barrier(MPI_COMM_WORLD);
    int *a = malloc(4 * (size_t)n * sizeof *a), *b = malloc(4 * (size_t)n * sizeof *b);
    for (int i = 0; i < 4 * n; i++) a[i] = rank * 100 + i / 4;
    MPI_Alltoall(a, 4, MPI_INT, b, 4, MPI_INT, MPI_COMM_WORLD);
    if (b[4 * (n - 1)] != (n - 1) * 100 + rank) return fail(rank, "alltoall");
    MPI_Allgather(&rank, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    if (b[n - 1] != n - 1) return fail(rank, "allgather");
    double s = 0;
    MPI_Reduce(&x[0], &s, 1, MPI_DOUBLE, MPI_MAX, 1 % n, MPI_COMM_WORLD);
    if (rank == 1 % n && s != n - 1) return fail(rank, "reduce");
    MPI_Scan(&x[0], &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (s != rank * (rank + 1) / 2.0) return fail(rank, "scan");
    for (int i = 0; i < 2 * n; i++) a[i] = 1;
    MPI_Reduce_scatter_block(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (b[1] != n) return fail(rank, "reduce_scatter_block");
    int *sc = malloc(4 * (size_t)n * sizeof *sc), *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
    for (int j = 0; j < n; j++) {
        sc[j] = 1 + (rank + j) % 3; /* rank sends 1 + (rank + j) % 3 ints to j */
        rc[j] = 1 + (j + rank) % 3;
        sd[j] = 3 * j;
        rd[j] = 3 * j;
    }
    for (int i = 0; i < 3 * n; i++) a[i] = rank;
    MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD);
    if (b[3 * (n - 1)] != n - 1) return fail(rank, "alltoallv");
    for (int j = 0; j < n; j++) {
        rc[j] = 1 + j % 2;
        rd[j] = 2 * j;
    }
    for (int i = 0; i < 2; i++) a[i] = rank;
    MPI_Allgatherv(a, 1 + rank % 2, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD);
    if (b[2 * (n - 1)] != n - 1) return fail(rank, "allgatherv");

    /* phase 5: a split communicator */
    compute(200);
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
    int srank, sn;
    MPI_Comm_rank(sub, &srank);
    MPI_Comm_size(sub, &sn);
    MPI_Allreduce(x, y, 8, MPI_DOUBLE, MPI_SUM, sub);
    MPI_Bcast(big, 64, MPI_CHAR, 0, sub);
    MPI_Request r1;
    MPI_Iallreduce(x, y, 4, MPI_DOUBLE, MPI_MIN, sub, &r1);
    compute(50);
    MPI_Wait(&r1, MPI_STATUS_IGNORE);
    if (y[0] != rank % 2) return fail(rank, "iallreduce");
    if (sn >= 2) {
        int to = (srank + 1) % sn, from = (srank + sn - 1) % sn, idx;
        MPI_Isend(sbuf, 32, MPI_DOUBLE, to, 5, sub, &rq[0]);
        MPI_Irecv(rbuf, 32, MPI_DOUBLE, MPI_ANY_SOURCE, 5, sub, &rq[1]);
        MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
        MPI_Wait(&rq[1 - idx], MPI_STATUS_IGNORE);
        if (rbuf[0] != (2 * from + rank % 2) * 1000) return fail(rank, "split ring");
    }

    /* phase 6: persistent requests, twice round the ring */
    MPI_Request pr[2];
    MPI_Send_init(sbuf, 8, MPI_DOUBLE, right, 6, MPI_COMM_WORLD, &pr[0]);
    MPI_Recv_init(rbuf, 8, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &pr[1]);
    MPI_Startall(2, pr);
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    compute(50);
    MPI_Start(&pr[1]);
    MPI_Start(&pr[0]);
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    if (rbuf[5] != left * 1000 + 5) return fail(rank, "persistent ring");
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
    MPI_Comm_free(&sub);
    free(a);
    free(b);
    free(sc);
    compute(100);
    if (rank == 0) printf("trace_app ok\n");
    MPI_Finalize();
    return 0;
}
