/* cli.h — the command line (DESIGN.md §1). */
#ifndef DD_CLI_H
#define DD_CLI_H

#include <stdint.h>

#include "dd.h"

typedef enum { DD_CMD_RUN, DD_CMD_GEN } dd_cmd;

typedef struct {
    dd_cmd cmd;
    /* inputs */
    const char *in;  /* --in FILE */
    int64_t size[3]; /* --size M,N,K (generated in memory) or gen's -m -n -k */
    int have_size;
    dd_dtype dtype;        /* --dtype (generated inputs) */
    uint64_t seed;         /* --seed */
    const char *a, *b, *c; /* dataset names */
    /* outputs */
    const char *out;
    int force;
    const char *json;
    /* decomposition and backends */
    int P, Q;            /* --grid, 0 = default */
    int64_t panel;       /* --panel, 0 = backend default */
    int lookahead;       /* --lookahead, >= 1 */
    const char *backend; /* auto | cuda | cpu */
    const char *comm;    /* auto | nccl | mpi */
    const char *kernel;  /* NULL = engine default */
    const char *io;      /* auto | collective | independent */
    int threads;         /* --threads (CPU BLAS threads), 0 = default */
    int repeat, warmup;
    int check, dry_run, quiet;
    int host_to_host; /* --host-to-host: time one streamed host-to-host pass */
    int help, version;
    /* the command line, for records */
    char cmdline[2048];
} dd_opts;

/* Parses argv.  Returns DD_OK, or DD_EUSAGE with a message naming the
 * offending argument.  No I/O, no MPI: every rank parses the same argv. */
int cli_parse(int argc, char **argv, dd_opts *o, dd_err *err);
void cli_usage(const char *prog, int gen);

#endif
