/* The application tests/test_trace_repeat.py records with libhc_trace.so: calls that repeat
 * their arguments (which the recorder writes from its copy of their last record, native/
 * hc_trace.c's repeat()) interleaved with calls that change one argument each, and datatypes
 * and communicators freed and made again (whose handles may come back as others). Two ranks;
 * rank 0 prints "trace_repeat ok".
 *
 * Calls, each rank (r: its rank), after MPI_Init:
 *   Allreduce 1 double sum x3, 2 doubles, 1 int, 1 double max, 1 double        MPI_COMM_WORLD
 *   r == 0: Send 4 ints to 1 tag 5 x2, tag 6, 8 ints tag 6; r == 1: Recv x4
 *   Bcast 3 doubles root 0 x2, root 1; Reduce 1 double sum root 0 x2, root 1
 *   Barrier x2
 *   Comm_dup; Barrier on it x2, Allreduce 1 double x2 on it; Barrier on world
 *   Type_contiguous 3 doubles: Bcast 1 of it root 0 x2; Type_free;
 *   Type_contiguous 5 doubles: Bcast 1 of it root 0 x2; Type_free
 *   Comm_free; Comm_dup; Barrier on it x2; Comm_free
 *   Finalize */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    int ix[8] = {0}, iy[8];
    for (int i = 0; i < 3; i++) MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    ok &= y[0] == 2;
    MPI_Allreduce(x, y, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(ix, iy, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Send(ix, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
        MPI_Send(ix, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
        MPI_Send(ix, 4, MPI_INT, 1, 6, MPI_COMM_WORLD);
        MPI_Send(ix, 8, MPI_INT, 1, 6, MPI_COMM_WORLD);
    } else {
        MPI_Recv(iy, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(iy, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(iy, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(iy, 8, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(x, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(x, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(x, 3, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    MPI_Reduce(x, y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(x, y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(x, y, 1, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup);
    MPI_Barrier(dup);
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, dup);
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, dup);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int n = 3; n <= 5; n += 2) {
        MPI_Datatype t;
        MPI_Type_contiguous(n, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        if (rank == 1) x[n - 1] = 0;
        MPI_Bcast(x, 1, t, 0, MPI_COMM_WORLD);
        MPI_Bcast(x, 1, t, 0, MPI_COMM_WORLD);
        ok &= x[n - 1] == n;
        MPI_Type_free(&t);
    }
    MPI_Comm_free(&dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);
    if (!ok) {
        fprintf(stderr, "trace_repeat: rank %d: wrong result\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) printf("trace_repeat ok\n");
    MPI_Finalize();
    return 0;
}
