/* cli_impl.h — the option table and parser state shared by cli.c (values,
 * meanings), cli_scalar.c (--alpha, --beta) and cli_scan.c (getopt_long and
 * its errors).  Private to src/cli. */
#ifndef DD_CLI_IMPL_H
#define DD_CLI_IMPL_H

#include "cli.h"

enum { MODE_RUN = 1, MODE_GEN = 2, MODE_BOTH = 3 };
enum { K_FLAG, K_NAME, K_CHOICE, K_NUMBER, K_REAL, K_SIZE, K_GRID };

enum {
    O_IN,
    O_OUT,
    O_SIZE,
    O_M,
    O_N,
    O_K,
    O_DTYPE,
    O_SEED,
    O_A,
    O_B,
    O_C,
    O_TRANSA,
    O_TRANSB,
    O_ALPHA,
    O_BETA,
    O_ORDER,
    O_WITHC,
    O_FORCE,
    O_SYNC,
    O_IO,
    O_JSON,
    O_GRID,
    O_PANEL,
    O_LOOKAHEAD,
    O_BACKEND,
    O_COMM,
    O_KERNEL,
    O_ACCURACY,
    O_THREADS,
    O_PROGRESS,
    O_REPEAT,
    O_WARMUP,
    O_CHECK,
    O_NOCHECK,
    O_H2H,
    O_DRY,
    O_QUIET,
    O_HELP,
    O_HELP_ENV,
    O_VERSION,
    O_COUNT
};

typedef struct {
    const char *spelling; /* "--in", or "-m" for a short-only option */
    char letter;          /* short alias (-o -q -h), 0 if none */
    unsigned char kind;   /* how the value is parsed (K_*) */
    unsigned char modes;  /* which commands take it (MODE_*) */
    uint64_t lo, hi;      /* K_NUMBER's range */
    const char *what;     /* K_NAME: what the value names, for the empty-value message */
} opt_spec;

extern const opt_spec cli_specs[O_COUNT];

typedef struct {
    dd_cli *o;
    dd_err *err;
    int mode; /* MODE_RUN or MODE_GEN */
    unsigned char seen[O_COUNT];
} cli_state;
/* cli.c: one recognised option (its command, repeats, then its value). */
int cli_take_option(cli_state *st, int id, const char *v);
/* cli_scalar.c: --alpha or --beta (id), a real or complex number. */
int cli_take_real(cli_state *st, int id, const char *v);
/* cli_scan.c: argv through getopt_long into cli_take_option. */
int cli_scan(cli_state *st, int argc, char **argv);

#endif
