/* timer.h — wall clock and min/avg/max of a per-rank figure. */
#ifndef DD_TIMER_H
#define DD_TIMER_H

#include <mpi.h>

double dd_now(void);

typedef struct {
    double min, avg, max;
    double own; /* this rank's */
} dd_stat;

/* Collective over comm. */
dd_stat dd_stat_over(MPI_Comm comm, double v);

/* Sorts v[0..n) ascending in place and returns its median (n >= 1). */
double dd_median_sort(double *v, int n);

#endif
