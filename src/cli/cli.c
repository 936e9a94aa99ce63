/* cli.c — parsing the command line into dd_cli (cli.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int parse_i64(const char *s, int64_t lo, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo)
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, int lo, int *out)
{
    int64_t v;
    if (parse_i64(s, lo, &v) || v > 1000000000)
        return -1;
    *out = (int)v;
    return 0;
}

/* "M,N,K" or "N" (square) */
static int parse_size(const char *s, int64_t sz[3])
{
    char buf[128];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    char *parts[3];
    int n = 0;
    for (char *tok = strtok(buf, ",x"); tok; tok = strtok(NULL, ",x")) {
        if (n == 3)
            return -1;
        parts[n++] = tok;
    }
    if (n != 1 && n != 3)
        return -1;
    for (int i = 0; i < n; i++)
        if (parse_i64(parts[i], 1, &sz[i]))
            return -1;
    if (n == 1)
        sz[1] = sz[2] = sz[0];
    return 0;
}

static int parse_grid(const char *s, int *P, int *Q)
{
    char *x = strchr(s, 'x');
    if (!x)
        x = strchr(s, 'X');
    if (!x)
        return -1;
    char a[32];
    size_t la = (size_t)(x - s);
    if (la == 0 || la >= sizeof a)
        return -1;
    memcpy(a, s, la);
    a[la] = '\0';
    return parse_int(a, 1, P) || parse_int(x + 1, 1, Q) ? -1 : 0;
}

static int one_of(const char *v, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (!strcmp(v, *allowed))
            return 1;
    return 0;
}

void cli_usage(const char *prog, int gen)
{
    if (gen) {
        printf("usage: %s gen --out FILE -m M -n N -k K [--dtype f64|f32] [--seed S] [--force]\n"
               "                 [--a NAME] [--b NAME] [--io auto|collective|independent]\n"
               "Writes A (M×K) and B (K×N), uniform in [-1,1), from a counter-based generator:\n"
               "the file's contents depend on the seed only, not on the number of ranks.\n",
               prog);
        return;
    }
    printf(
        "usage: mpirun -np R %s --in FILE [--out FILE] [options]\n"
        "       mpirun -np R %s --size M,N,K [--dtype f64|f32] [--seed S] [options]\n"
        "       mpirun -np R %s gen --out FILE -m M -n N -k K [--dtype f64|f32] [--seed S]\n"
        "\n"
        "Distributed C = A·B (SUMMA on a P×Q process grid).\n"
        "\n"
        "Input and output:\n"
        "  --in FILE          HDF5 file with 2-D datasets A (M×K) and B (K×N), 8- or 4-byte "
        "floats\n"
        "  --size M,N,K       generate A and B in memory instead (N alone: square)\n"
        "  --dtype f64|f32    element type of generated inputs (default f64)\n"
        "  --seed S           generator seed (default 1)\n"
        "  --a NAME --b NAME --c NAME   dataset names (default A, B, C)\n"
        "  --out FILE         write C there (temporary name, renamed on success)\n"
        "  --force            replace an existing --out file\n"
        "  --io MODE          auto | collective (parallel HDF5) | independent (default auto)\n"
        "\n"
        "Decomposition and backends:\n"
        "  --grid PxQ         process grid (default: most nearly square, P <= Q)\n"
        "  --panel NB         SUMMA panel width (default 512 on CPU, 2048 on CUDA)\n"
        "  --lookahead L      panels broadcast ahead of the multiply (default 1)\n"
        "  --backend B        auto | cuda | cpu (default auto: CUDA when every rank has a GPU)\n"
        "  --comm C           auto | nccl | mpi (default auto)\n"
        "  --kernel NAME      local multiply kernel (CUDA: own production kernel by default; "
        "cublas)\n"
        "  --threads T        BLAS threads per rank on the CPU backend (default: "
        "OPENBLAS_NUM_THREADS\n"
        "                     or OMP_NUM_THREADS, else the host's cores over its ranks)\n"
        "\n"
        "Measurement:\n"
        "  --repeat N         timed multiplies (default 1); --warmup N untimed first (default 0)\n"
        "  --check            verify C with a random vector: HPL-style scaled residual, "
        "PASSED/FAILED\n"
        "  --host-to-host     GPU: also time one pass from host data to host result, A and B\n"
        "                     streamed up panel by panel behind the multiply, C down after it\n"
        "  --json FILE        append one JSON record per run (JSON Lines)\n"
        "  --dry-run          print the decomposition and memory per rank; compute nothing\n"
        "  --quiet            only errors and the check line\n"
        "  --help, --version\n",
        prog, prog, prog);
}

int cli_parse(int argc, char **argv, dd_cli *o, dd_err *err)
{
    static const char *const backends[] = {"auto", "cuda", "cpu", NULL};
    static const char *const comms[] = {"auto", "nccl", "mpi", NULL};
    static const char *const ios[] = {"auto", "collective", "independent", NULL};
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
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof o->cmdline; i++) {
        int n =
            snprintf(o->cmdline + used, sizeof o->cmdline - used, "%s%s", i ? " " : "", argv[i]);
        used += (size_t)n < sizeof o->cmdline - used ? (size_t)n : sizeof o->cmdline - used - 1;
    }

    int i = 1;
    if (argc > 1 && !strcmp(argv[1], "gen")) {
        o->cmd = DD_CMD_GEN;
        i = 2;
    }
    int have_m = 0, have_n = 0, have_k = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                                                    \
    do {                                                                                           \
        if (!v)                                                                                    \
            return dd_fail(err, DD_EUSAGE, "option %s needs a value", a);                          \
        i++;                                                                                       \
    } while (0)
#define BAD(what) return dd_fail(err, DD_EUSAGE, "bad value '%s' for %s: expected %s", v, a, what)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            o->help = 1;
        } else if (!strcmp(a, "--version")) {
            o->version = 1;
        } else if (!strcmp(a, "--in")) {
            NEEDV();
            o->run.in = v;
        } else if (!strcmp(a, "--out") || (o->cmd == DD_CMD_GEN && !strcmp(a, "-o"))) {
            NEEDV();
            o->run.out = v;
        } else if (!strcmp(a, "--size")) {
            NEEDV();
            if (parse_size(v, o->run.size))
                BAD("M,N,K or N, positive integers");
            o->have_size = 1;
        } else if (o->cmd == DD_CMD_GEN &&
                   (!strcmp(a, "-m") || !strcmp(a, "-n") || !strcmp(a, "-k"))) {
            NEEDV();
            int idx = a[1] == 'm' ? 0 : a[1] == 'n' ? 1 : 2;
            if (parse_i64(v, 1, &o->run.size[idx]))
                BAD("a positive integer");
            *(idx == 0 ? &have_m : idx == 1 ? &have_n : &have_k) = 1;
        } else if (!strcmp(a, "--dtype")) {
            NEEDV();
            if (!strcmp(v, "f64") || !strcmp(v, "double"))
                o->run.dtype = DD_F64;
            else if (!strcmp(v, "f32") || !strcmp(v, "float"))
                o->run.dtype = DD_F32;
            else
                BAD("f64 or f32");
        } else if (!strcmp(a, "--seed")) {
            NEEDV();
            int64_t s;
            if (parse_i64(v, 0, &s))
                BAD("a non-negative integer");
            o->run.seed = (uint64_t)s;
        } else if (!strcmp(a, "--a")) {
            NEEDV();
            o->run.a = v;
        } else if (!strcmp(a, "--b")) {
            NEEDV();
            o->run.b = v;
        } else if (!strcmp(a, "--c")) {
            NEEDV();
            o->run.c = v;
        } else if (!strcmp(a, "--force")) {
            o->run.force = 1;
        } else if (!strcmp(a, "--json")) {
            NEEDV();
            o->run.json = v;
        } else if (!strcmp(a, "--grid")) {
            NEEDV();
            if (parse_grid(v, &o->run.P, &o->run.Q))
                BAD("PxQ, e.g. 2x4");
        } else if (!strcmp(a, "--panel")) {
            NEEDV();
            if (parse_i64(v, 1, &o->run.panel))
                BAD("a positive integer");
        } else if (!strcmp(a, "--lookahead")) {
            NEEDV();
            if (parse_int(v, 1, &o->run.lookahead) || o->run.lookahead > DD_LOOKAHEAD_MAX)
                BAD("an integer from 1 to 16");
        } else if (!strcmp(a, "--backend")) {
            NEEDV();
            if (!one_of(v, backends))
                BAD("auto, cuda or cpu");
            o->run.backend = v;
        } else if (!strcmp(a, "--comm")) {
            NEEDV();
            if (!one_of(v, comms))
                BAD("auto, nccl or mpi");
            o->run.comm = v;
        } else if (!strcmp(a, "--kernel")) {
            NEEDV();
            o->run.kernel = v;
        } else if (!strcmp(a, "--io")) {
            NEEDV();
            if (!one_of(v, ios))
                BAD("auto, collective or independent");
            o->run.io = v;
        } else if (!strcmp(a, "--threads")) {
            NEEDV();
            if (parse_int(v, 1, &o->run.threads))
                BAD("a positive integer");
        } else if (!strcmp(a, "--repeat")) {
            NEEDV();
            if (parse_int(v, 1, &o->run.repeat))
                BAD("a positive integer");
        } else if (!strcmp(a, "--warmup")) {
            NEEDV();
            if (parse_int(v, 0, &o->run.warmup))
                BAD("a non-negative integer");
        } else if (!strcmp(a, "--check")) {
            o->run.check = 1;
        } else if (!strcmp(a, "--host-to-host")) {
            o->run.host_to_host = 1;
        } else if (!strcmp(a, "--dry-run")) {
            o->run.dry_run = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o->run.quiet = 1;
        } else {
            return dd_fail(err, DD_EUSAGE, "unknown argument '%s' (see --help)", a);
        }
#undef NEEDV
#undef BAD
    }
    if (o->help || o->version)
        return DD_OK;
    if (o->cmd == DD_CMD_GEN) {
        if (!o->run.out)
            return dd_fail(err, DD_EUSAGE, "gen needs --out FILE");
        if (!o->have_size && !(have_m && have_n && have_k))
            return dd_fail(err, DD_EUSAGE, "gen needs -m M -n N -k K (or --size M,N,K)");
        o->have_size = 1;
        return DD_OK;
    }
    if (!o->run.in && !o->have_size)
        return dd_fail(err, DD_EUSAGE, "give an input: --in FILE or --size M,N,K (see --help)");
    if (o->run.in && o->have_size)
        return dd_fail(err, DD_EUSAGE, "--in and --size are exclusive: pick one input");
    return DD_OK;
}
