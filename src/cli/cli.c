/* cli.c — parsing the command line into dd_cli (cli.h) with getopt_long.
 *
 * GNU conventions: `--opt VALUE` and `--opt=VALUE`; short options may be
 * clustered and take attached values (`-qm64`); `--` ends the options.
 * Decisions, also stated in --help:
 *  - long options are spelled in full: an abbreviation that getopt_long
 *    would expand (`--thr`) is refused, so that a new option can never
 *    change what an old command line means;
 *  - an option that takes a value may be given once ("--in given twice");
 *    the flags (--check, --no-check, --force, --sync, --quiet, --dry-run,
 *    --host-to-host, --with-c, --help, --help-env, --version) may repeat, since repeating them
 *    changes nothing;
 *  - every number is plain decimal digits within a stated range, but
 *    --alpha and --beta: a finite real or complex number (cli_scalar.c);
 *  - gen refuses the options that mean nothing to it, --json included
 *    (gen writes no run record).
 * One table (cli_specs) holds every option: its spelling, how its value is
 * parsed, its range and which commands take it.  --help is cli_usage.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_impl.h"

const opt_spec cli_specs[O_COUNT] = {
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
    [O_TRANSA] = {"--transa", 0, K_CHOICE, MODE_BOTH, 0, 0, NULL},
    [O_TRANSB] = {"--transb", 0, K_CHOICE, MODE_BOTH, 0, 0, NULL},
    [O_ALPHA] = {"--alpha", 0, K_REAL, MODE_RUN, 0, 0, NULL},
    [O_BETA] = {"--beta", 0, K_REAL, MODE_RUN, 0, 0, NULL},
    [O_ORDER] = {"--order", 0, K_CHOICE, MODE_BOTH, 0, 0, NULL},
    [O_WITHC] = {"--with-c", 0, K_FLAG, MODE_GEN, 0, 0, NULL},
    [O_FORCE] = {"--force", 0, K_FLAG, MODE_BOTH, 0, 0, NULL},
    [O_SYNC] = {"--sync", 0, K_FLAG, MODE_RUN, 0, 0, NULL},
    [O_IO] = {"--io", 0, K_CHOICE, MODE_BOTH, 0, 0, NULL},
    [O_JSON] = {"--json", 0, K_NAME, MODE_RUN, 0, 0, "a file"},
    [O_GRID] = {"--grid", 0, K_GRID, MODE_RUN, 0, 0, NULL},
    [O_PANEL] = {"--panel", 0, K_NUMBER, MODE_RUN, 1, INT_MAX31, NULL},
    [O_LOOKAHEAD] = {"--lookahead", 0, K_NUMBER, MODE_RUN, 1, DGEMM_DIST_LOOKAHEAD_MAX, NULL},
    [O_BACKEND] = {"--backend", 0, K_CHOICE, MODE_RUN, 0, 0, NULL},
    [O_COMM] = {"--comm", 0, K_CHOICE, MODE_RUN, 0, 0, NULL},
    [O_KERNEL] = {"--kernel", 0, K_NAME, MODE_RUN, 0, 0, "a kernel"},
    [O_ACCURACY] = {"--accuracy", 0, K_CHOICE, MODE_RUN, 0, 0, NULL},
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
    [O_HELP_ENV] = {"--help-env", 0, K_FLAG, MODE_BOTH, 0, 0, NULL},
    [O_VERSION] = {"--version", 0, K_FLAG, MODE_BOTH, 0, 0, NULL},
};

static const char *const dtypes[] = {"f64", "double", "f32", "float", "c128", "z", "c64", "c",
                                     NULL};
static const char *const backends[] = {"auto", "cuda", "cpu", NULL};
static const char *const comms[] = {"auto", "nccl", "mpi", "ce", "cuda-ipc", NULL};
static const char *const ios[] = {"auto", "direct", "collective", "independent", NULL};
static const char *const transes[] = {"N", "T", "n", "t", "C", "c", NULL};
static const char *const orders[] = {"row", "col", NULL};
static const char *const accuracies[] = {"native", "fp64", NULL};
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
    if (!strcmp(v, "auto")) { /* the model's choice (src/core/tune.c) */
        st->o->run.P = st->o->run.Q = 0;
        return DD_OK;
    }
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
                   "P*Q <= %llu, or auto",
                   v, (unsigned long long)INT_MAX31);
}

static int index_of(const char *v, const char *const *allowed)
{
    for (int i = 0; allowed[i]; i++)
        if (!strcmp(v, allowed[i]))
            return i;
    return -1;
}

/* K_CHOICE: the words an option takes, and how a refusal names them. */
static const char *const *choices_of(int id, const char **expect)
{
    switch (id) {
    case O_DTYPE:
        *expect = "f64, f32, c128 (z: complex double) or c64 (c: complex float)";
        return dtypes;
    case O_BACKEND:
        *expect = "auto, cuda or cpu";
        return backends;
    case O_COMM:
        *expect = "auto, nccl, mpi or ce (cuda-ipc)";
        return comms;
    case O_TRANSA:
    case O_TRANSB:
        *expect = "N (as stored), T (transposed) or C (conjugate transpose: complex types)";
        return transes;
    case O_ORDER:
        *expect = "row (C, numpy, h5py) or col (Fortran, MATLAB, Julia, R)";
        return orders;
    case O_ACCURACY:
        *expect = "native or fp64";
        return accuracies;
    default:
        *expect = "auto, collective or independent";
        return ios;
    }
}

static int take_choice(cli_state *st, int id, const char *v)
{
    dd_run_opts *r = &st->o->run;
    const char *expect;
    const char *const *allowed = choices_of(id, &expect);
    int i = index_of(v, allowed);
    if (i < 0)
        return dd_fail(st->err, DD_EUSAGE, "bad value '%s' for %s: expected %s", v,
                       cli_specs[id].spelling, expect);
    if (id == O_DTYPE)
        r->dtype = i < 2 ? DD_F64 : i < 4 ? DD_F32 : i < 6 ? DD_C128 : DD_C64;
    else if (id == O_TRANSA || id == O_TRANSB)
        *(id == O_TRANSA ? &r->transa : &r->transb) = i >= 4 ? 'C' : i % 2 ? 'T' : 'N';
    else if (id == O_ORDER)
        r->col = i == 1;
    else if (id == O_ACCURACY)
        r->accuracy = i;
    else
        *(id == O_BACKEND ? &r->backend : id == O_COMM ? &r->comm : &r->io) = v;
    return DD_OK;
}

static int take_number(cli_state *st, int id, const char *v)
{
    const opt_spec *s = &cli_specs[id];
    dd_run_opts *r = &st->o->run;
    uint64_t x;
    int may_auto = id == O_PANEL || id == O_LOOKAHEAD; /* 0: the model's choice */
    if (may_auto && !strcmp(v, "auto"))
        x = 0;
    else if (parse_u64(v, s->lo, s->hi, &x))
        return dd_fail(st->err, DD_EUSAGE,
                       "bad value '%s' for %s: expected an integer from %llu to %llu%s", v,
                       s->spelling, (unsigned long long)s->lo, (unsigned long long)s->hi,
                       may_auto ? ", or auto" : "");
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

/* A dataset name as HDF5 finds it from the file's root group: "A", "/A",
 * "./A", "A/" and "g//A" name the same dataset, so the name kept drops
 * empty and "." components ("g/A").  Nothing left: the root group itself.
 * -1 when the name does not fit in len. */
static int dset_canon(const char *v, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = v; *p;) {
        size_t w = strcspn(p, "/");
        if (w > 0 && !(w == 1 && p[0] == '.')) {
            if (n + (n > 0) + w >= len)
                return -1;
            if (n > 0)
                out[n++] = '/';
            memcpy(out + n, p, w);
            n += w;
        }
        p += w;
        while (*p == '/')
            p++;
    }
    out[n] = '\0';
    return 0;
}

static int take_dset(cli_state *st, int id, const char *v)
{
    dd_run_opts *r = &st->o->run;
    char *slot = st->o->dsets[id == O_A ? 0 : id == O_B ? 1 : 2];
    if (dset_canon(v, slot, DSET_NAME_MAX))
        return dd_fail(st->err, DD_EUSAGE, "dataset name for %s is too long: at most %d bytes",
                       cli_specs[id].spelling, DSET_NAME_MAX - 1);
    if (!*slot)
        return dd_fail(st->err, DD_EUSAGE,
                       "bad value '%s' for %s: it names the file's root group, not a dataset; "
                       "give a dataset name such as %s",
                       v, cli_specs[id].spelling, id == O_A ? "A" : id == O_B ? "B" : "C");
    *(id == O_A ? &r->a : id == O_B ? &r->b : &r->c) = slot;
    return DD_OK;
}

static int take_name(cli_state *st, int id, const char *v)
{
    dd_run_opts *r = &st->o->run;
    if (!*v)
        return dd_fail(st->err, DD_EUSAGE, "empty value for %s: expected the name of %s",
                       cli_specs[id].spelling, cli_specs[id].what);
    if (id == O_A || id == O_B || id == O_C)
        return take_dset(st, id, v);
    const char **slot = id == O_IN     ? &r->in
                        : id == O_OUT  ? &r->out
                        : id == O_JSON ? &r->json
                                       : &r->kernel;
    *slot = v;
    return DD_OK;
}

static void take_flag(cli_state *st, int id)
{
    dd_run_opts *r = &st->o->run;
    int *flag = id == O_HELP       ? &st->o->help
                : id == O_HELP_ENV ? &st->o->help_env
                : id == O_VERSION  ? &st->o->version
                : id == O_FORCE    ? &r->force
                : id == O_SYNC     ? &r->sync
                : id == O_CHECK    ? &st->o->check_given
                : id == O_NOCHECK  ? &st->o->no_check
                : id == O_H2H      ? &r->host_to_host
                : id == O_DRY      ? &r->dry_run
                : id == O_WITHC    ? &r->with_c
                                   : &r->quiet;
    *flag = 1;
}

/* One recognised option: is it this command's, is it new, then its value. */
int cli_take_option(cli_state *st, int id, const char *v)
{
    const opt_spec *s = &cli_specs[id];
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
    case K_REAL:
        return cli_take_real(st, id, v);
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
    if (r->with_c && (!strcmp(r->a, "C") || !strcmp(r->b, "C")))
        return dd_fail(st->err, DD_EUSAGE,
                       "--with-c writes dataset \"C\", which --%s also names: give A and B other "
                       "names",
                       !strcmp(r->a, "C") ? "a" : "b");
    /* gen creates the groups on a name's path: one dataset cannot be a
     * group that holds another */
    const char *names[3] = {r->a, r->b, "C"}, *opts[3] = {"--a", "--b", "--with-c"};
    for (int i = 0; i < 2 + r->with_c; i++)
        for (int j = 0; j < 2 + r->with_c; j++) {
            size_t n = strlen(names[i]);
            if (i != j && !strncmp(names[i], names[j], n) && names[j][n] == '/')
                return dd_fail(st->err, DD_EUSAGE,
                               "dataset \"%s\" (%s) would have to be the group holding \"%s\" "
                               "(%s): give dataset names where neither is inside the other",
                               names[i], opts[i], names[j], opts[j]);
        }
    st->o->have_size = 1;
    return DD_OK;
}

static int finish_run(cli_state *st)
{
    dd_run_opts *r = &st->o->run;
    if (st->o->check_given && st->o->no_check)
        return dd_fail(st->err, DD_EUSAGE,
                       "--check and --no-check contradict each other: give one");
    r->check = !st->o->no_check; /* on by default: every run is verified */
    if (!r->in && !st->o->have_size)
        return dd_fail(st->err, DD_EUSAGE, "give an input: --in FILE or --size M,N,K (see --help)");
    if (r->in && st->o->have_size)
        return dd_fail(st->err, DD_EUSAGE, "--in and --size are exclusive: pick one input");
    if (st->seen[O_ACCURACY] && r->kernel)
        return dd_fail(st->err, DD_EUSAGE,
                       "--kernel and --accuracy both choose the local multiply kernel: give one "
                       "(--accuracy %s picks %s)",
                       accuracies[r->accuracy],
                       r->accuracy ? "the fastest kernel within native FP64's error"
                                   : "the default kernel");
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
    o->run.transa = o->run.transb = 'N';
    o->run.alpha = 1; /* imaginary parts 0 (memset) */
    o->run.beta = 0;
    o->run.lookahead = 0; /* auto, like --grid and --panel */
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
    int rc = cli_scan(&st, argc, argv);
    if (rc || o->help || o->help_env || o->version)
        return rc;
    return o->cmd == DD_CMD_GEN ? finish_gen(&st) : finish_run(&st);
}
