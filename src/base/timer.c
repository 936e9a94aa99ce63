/* timer.c — wall clock and statistics over ranks (timer.h). */
#include <stdlib.h>
#include <time.h>

#include "timer.h"

double dd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

dd_stat dd_stat_over(MPI_Comm comm, double v)
{
    dd_stat s;
    s.own = v;
    int n;
    MPI_Comm_size(comm, &n);
    MPI_Allreduce(&v, &s.min, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(&v, &s.max, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&v, &s.avg, 1, MPI_DOUBLE, MPI_SUM, comm);
    s.avg /= n;
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dd_median_sort(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
