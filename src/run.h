/* run.h — the two commands: a distributed multiply, and gen. */
#ifndef DD_RUN_H
#define DD_RUN_H

#include "cli.h"

/* Exit statuses. */
enum { DD_EXIT_OK = 0, DD_EXIT_ERROR = 1, DD_EXIT_USAGE = 2, DD_EXIT_FAILED = 3 };

/* Both are collective over MPI_COMM_WORLD and return an exit status that is
 * the same on every rank. */
int dd_run(const dd_opts *o);
int dd_gen(const dd_opts *o);

#endif
