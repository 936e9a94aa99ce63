/* bench_opts.h — the one option parser of the benches under bench/: a table of
 * options, each a name, a kind and where its value goes, and one call that
 * reads argv against it.  Strict: every number is read whole and within its
 * range ("--reps x", "--reps -1", "--reps 1e99" are refused), an option
 * that needs a value and has none, an unknown option and a stray argument
 * are refused; each refusal is one message naming the option and what it
 * takes.  "--name value" and "--name=value"; a repeated option's last value
 * counts; --help (or -h) prints the bench's usage.  C11 and C++. */
#ifndef BENCH_OPTS_H
#define BENCH_OPTS_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    BENCH_FLAG,   /* no value: *(int *)dest = 1, or call(NULL, dest) where call is set */
    BENCH_INT,    /* int in [lo, hi] */
    BENCH_I64,    /* int64_t in [lo, hi] */
    BENCH_U64,    /* uint64_t, decimal or 0x hexadecimal (seeds) */
    BENCH_DOUBLE, /* a finite double in [dlo, dhi] */
    BENCH_STRING, /* const char *, not empty */
    BENCH_CHOICE, /* int: the index of the value in choices ("f64|f32") */
    BENCH_CALL    /* call(value, dest): NULL when taken, else what the option takes */
} bench_kind;

typedef struct {
    const char *name; /* "--reps"; NULL ends the table */
    bench_kind kind;
    void *dest;
    long long lo, hi;    /* BENCH_INT, BENCH_I64 */
    double dlo, dhi;     /* BENCH_DOUBLE */
    const char *choices; /* BENCH_CHOICE: the words, '|' between */
    const char *(*call)(const char *value, void *dest); /* BENCH_CALL, or a BENCH_FLAG's action */
} bench_opt;

enum { BENCH_GO = -1 }; /* bench_parse: the options are read, run */

/* Reads argv[1..argc-1] against opts (ended by a NULL name).  BENCH_GO when
 * every argument was taken; 0 after --help (usage printed on stdout); 2 on
 * a refusal, after one line "TOOL: ..." on err.  err NULL: nothing is
 * printed (an MPI bench's other ranks), the verdict is the same. */
int bench_parse(const char *tool, const char *usage, const bench_opt *opts, int argc, char **argv,
                FILE *err);

/* A whole decimal integer in [lo, hi] (leading '-' or '+' allowed, nothing
 * after the digits): 0 and *v, else -1. */
int bench_int(const char *s, long long lo, long long hi, long long *v);

/* A list of shapes, "N" (N×N×N) or "MxNxK", comma separated, every
 * dimension 1..2147483647: at most max of them into out; 0 and *n, else -1. */
int bench_shapes(const char *s, int64_t (*out)[3], int max, int *n);

#ifdef __cplusplus
}
#endif

#endif
