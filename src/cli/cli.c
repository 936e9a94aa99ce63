/* cli.c — parsing the command line into dd_cli (cli.h) with getopt_long.
 *
 * GNU conventions: `--opt VALUE` and `--opt=VALUE`; short options may be
 * clustered and take attached values (`-qm64`); `--` ends the options.
 * Decisions, also stated in --help:
 *  - long options are spelled in full: an abbreviation that getopt_long
 *    would expand (`--thr`) is refused, so that a new option can never
 *    change what an old command line means;
 *  - an option that takes a value may be given once ("--in given twice");
 *    the flags (--check, --no-check, --force, --quiet, --dry-run, --host-to-host,
 *    --help, --version) may repeat, since repeating them changes nothing;
 *  - every number is plain decimal digits within a stated range;
 *  - gen refuses the options that mean nothing to it, --json included
 *    (gen writes no run record).
 * One table (specs) holds every option: its spelling, how its value is
 * parsed, its range and which commands take it. */
#define _GNU_SOURCE /* getopt_long; the build's _XOPEN_SOURCE alone hides it */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DIM_MAX (UINT64_C(1) << 62)    /* --size, -m -n -k: the driver checks products */
#define INT_MAX31 UINT64_C(2147483647) /* --panel, --grid's P·Q */
#define REPEAT_MAX UINT64_C(1000000)   /* --repeat, --warmup */
#define THREADS_MAX UINT64_C(4096)

enum { MODE_RUN = 1, MODE_GEN = 2, MODE_BOTH = 3 };
enum { K_FLAG, K_NAME, K_CHOICE, K_NUMBER, K_SIZE, K_GRID };

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
    O_FORCE,
    O_IO,
    O_JSON,
    O_GRID,
    O_PANEL,
    O_LOOKAHEAD,
    O_BACKEND,
    O_COMM,
    O_KERNEL,
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

static const opt_spec specs[O_COUNT] = {
    [O_IN] = {"--in", 0, K_NAME, MODE_RUN, 0, 0, "an HDF5 file"},
    [O_OUT] = {"--out", 'o', K_NAME, MODE_BOTH, 0, 0, "an HDF5 file"},
    [O_SIZE] = {"--size", 0, K_SIZE, MODE_BOTH, 0, 0, NULL},
    [O_M] = {"-m", 'm', K_NUMBER, MODE_GEN, 1, DIM_MAX, NULL},
    [O_N] = {"-n", 'n', K_NUMBER, MODE_GEN, 1, DIM_MAX, NULL},
    [O_K] = {"-k", 'k', K_NUMBER, MODE_GEN, 1, DIM_MAX, NULL},
    [O_DTYPE] = {"--dtype", 0, K_CHOICE, MODE_BOTH, 0, 0, NULL},
    [O_SEED] = {"--seed", 0, K_NUMBER, MODE_BOTH, 0, UINT64_MAX, NULL},
    [O_A] = {"--a", 0, K_NAME, MODE_BOTH, 0, 0, "a dataset"},
    [O_B] = {"--b", 0, K_NAME, MODE_BOTH, 0, 0, "a dataset"},
    [O_C] = {"--c", 0, K_NAME, MODE_RUN, 0, 0, "a dataset"},
    [O_FORCE] = {"--force", 0, K_FLAG, MODE_BOTH, 0, 0, NULL},
    [O_IO] = {"--io", 0, K_CHOICE, MODE_BOTH, 0, 0, NULL},
    [O_JSON] = {"--json", 0, K_NAME, MODE_RUN, 0, 0, "a file"},
    [O_GRID] = {"--grid", 0, K_GRID, MODE_RUN, 0, 0, NULL},
    [O_PANEL] = {"--panel", 0, K_NUMBER, MODE_RUN, 1, INT_MAX31, NULL},
    [O_LOOKAHEAD] = {"--lookahead", 0, K_NUMBER, MODE_RUN, 1, DD_LOOKAHEAD_MAX, NULL},
    [O_BACKEND] = {"--backend", 0, K_CHOICE, MODE_RUN, 0, 0, NULL},
    [O_COMM] = {"--comm", 0, K_CHOICE, MODE_RUN, 0, 0, NULL},
    [O_KERNEL] = {"--kernel", 0, K_NAME, MODE_RUN, 0, 0, "a kernel"},
    [O_THREADS] = {"--threads", 0, K_NUMBER, MODE_RUN, 1, THREADS_MAX, NULL},
    [O_PROGRESS] = {"--progress", 0, K_NUMBER, MODE_RUN, 0, 86400, NULL},
    [O_REPEAT] = {"--repeat", 0, K_NUMBER, MODE_RUN, 1, REPEAT_MAX, NULL},
    [O_WARMUP] = {"--warmup", 0, K_NUMBER, MODE_RUN, 0, REPEAT_MAX, NULL},
    [O_CHECK] = {"--check", 0, K_FLAG, MODE_RUN, 0, 0, NULL},
    [O_NOCHECK] = {"--no-check", 0, K_FLAG, MODE_RUN, 0, 0, NULL},
    [O_H2H] = {"--host-to-host", 0, K_FLAG, MODE_RUN, 0, 0, NULL},
    [O_DRY] = {"--dry-run", 0, K_FLAG, MODE_RUN, 0, 0, NULL},
    [O_QUIET] = {"--quiet", 'q', K_FLAG, MODE_BOTH, 0, 0, NULL},
    [O_HELP] = {"--help", 'h', K_FLAG, MODE_BOTH, 0, 0, NULL},
    [O_VERSION] = {"--version", 0, K_FLAG, MODE_BOTH, 0, 0, NULL},
};

/* K_CHOICE: the words each takes, and how a refusal says so. */
static const char *const dtypes[] = {"f64", "double", "f32", "float", NULL};
static const char *const backends[] = {"auto", "cuda", "cpu", NULL};
static const char *const comms[] = {"auto", "nccl", "mpi", NULL};
static const char *const ios[] = {"auto", "collective", "independent", NULL};

typedef struct {
    dd_cli *o;
    dd_err *err;
    int mode; /* MODE_RUN or MODE_GEN */
    unsigned char seen[O_COUNT];
} cli_state;

/* ---- values ------------------------------------------------------------------ */

/* Plain decimal digits (no sign, space or prefix) from lo to hi. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* "M,N,K" or "N" (square); ',' or 'x' between the fields */
static int parse_size(const char *s, int64_t sz[3])
{
    uint64_t v[3];
    int n = 0;
    for (const char *p = s;; n++) {
        char field[32];
        size_t len = strcspn(p, ",x");
        if (n == 3 || len == 0 || len >= sizeof field)
            return -1;
        memcpy(field, p, len);
        field[len] = '\0';
        if (parse_u64(field, 1, DIM_MAX, &v[n]))
            return -1;
        if (!p[len]) {
            n++;
            break;
        }
        p += len + 1;
    }
    if (n == 2)
        return -1;
    for (int i = 0; i < 3; i++)
        sz[i] = (int64_t)v[n == 1 ? 0 : i];
    return 0;
}

static int take_grid(cli_state *st, const char *v)
{
    const char *x = strpbrk(v, "xX");
    char p[32];
    uint64_t P, Q;
    size_t lp = x ? (size_t)(x - v) : 0;
    if (!x || lp >= sizeof p)
        goto bad;
    memcpy(p, v, lp);
    p[lp] = '\0';
    if (parse_u64(p, 1, INT_MAX31, &P) || parse_u64(x + 1, 1, INT_MAX31, &Q))
        goto bad;
    if (P * Q > INT_MAX31) /* both below 2^31: the product fits in 64 bits */
        return dd_fail(st->err, DD_EUSAGE,
                       "bad value '%s' for --grid: P*Q = %llu ranks, more than %llu", v,
                       (unsigned long long)(P * Q), (unsigned long long)INT_MAX31);
    st->o->run.P = (int)P;
    st->o->run.Q = (int)Q;
    return DD_OK;
bad:
    return dd_fail(st->err, DD_EUSAGE,
                   "bad value '%s' for --grid: expected PxQ, e.g. 2x4, with P, Q >= 1 and "
                   "P*Q <= %llu",
                   v, (unsigned long long)INT_MAX31);
}

static int index_of(const char *v, const char *const *allowed)
{
    for (int i = 0; allowed[i]; i++)
        if (!strcmp(v, allowed[i]))
            return i;
    return -1;
}

static int take_choice(cli_state *st, int id, const char *v)
{
    dd_run_opts *r = &st->o->run;
    const char *const *allowed = id == O_DTYPE     ? dtypes
                                 : id == O_BACKEND ? backends
                                 : id == O_COMM    ? comms
                                                   : ios;
    const char *expect = id == O_DTYPE     ? "f64 or f32"
                         : id == O_BACKEND ? "auto, cuda or cpu"
                         : id == O_COMM    ? "auto, nccl or mpi"
                                           : "auto, collective or independent";
    int i = index_of(v, allowed);
    if (i < 0)
        return dd_fail(st->err, DD_EUSAGE, "bad value '%s' for %s: expected %s", v,
                       specs[id].spelling, expect);
    if (id == O_DTYPE)
        r->dtype = i < 2 ? DD_F64 : DD_F32;
    else
        *(id == O_BACKEND ? &r->backend : id == O_COMM ? &r->comm : &r->io) = v;
    return DD_OK;
}

static int take_number(cli_state *st, int id, const char *v)
{
    const opt_spec *s = &specs[id];
    dd_run_opts *r = &st->o->run;
    uint64_t x;
    if (parse_u64(v, s->lo, s->hi, &x))
        return dd_fail(st->err, DD_EUSAGE,
                       "bad value '%s' for %s: expected an integer from %llu to %llu", v,
                       s->spelling, (unsigned long long)s->lo, (unsigned long long)s->hi);
    switch (id) {
    case O_M:
    case O_N:
    case O_K:
        r->size[id - O_M] = (int64_t)x;
        break;
    case O_SEED:
        r->seed = x;
        break;
    case O_PANEL:
        r->panel = (int64_t)x;
        break;
    case O_LOOKAHEAD:
        r->lookahead = (int)x;
        break;
    case O_THREADS:
        r->threads = (int)x;
        break;
    case O_REPEAT:
        r->repeat = (int)x;
        break;
    case O_PROGRESS:
        r->progress = (int)x;
        break;
    default:
        r->warmup = (int)x;
        break;
    }
    return DD_OK;
}

static int take_name(cli_state *st, int id, const char *v)
{
    dd_run_opts *r = &st->o->run;
    if (!*v)
        return dd_fail(st->err, DD_EUSAGE, "empty value for %s: expected the name of %s",
                       specs[id].spelling, specs[id].what);
    const char **slot = id == O_IN     ? &r->in
                        : id == O_OUT  ? &r->out
                        : id == O_A    ? &r->a
                        : id == O_B    ? &r->b
                        : id == O_C    ? &r->c
                        : id == O_JSON ? &r->json
                                       : &r->kernel;
    *slot = v;
    return DD_OK;
}

static void take_flag(cli_state *st, int id)
{
    dd_run_opts *r = &st->o->run;
    int *flag = id == O_HELP      ? &st->o->help
                : id == O_VERSION ? &st->o->version
                : id == O_FORCE   ? &r->force
                : id == O_CHECK   ? &st->o->check_given
                : id == O_NOCHECK ? &st->o->no_check
                : id == O_H2H     ? &r->host_to_host
                : id == O_DRY     ? &r->dry_run
                                  : &r->quiet;
    *flag = 1;
}

/* One recognised option: is it this command's, is it new, then its value. */
static int take_option(cli_state *st, int id, const char *v)
{
    const opt_spec *s = &specs[id];
    if (!(s->modes & st->mode) && st->mode == MODE_GEN)
        return dd_fail(st->err, DD_EUSAGE, "gen does not take %s", s->spelling);
    if (!(s->modes & st->mode))
        return dd_fail(st->err, DD_EUSAGE, "%s is a gen option (see --help)", s->spelling);
    if (st->seen[id]++ && s->kind != K_FLAG)
        return dd_fail(st->err, DD_EUSAGE, "%s given twice", s->spelling);
    switch (s->kind) {
    case K_FLAG:
        take_flag(st, id);
        return DD_OK;
    case K_NAME:
        return take_name(st, id, v);
    case K_CHOICE:
        return take_choice(st, id, v);
    case K_NUMBER:
        return take_number(st, id, v);
    case K_GRID:
        return take_grid(st, v);
    default:
        if (parse_size(v, st->o->run.size))
            return dd_fail(st->err, DD_EUSAGE,
                           "bad value '%s' for --size: expected M,N,K or N, integers from 1 to "
                           "%llu (2^62)",
                           v, (unsigned long long)DIM_MAX);
        st->o->have_size = 1;
        return DD_OK;
    }
}

/* ---- getopt_long and its errors ------------------------------------------------ */

static int spec_of_letter(int c)
{
    for (int id = 0; id < O_COUNT; id++)
        if (specs[id].letter == c)
            return id;
    return -1;
}

/* getopt_long's table: every long option, in both modes (gen's refusal names the option). */
static void build_longopts(struct option *lo)
{
    int n = 0;
    for (int id = 0; id < O_COUNT; id++) {
        if (specs[id].spelling[1] != '-')
            continue;
        lo[n++] = (struct option){specs[id].spelling + 2,
                                  specs[id].kind == K_FLAG ? no_argument : required_argument, NULL,
                                  256 + id};
    }
    lo[n] = (struct option){NULL, 0, NULL, 0};
}

/* typed: the argv element getopt_long was reading ("--thr=4"); refuses abbreviations. */
static int check_spelled_out(cli_state *st, int id, const char *typed)
{
    const char *name = specs[id].spelling + 2;
    size_t len = strcspn(typed + 2, "=");
    if (len == strlen(name) && !strncmp(typed + 2, name, len))
        return DD_OK;
    return dd_fail(st->err, DD_EUSAGE,
                   "unknown argument '%.*s': options are not abbreviated (did you mean %s?)",
                   (int)len + 2, typed, specs[id].spelling);
}

/* getopt_long returned '?' or ':'; optopt says which option, 0 for an unknown long one. */
static int getopt_error(cli_state *st, int c, const char *typed)
{
    int id = optopt >= 256 ? optopt - 256 : spec_of_letter(optopt);
    if (optopt >= 256 && check_spelled_out(st, id, typed))
        return DD_EUSAGE;
    if (c == ':')
        return dd_fail(st->err, DD_EUSAGE, "option %s needs a value", specs[id].spelling);
    if (optopt >= 256)
        return dd_fail(st->err, DD_EUSAGE, "option %s takes no value (got '%s')",
                       specs[id].spelling, typed);
    if (optopt && strchr("mnko", optopt)) /* a run's getopt knows no -m -n -k -o */
        return dd_fail(st->err, DD_EUSAGE, "-%c is a gen option: a run takes %s", optopt,
                       optopt == 'o' ? "--out FILE" : "--size M,N,K");
    if (optopt)
        return dd_fail(st->err, DD_EUSAGE, "unknown argument '-%c' (see --help)", optopt);
    return dd_fail(st->err, DD_EUSAGE, "unknown argument '%s' (see --help)", typed);
}

/* A word that is no option's value (getopt_long's "-" mode hands these back in order). */
static int stray_word(cli_state *st, const char *w)
{
    if (!strcmp(w, "gen"))
        return dd_fail(st->err, DD_EUSAGE,
                       "'gen' must be the first argument (dgemm-dist gen --out FILE ...)");
    return dd_fail(st->err, DD_EUSAGE, "unknown argument '%s' (see --help)", w);
}

static int scan(cli_state *st, int argc, char **argv)
{
    struct option longopts[O_COUNT + 1];
    build_longopts(longopts);
    /* '-': words come back in order as 1; ':': a missing value returns ':' */
    const char *shorts = st->mode == MODE_GEN ? "-:hqo:m:n:k:" : "-:hq";
    opterr = 0;
    optind = 0; /* a full restart of getopt's state */
    for (;;) {
        int at = optind > 0 ? optind : 1; /* the element being read */
        int c = getopt_long(argc, argv, shorts, longopts, NULL);
        int rc;
        if (c == -1)
            break;
        if (c == 1)
            rc = stray_word(st, optarg);
        else if (c == '?' || c == ':')
            rc = getopt_error(st, c, argv[at]);
        else if (c >= 256)
            rc = check_spelled_out(st, c - 256, argv[at]) ? DD_EUSAGE
                                                          : take_option(st, c - 256, optarg);
        else
            rc = take_option(st, spec_of_letter(c), optarg);
        if (rc)
            return rc;
    }
    if (optind < argc) /* what follows `--` */
        return dd_fail(st->err, DD_EUSAGE,
                       "unexpected argument '%s' after '--': dgemm-dist takes no operands",
                       argv[optind]);
    return DD_OK;
}

/* ---- after the scan: what the options mean together ---------------------------- */

static int finish_gen(cli_state *st)
{
    dd_run_opts *r = &st->o->run;
    int mnk = st->seen[O_M] + st->seen[O_N] + st->seen[O_K];
    if (!r->out)
        return dd_fail(st->err, DD_EUSAGE, "gen needs --out FILE");
    if (st->o->have_size && mnk)
        return dd_fail(st->err, DD_EUSAGE, "gen takes --size M,N,K or -m M -n N -k K, not both");
    if (!st->o->have_size && mnk != 3)
        return dd_fail(st->err, DD_EUSAGE, "gen needs -m M -n N -k K (or --size M,N,K)");
    if (!strcmp(r->a, r->b))
        return dd_fail(st->err, DD_EUSAGE,
                       "--a and --b name the same dataset \"%s\"%s: give two names", r->a,
                       !st->seen[O_A]   ? " (the default of --a)"
                       : !st->seen[O_B] ? " (the default of --b)"
                                        : "");
    st->o->have_size = 1;
    return DD_OK;
}

static int finish_run(cli_state *st)
{
    dd_run_opts *r = &st->o->run;
    if (st->o->check_given && st->o->no_check)
        return dd_fail(st->err, DD_EUSAGE, "--check and --no-check contradict each other: give one");
    r->check = !st->o->no_check; /* on by default: every run is verified */
    if (!r->in && !st->o->have_size)
        return dd_fail(st->err, DD_EUSAGE, "give an input: --in FILE or --size M,N,K (see --help)");
    if (r->in && st->o->have_size)
        return dd_fail(st->err, DD_EUSAGE, "--in and --size are exclusive: pick one input");
    return DD_OK;
}

static void defaults(dd_cli *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->run.cmdline = o->cmdline;
    o->run.dtype = DD_F64;
    o->run.seed = 1;
    o->run.a = "A";
    o->run.b = "B";
    o->run.c = "C";
    o->run.lookahead = 1;
    o->run.backend = "auto";
    o->run.comm = "auto";
    o->run.io = "auto";
    o->run.repeat = 1;
    o->run.progress = 30;
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof o->cmdline; i++) {
        int n =
            snprintf(o->cmdline + used, sizeof o->cmdline - used, "%s%s", i ? " " : "", argv[i]);
        used += (size_t)n < sizeof o->cmdline - used ? (size_t)n : sizeof o->cmdline - used - 1;
    }
}

int cli_parse(int argc, char **argv, dd_cli *o, dd_err *err)
{
    defaults(o, argc, argv);
    cli_state st = {.o = o, .err = err, .mode = MODE_RUN};
    if (argc > 1 && !strcmp(argv[1], "gen")) {
        o->cmd = DD_CMD_GEN;
        st.mode = MODE_GEN;
        argc--; /* "gen" stands in for argv[0] */
        argv++;
    }
    int rc = scan(&st, argc, argv);
    if (rc || o->help || o->version)
        return rc;
    return o->cmd == DD_CMD_GEN ? finish_gen(&st) : finish_run(&st);
}

/* ---- --help --------------------------------------------------------------------- */

static void usage_syntax(void)
{
    printf("\n"
           "Syntax: --opt VALUE or --opt=VALUE; `--` ends the options.  Long options are\n"
           "spelled in full (abbreviations are refused).  An option that takes a value may\n"
           "be given once; the flags (--check, --no-check, --force, --quiet, --dry-run, --host-to-host,\n"
           "--help, --version) may repeat.  Numbers are decimal digits within the ranges\n"
           "shown; 2^62 = %llu.\n",
           (unsigned long long)DIM_MAX);
}

static void usage_gen(const char *prog)
{
    printf("usage: %s gen --out FILE -m M -n N -k K [--dtype f64|f32] [--seed S] [--force]\n"
           "                 [--a NAME] [--b NAME] [--io auto|collective|independent] [--quiet]\n"
           "Writes A (M×K) and B (K×N), uniform in [-1,1), from a counter-based generator:\n"
           "the file's contents depend on the seed only, not on the number of ranks.\n"
           "\n"
           "  --out FILE, -o FILE   the HDF5 file to write (temporary name, renamed on success)\n"
           "  -m M -n N -k K        sizes, each 1..2^62 (or --size M,N,K, or --size N: square)\n"
           "  --dtype f64|f32       element type (default f64)\n"
           "  --seed S              generator seed, 0..2^64-1 (default 1)\n"
           "  --a NAME, --b NAME    dataset names, non-empty and different (default A, B)\n"
           "  --force               replace an existing file\n"
           "  --io MODE             auto | collective | independent (default auto)\n"
           "  --quiet, -q           only errors\n"
           "  --help, -h; --version\n"
           "gen refuses the options of a run (--in, --c, --json, --grid, --panel, ...).\n",
           prog);
    usage_syntax();
}

static void usage_run_io(const char *prog)
{
    printf("usage: mpirun -np R %s --in FILE [--out FILE] [options]\n"
           "       mpirun -np R %s --size M,N,K [--dtype f64|f32] [--seed S] [options]\n"
           "       mpirun -np R %s gen --out FILE -m M -n N -k K [--dtype f64|f32] [--seed S]\n"
           "       (%s gen --help: gen's options)\n"
           "\n"
           "Distributed C = A·B (SUMMA on a P×Q process grid).\n"
           "\n"
           "Input and output:\n"
           "  --in FILE          HDF5 file with 2-D datasets A (M×K) and B (K×N), 8- or 4-byte "
           "floats\n"
           "  --size M,N,K       generate A and B in memory instead (N alone: square);\n"
           "                     each 1..2^62\n"
           "  --dtype f64|f32    element type of generated inputs (default f64)\n"
           "  --seed S           generator seed, 0..2^64-1 (default 1)\n"
           "  --a NAME, --b NAME, --c NAME\n"
           "                     dataset names of A, B and C, non-empty (default A, B, C)\n"
           "  --out FILE         write C there (temporary name, renamed on success)\n"
           "  --force            replace an existing --out file\n"
           "  --io MODE          auto | collective (parallel HDF5) | independent (default auto)\n",
           prog, prog, prog, prog);
}

static void usage_run_rest(void)
{
    printf("\n"
           "Decomposition and backends:\n"
           "  --grid PxQ         process grid, P, Q >= 1 and P*Q = ranks <= %llu\n"
           "                     (default: most nearly square, P <= Q)\n"
           "  --panel NB         SUMMA panel width, 1..%llu (default 512 on CPU, 2048 on CUDA)\n"
           "  --lookahead L      panels broadcast ahead of the multiply, 1..%d (default 1)\n"
           "  --backend B        auto | cuda | cpu (default auto: CUDA when every rank has a GPU)\n"
           "  --comm C           auto | nccl | mpi (default auto)\n"
           "  --kernel NAME      local multiply kernel (CUDA: own production kernel by default; "
           "cublas)\n"
           "  --threads T        BLAS threads per rank on the CPU backend, 1..%llu (default:\n"
           "                     OPENBLAS_NUM_THREADS or OMP_NUM_THREADS, else the host's cores\n"
           "                     over its ranks)\n"
           "\n"
           "Measurement:\n"
           "  --repeat N         timed multiplies, 1..%llu (default 1)\n"
           "  --warmup N         untimed multiplies first, 0..%llu (default 0)\n"
           "  --check            verify C (the default): HPL-style scaled residual with a random\n"
           "                     vector, PASSED/FAILED, and samples of the files read back\n"
           "  --no-check         skip the verification\n"
           "  --host-to-host     GPU: also time one pass from host data to host result, A and B\n"
           "                     streamed up panel by panel behind the multiply, C down after it\n"
           "  --json FILE        append one JSON record per run (JSON Lines)\n"
           "  --dry-run          print the decomposition and memory per rank; compute nothing\n"
           "  --progress S       in a batch log, a line on the multiply's progress (panels, rate,\n"
           "                     time left) at most every S seconds and every 10%% of panels,\n"
           "                     0..86400 (default 30; 0: only per-phase lines); on a terminal\n"
           "                     a live counter\n"
           "  --quiet, -q        only errors and the check line\n"
           "  --help, -h; --version\n",
           (unsigned long long)INT_MAX31, (unsigned long long)INT_MAX31, DD_LOOKAHEAD_MAX,
           (unsigned long long)THREADS_MAX, (unsigned long long)REPEAT_MAX,
           (unsigned long long)REPEAT_MAX);
    usage_syntax();
}

void cli_usage(const char *prog, int gen)
{
    if (gen) {
        usage_gen(prog);
        return;
    }
    usage_run_io(prog);
    usage_run_rest();
}
