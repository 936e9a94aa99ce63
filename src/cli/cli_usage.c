/* cli_usage.c — the text of --help and gen --help (cli.h).  Every option,
 * its range and its choices; tests/cli/options.sh and the README's option
 * reference are held to it.  And --help-env: the environment knobs' table
 * (dd_knobs.h), which docs/environment.md repeats (tests/cli/help_env.sh). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dd_knobs.h"

static void usage_syntax(void)
{
    printf("\n"
           "Syntax: --opt VALUE or --opt=VALUE; `--` ends the options.  Long options are\n"
           "spelled in full (abbreviations are refused).  An option that takes a value may\n"
           "be given once; the flags (--check, --no-check, --force, --sync, --quiet,\n"
           "--dry-run, --host-to-host, --with-c, --help, --help-env, --version) may repeat.\n"
           "Numbers are decimal digits within the ranges shown; 2^62 = %llu.\n",
           (unsigned long long)DIM_MAX);
}

static void usage_gen(const char *prog)
{
    printf(
        "usage: %s gen --out FILE -m M -n N -k K [--dtype f64|f32|c128|c64] [--seed S]\n"
        "                 [--force] [--a NAME] [--b NAME] [--with-c] [--transa N|T|C]\n"
        "                 [--transb N|T|C]\n"
        "                 [--order row|col] [--io auto|collective|independent] [--quiet]\n"
        "Writes A (M×K) and B (K×N), uniform in [-1,1), from a counter-based generator:\n"
        "the file's contents depend on the seed only, not on the number of ranks.\n"
        "\n"
        "  --out FILE, -o FILE   the HDF5 file to write (temporary name, renamed on success)\n"
        "  -m M -n N -k K        sizes, each 1..2^62 (or --size M,N,K, or --size N: square)\n"
        "  --dtype f64|f32|c128|c64\n"
        "                        element type (default f64; c128 or z: complex double,\n"
        "                        c64 or c: complex float)\n"
        "  --seed S              generator seed, 0..2^64-1 (default 1)\n"
        "  --a NAME, --b NAME    dataset names, non-empty and different (default A, B)\n"
        "  --with-c              also write C (M×N), the input a run with --beta reads\n"
        "  --transa N|T|C        T or C: write A as K×M, for a run with that --transa\n"
        "                        (default N)\n"
        "  --transb N|T|C        T or C: write B as N×K, for a run with that --transb\n"
        "                        (default N)\n"
        "  --order row|col       col: write each matrix column-major, as Fortran, MATLAB,\n"
        "                        Julia and R do (h5py then sees its transpose; default row)\n"
        "  --force               replace an existing file\n"
        "  --io MODE             auto | direct | collective | independent (default auto: direct)\n"
        "  --quiet, -q           only errors\n"
        "  --help, -h; --help-env (the DD_ environment knobs); --version\n"
        "gen refuses the options of a run (--in, --c, --json, --grid, --panel, ...).\n",
        prog);
    usage_syntax();
}

static void usage_run_io(const char *prog)
{
    printf(
        "usage: mpirun -np R %s --in FILE [--out FILE] [options]\n"
        "       mpirun -np R %s --size M,N,K [--dtype f64|f32|c128|c64] [--seed S] [options]\n"
        "       mpirun -np R %s gen --out FILE -m M -n N -k K [--dtype T] [--seed S]\n"
        "       (%s gen --help: gen's options)\n"
        "\n"
        "Distributed C = alpha·op(A)·op(B) + beta·C (SUMMA on a P×Q process grid).\n"
        "\n"
        "Input and output:\n"
        "  --in FILE          HDF5 file with 2-D datasets A (M×K) and B (K×N), 8- or 4-byte "
        "floats\n"
        "  --size M,N,K       generate A and B in memory instead (N alone: square);\n"
        "                     each 1..2^62\n"
        "  --dtype f64|f32|c128|c64\n"
        "                     element type of generated inputs (default f64; c128 or z:\n"
        "                     complex double, c64 or c: complex float)\n"
        "  --seed S           generator seed, 0..2^64-1 (default 1)\n"
        "  --a NAME, --b NAME, --c NAME\n"
        "                     dataset names of A, B and C, non-empty (default A, B, C)\n"
        "  --out FILE         write C there (temporary name, renamed on success)\n"
        "  --force            replace an existing --out file\n"
        "  --sync             make the commit durable: C's data and its directory entry\n"
        "                     fsync'ed before success is reported (survives a node crash)\n"
        "  --io MODE          auto | direct | collective (parallel HDF5) | independent (default\n"
        "                     auto: direct, the file's bytes at their offset, every rank at "
        "once)\n",
        prog, prog, prog, prog);
}

static void usage_run_gemm(void)
{
    printf("\n"
           "GEMM: C = alpha·op(A)·op(B) + beta·C, op(A) M×K, op(B) K×N, C M×N:\n"
           "  --transa N|T|C     op(A) = A (N, the default), its transpose (T: A is K×M) or\n"
           "                     its conjugate transpose (C; for real data the same as T)\n"
           "  --transb N|T|C     op(B) = B (N, the default), its transpose (T: B is N×K) or\n"
           "                     its conjugate transpose (C; for real data the same as T)\n"
           "  --alpha X          a finite number (default 1); 0: A and B are not multiplied;\n"
           "                     complex data (c128, c64) also takes RE+IMi, RE-IMi or IMi,\n"
           "                     i or j, e.g. 2-0.5i, 0.5i, i, 1+2j or (1+2j); an imaginary\n"
           "                     part on real data is refused\n"
           "  --beta Y           as --alpha (default 0: C's input is never read); else\n"
           "                     the input file also holds C (dataset --c), left untouched\n"
           "  --order row|col    how the file's datasets are laid out (default row: numpy,\n"
           "                     h5py); col: column-major, as Fortran, MATLAB, Julia and R\n"
           "                     write them (an M×K matrix shows as K×M in h5py); C is\n"
           "                     written the same way\n");
}

static void usage_run_rest(void)
{
    printf("\n"
           "Decomposition and backends:\n"
           "  --grid PxQ|auto    process grid, P, Q >= 1 and P*Q = ranks <= %llu\n"
           "  --panel NB|auto    SUMMA panel width, 1..%llu\n"
           "  --lookahead L|auto panels broadcast ahead of the multiply, 1..%d\n"
           "                     auto (the default for all three): the performance model's\n"
           "                     fastest settings that fit in memory; today's defaults (grid\n"
           "                     most nearly square with P <= Q, panel 512 on CPU and 8192\n"
           "                     on CUDA, lookahead 1) unless another is predicted >= 10%%\n"
           "                     faster; the report and --dry-run show the prediction\n"
           "  --backend B        auto | cuda | cpu (default auto: CUDA when every rank has a GPU)\n"
           "  --comm C           auto | nccl | mpi | ce (default auto)\n"
           "  --kernel NAME      local multiply kernel (CUDA: own production kernel by default; "
           "cublas)\n"
           "  --accuracy A       native (the default: the default kernel, native FP64) | fp64:\n"
           "                     the fastest kernel within native FP64's error on this input:\n"
           "                     today the default kernel for every type (FP64's guarded\n"
           "                     emulation, --kernel ozaki2-auto, is not faster yet); the\n"
           "                     report and the record say why; not with --kernel\n"
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
           "  --help, -h; --help-env (the DD_ environment knobs); --version\n",
           (unsigned long long)INT_MAX31, (unsigned long long)INT_MAX31, DGEMM_DIST_LOOKAHEAD_MAX,
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
    usage_run_gemm();
    usage_run_rest();
}

/* ---- --help-env ---------------------------------------------------------------- */

/* The table's sections: a knob is in the first whose flag it has. */
static const struct {
    unsigned flag;
    const char *title;
} env_sections[] = {
    {DD_KNOB_TEST, "Test hooks (for the tests; not for production runs):"},
    {DD_KNOB_PROGRAM, "The program (dgemm-dist):"},
    {DD_KNOB_LIBRARY, "The library (libdgemm-dist; also under the program and the drop-in):"},
    {DD_KNOB_DROPIN, "The ScaLAPACK drop-in (libdgemm-dist-scalapack):"},
};
enum { N_SECTIONS = sizeof env_sections / sizeof env_sections[0] };

static int section_of(const dd_knob_spec *s)
{
    for (int i = 0; i < N_SECTIONS; i++)
        if (s->flags & env_sections[i].flag)
            return i;
    return N_SECTIONS - 1;
}

/* text wrapped at 78 columns, each line indented by 6 */
static void print_wrapped(const char *text)
{
    const int indent = 6, width = 78;
    int col = 0;
    for (const char *p = text; *p;) {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " ");
        if (!w)
            break;
        if (col > indent && col + 1 + (int)w > width) {
            putchar('\n');
            col = 0;
        }
        if (col == 0)
            col = printf("%*s", indent, "");
        else
            col += printf(" ");
        col += printf("%.*s", (int)w, p);
        p += w;
    }
    if (col)
        putchar('\n');
}

void cli_usage_env(void)
{
    /* the columns as wide as their widest entry, two spaces apart */
    int wn = 4, wt = 4, wd = 7;
    for (int k = 0; k < DDK_COUNT; k++) {
        const dd_knob_spec *s = dd_knob_spec_of((dd_knob)k);
        int n = (int)strlen(s->name), t = (int)strlen(dd_knob_type_name(s->type)),
            d = (int)strlen(s->dflt_text);
        wn = n > wn ? n : wn;
        wt = t > wt ? t : wt;
        wd = d > wd ? d : wd;
    }
    printf("Environment knobs: the DD_ variables that dgemm-dist, libdgemm-dist and\n"
           "libdgemm-dist-scalapack read (docs/environment.md holds the same table).\n"
           "Each is read where it is used; an empty value is unset; a boolean is 1|0\n"
           "(or yes|no, true|false, on|off).  A value that is malformed or out of range\n"
           "gets one warning on stderr, from rank 0, naming what is used instead, or,\n"
           "where the knob says so, is refused.\n");
    for (int sec = 1; sec <= N_SECTIONS; sec++) {
        int i = sec % N_SECTIONS; /* the test hooks last */
        printf("\n%s\n  %-*s  %-*s  %-*s  %s\n", env_sections[i].title, wn, "NAME", wt, "TYPE", wd,
               "DEFAULT", "RANGE");
        for (int k = 0; k < DDK_COUNT; k++) {
            const dd_knob_spec *s = dd_knob_spec_of((dd_knob)k);
            if (section_of(s) != i)
                continue;
            char range[200];
            dd_knob_range(s, range, sizeof range);
            printf("  %-*s  %-*s  %-*s  %s\n", wn, s->name, wt, dd_knob_type_name(s->type), wd,
                   s->dflt_text, range);
            print_wrapped(s->what);
        }
    }
}
