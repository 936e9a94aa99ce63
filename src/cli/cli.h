/* cli.h — the command line: argv to the driver's options (run.h). */
#ifndef DD_CLI_H
#define DD_CLI_H

#include <stdint.h>

#include "dd.h"
#include "run.h"

/* The bounds of the numbers the command line takes (--help states them). */
#define DIM_MAX (UINT64_C(1) << 62)    /* --size, -m -n -k: the driver checks products */
#define INT_MAX31 UINT64_C(2147483647) /* --panel, --grid's P·Q */
#define REPEAT_MAX UINT64_C(1000000)   /* --repeat, --warmup */
#define THREADS_MAX UINT64_C(4096)
#define DSET_NAME_MAX 1024 /* bytes of a dataset name, its end included */

typedef enum { DD_CMD_RUN, DD_CMD_GEN } dd_cmd;

typedef struct {
    dd_cmd cmd;
    int help, help_env, version; /* --help, --help-env (the knobs), --version */
    int check_given, no_check; /* --check (the default) and --no-check */
    int have_size;             /* --size, or gen's -m -n -k */
    dd_run_opts run;           /* what the driver gets */
    char dsets[3][DSET_NAME_MAX]; /* --a, --b, --c as HDF5 resolves them (run.a/b/c point here) */
    char cmdline[2048];        /* the command line, for records (run.cmdline points here) */
} dd_cli;

/* Parses argv with getopt_long (GNU forms: --opt VALUE, --opt=VALUE, `--`
 * ends the options; abbreviations refused; a value option at most once;
 * every number within the range --help states; gen refuses a run's
 * options).  Returns DD_OK, or DD_EUSAGE with a message naming the
 * offending argument.  No I/O, no MPI: every rank parses the same argv.
 * Uses getopt's global state: call it once, from one thread. */
int cli_parse(int argc, char **argv, dd_cli *o, dd_err *err);
/* --help (cli_usage.c): a run's options, or gen's. */
void cli_usage(const char *prog, int gen);
/* --help-env (cli_usage.c): the environment knobs' table (dd_knobs.h). */
void cli_usage_env(void);

#endif
