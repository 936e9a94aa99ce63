/* test_io.c — the HDF5 I/O layer (io/) under MPI, at any rank count.
 *
 *   mpirun -n 3 test-io roundtrip independent|collective
 *   mpirun -n 3 test-io probe
 *   mpirun -n 3 test-io output
 *   mpirun -n 3 test-io complex
 *   mpirun -n 3 test-io h5py-read DIR | h5py-write DIR   (tests/io/h5py_complex.sh)
 *
 * roundtrip: matrices of known values written block by block (cut by rows,
 * by columns, on a P×Q grid, and all on one rank with the others empty),
 * attributes set, then read back in every cutting with every available path
 * and compared exactly; a chunked, compressed, big-endian file written by
 * plain HDF5 reads back too; bad requests fail on the ranks they should.
 * probe: good and bad input files; the message names the problem and every
 * rank gets the same rc and message.
 * output: the temporary-name discipline (refuse, force, input == output,
 * commit, abort).
 * complex: complex128 and complex64 round trips through every write path
 * and every read path (direct included), odd shapes, every cutting; files
 * with members real/imag, big-endian, chunked and compressed; compounds
 * that are not complex numbers refused by the probe and every read path,
 * each naming what is wrong; complex against real and the precisions
 * refused; --order col and transposes in the probe.
 * h5py-read DIR: every read path reads the complex datasets h5py wrote into
 * DIR/h5py.h5 and checks their values; the probe reports them complex.
 * h5py-write DIR: every write path writes complex files into DIR for h5py
 * to check (tests/io/h5py_complex.py).
 * Exit status 0 only when every check on every rank passed.  DD_TEST_KEEP=1
 * keeps the scratch files; DD_TEST_VERBOSE=1 prints the messages checked. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#define DD_CHECK_MPI
#include "dd.h" /* dd_err for same_everywhere */
#include "dd_check.h"
#include "io.h"

static char g_dir[512];

/* Under DD_TEST_VERBOSE, rank 0 prints each message, to read it as a user would. */
static int has(const dd_err *e, const char *words)
{
    static const char *last;
    if (g_rank == 0 && getenv("DD_TEST_VERBOSE") && last != e->msg + strlen(e->msg)) {
        last = e->msg + strlen(e->msg);
        printf("  message: %s\n", e->msg);
    }
    return strstr(e->msg, words) != NULL;
}

static void path_in_dir(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", g_dir, name);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* ---- block cuttings ------------------------------------------------------------- */

static void split(int64_t n, int parts, int i, int64_t *start, int64_t *len)
{
    int64_t base = n / parts, rem = n % parts;
    *start = i * base + (i < rem ? i : rem);
    *len = base + (i < rem ? 1 : 0);
}

enum { CUT_ROWS, CUT_COLS, CUT_GRID, CUT_FIRST, CUT_LAST, NCUTS };
static const char *cut_name[NCUTS] = {"rows", "cols", "grid", "first-rank-all", "last-rank-all"};

static void cut(int kind, int64_t M, int64_t N, int64_t b[4])
{
    int P = 1;
    for (int p = 1; p * p <= g_size; p++)
        if (g_size % p == 0)
            P = p;
    int Q = g_size / P;
    switch (kind) {
    case CUT_ROWS:
        split(M, g_size, g_rank, &b[0], &b[1]);
        b[2] = 0, b[3] = N;
        break;
    case CUT_COLS:
        b[0] = 0, b[1] = M;
        split(N, g_size, g_rank, &b[2], &b[3]);
        break;
    case CUT_GRID:
        split(M, P, g_rank / Q, &b[0], &b[1]);
        split(N, Q, g_rank % Q, &b[2], &b[3]);
        break;
    case CUT_FIRST:
        b[0] = 0, b[1] = g_rank == 0 ? M : 0, b[2] = 0, b[3] = N;
        break;
    default:
        b[0] = 0, b[1] = M, b[2] = N, b[3] = g_rank == g_size - 1 ? N : 0;
        if (g_rank == g_size - 1)
            b[2] = 0;
        break;
    }
}

/* Exact in f32 as well as f64 for the shapes used here.  Part 0 is a
 * real value or a complex one's real part, part 1 the imaginary part
 * (tests/io/h5py_complex.py writes and expects the same). */
static double value_part(int64_t i, int64_t j, int which, int part)
{
    double v = (double)(i * 1024 + j) + 0.5 + which * 0.25;
    return part ? -(v + 1) : v;
}

/* Part p of element k of a buffer of type t (f64, f32, or complex of them). */
static double get_part(const void *buf, dd_dtype t, size_t k, int p)
{
    size_t at = dd_dtype_complex(t) ? 2 * k + (size_t)p : k;
    return dd_dtype_real(t) == DD_F64 ? ((const double *)buf)[at] : ((const float *)buf)[at];
}
static void set_part(void *buf, dd_dtype t, size_t k, int p, double v)
{
    size_t at = dd_dtype_complex(t) ? 2 * k + (size_t)p : k;
    if (dd_dtype_real(t) == DD_F64)
        ((double *)buf)[at] = v;
    else
        ((float *)buf)[at] = (float)v;
}

static void *fill_block(const int64_t b[4], dd_dtype t, int which)
{
    size_t n = (size_t)(b[1] * b[3]);
    void *buf = malloc(n ? n * dd_elsize(t) : 1);
    for (int64_t i = 0; i < b[1]; i++)
        for (int64_t j = 0; j < b[3]; j++)
            for (int p = 0; p < 1 + dd_dtype_complex(t); p++)
                set_part(buf, t, (size_t)(i * b[3] + j), p,
                         value_part(b[0] + i, b[2] + j, which, p));
    return buf;
}

/* Counts elements of a block that differ from the known values. */
static int64_t check_block(const void *buf, const int64_t b[4], dd_dtype t, int which)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < b[1]; i++)
        for (int64_t j = 0; j < b[3]; j++) {
            int wrong = 0;
            for (int p = 0; p < 1 + dd_dtype_complex(t); p++)
                wrong |= get_part(buf, t, (size_t)(i * b[3] + j), p) !=
                         value_part(b[0] + i, b[2] + j, which, p);
            bad += wrong;
        }
    return bad;
}

/* ---- roundtrip --------------------------------------------------------------------- */

static const dd_io_ops *paths[2];
static int npaths;

/* Rank 0 reads the attributes with plain HDF5: rank 0's values must be there. */
static void check_attrs(const char *file)
{
    if (g_rank != 0)
        return;
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "C", H5P_DEFAULT);
    CHECK(f >= 0 && d >= 0, "cannot reopen %s", file);
    if (d < 0)
        return;
    double r = 0;
    int64_t n = 0;
    char *s = NULL;
    hid_t a = H5Aopen(d, "residual", H5P_DEFAULT), at = H5Aget_type(a);
    CHECK(H5Aread(a, H5T_NATIVE_DOUBLE, &r) >= 0 && r == 0.125, "residual attr %g", r);
    CHECK(H5Tget_class(at) == H5T_FLOAT && H5Tget_size(at) == 8, "residual is not an f64");
    H5Tclose(at);
    H5Aclose(a);
    a = H5Aopen(d, "ranks", H5P_DEFAULT);
    at = H5Aget_type(a);
    CHECK(H5Aread(a, H5T_NATIVE_INT64, &n) >= 0 && n == 42, "ranks attr %lld", (long long)n);
    CHECK(H5Tget_class(at) == H5T_INTEGER && H5Tget_size(at) == 8, "ranks is not an i64");
    H5Tclose(at);
    H5Aclose(a);
    const char *want[][2] = {{"tool", "dgemm-dist 0.1.0 (replaced)"}, {"note", "from rank 0"}};
    for (int k = 0; k < 2; k++) {
        a = H5Aopen(d, want[k][0], H5P_DEFAULT);
        at = H5Aget_type(a);
        CHECK(a >= 0 && H5Tis_variable_str(at) > 0, "attr %s is not a variable string", want[k][0]);
        s = NULL;
        if (a >= 0 && H5Aread(a, at, &s) >= 0 && s) {
            CHECK(strcmp(s, want[k][1]) == 0, "attr %s = \"%s\"", want[k][0], s);
            H5free_memory(s);
        } else {
            CHECK(0, "cannot read attr %s", want[k][0]);
        }
        H5Tclose(at);
        H5Aclose(a);
    }
    CHECK(H5Aexists(d, "only-on-others") == 0, "an attribute from rank != 0 was written");
    H5Dclose(d);
    H5Fclose(f);
}

static void write_file(const dd_io_ops *w, const char *file, int64_t M, int64_t N, dd_dtype t,
                       int wcut)
{
    dd_io io = {0};
    dd_err e;
    dd_err_clear(&e);
    const char *names[2] = {"C", "grp/D"};
    const int64_t dims[2][2] = {{M, N}, {N, M}};
    int rc = w->create(&io, MPI_COMM_WORLD, file, 2, names, dims, t, &e);
    CHECK(rc == DD_OK, "%s create %s: %s", w->name, file, e.msg);
    if (rc != DD_OK)
        return;
    for (int k = 0; k < 2; k++) {
        int64_t b[4];
        cut(wcut, dims[k][0], dims[k][1], b);
        void *buf = fill_block(b, t, k);
        rc = w->write_block(&io, names[k], t, b[0], b[1], b[2], b[3], b[1] * b[3] != 0 ? buf : NULL,
                            &e);
        CHECK(rc == DD_OK, "%s write %s cut %s: %s", w->name, names[k], cut_name[wcut], e.msg);
        free(buf);
    }
    /* Every rank passes values; only rank 0's may land in the file. */
    char note[64];
    snprintf(note, sizeof note, g_rank == 0 ? "from rank 0" : "from rank %d", g_rank);
    dd_attr attrs[5] = {
        {.key = "tool", .kind = DD_ATTR_STR, .s = "dgemm-dist 0.1.0"},
        {.key = "residual", .kind = DD_ATTR_F64, .d = 0.125 + g_rank},
        {.key = "ranks", .kind = DD_ATTR_I64, .i = 42 + g_rank},
        {.key = "note", .kind = DD_ATTR_STR, .s = note},
        {.key = "only-on-others", .kind = DD_ATTR_I64, .i = 1},
    };
    rc = w->set_attrs(&io, "C", attrs, g_rank == 0 ? 4 : 5, &e);
    CHECK(rc == DD_OK, "%s set_attrs: %s", w->name, e.msg);
    dd_attr again = {.key = "tool", .kind = DD_ATTR_STR, .s = "dgemm-dist 0.1.0 (replaced)"};
    rc = w->set_attrs(&io, "C", &again, 1, &e);
    CHECK(rc == DD_OK, "%s set_attrs replacing: %s", w->name, e.msg);
    rc = w->close(&io, &e);
    CHECK(rc == DD_OK, "%s close after writing: %s", w->name, e.msg);
    CHECK(io.impl == NULL, "close left the handle set");
}

static void read_file(const dd_io_ops *r, const char *file, int64_t M, int64_t N, dd_dtype t)
{
    dd_io io = {0};
    dd_err e;
    dd_err_clear(&e);
    int rc = r->open_read(&io, MPI_COMM_WORLD, file, &e);
    CHECK(rc == DD_OK, "%s open_read %s: %s", r->name, file, e.msg);
    if (rc != DD_OK)
        return;
    const char *names[2] = {"C", "grp/D"};
    const int64_t dims[2][2] = {{M, N}, {N, M}};
    for (int rcut = 0; rcut < NCUTS; rcut++)
        for (int k = 0; k < 2; k++) {
            int64_t b[4];
            cut(rcut, dims[k][0], dims[k][1], b);
            size_t n = (size_t)(b[1] * b[3]);
            void *buf = malloc(n ? n * dd_elsize(t) : 1);
            memset(buf, 0xff, n * dd_elsize(t)); /* NaN everywhere */
            rc = r->read_block(&io, names[k], t, b[0], b[1], b[2], b[3], n ? buf : NULL, &e);
            CHECK(rc == DD_OK, "%s read %s cut %s: %s", r->name, names[k], cut_name[rcut], e.msg);
            int64_t bad = rc == DD_OK ? check_block(buf, b, t, k) : 0;
            CHECK(bad == 0, "%s read %s %lldx%lld cut %s: %lld wrong values", r->name, names[k],
                  (long long)dims[k][0], (long long)dims[k][1], cut_name[rcut], (long long)bad);
            free(buf);
        }

    /* Bad requests: everyone asks the wrong type, a missing dataset, out of range. */
    double x[4];
    dd_dtype wrong = t == DD_F64 ? DD_F32 : DD_F64;
    dd_err_clear(&e);
    rc = r->read_block(&io, "C", wrong, 0, 1, 0, 1, x, &e);
    CHECK(rc != DD_OK && has(&e, "holds") && same_everywhere(rc, &e), "wrong type: %s", e.msg);
    dd_err_clear(&e);
    rc = r->read_block(&io, "nope", t, 0, 1, 0, 1, x, &e);
    CHECK(rc != DD_OK && has(&e, "no dataset \"nope\"") && same_everywhere(rc, &e),
          "missing dataset: %s", e.msg);
    dd_err_clear(&e);
    rc = r->read_block(&io, "C", t, M, 1, 0, 1, x, &e);
    CHECK(rc != DD_OK && has(&e, "outside") && same_everywhere(rc, &e), "out of range: %s", e.msg);
    /* Only the last rank asks out of range: the independent path fails there
     * alone; the collective one agrees, and nobody hangs either way. */
    dd_err_clear(&e);
    int last = g_rank == g_size - 1;
    rc = r->read_block(&io, "C", t, 0, last ? M + 1 : 1, 0, 1, x, &e);
    if (strcmp(r->name, "collective") != 0)
        CHECK(last ? rc != DD_OK && has(&e, "outside") : rc == DD_OK, "one rank out of range: %s",
              e.msg);
    else
        CHECK(rc != DD_OK && has(&e, "outside") && same_everywhere(rc, &e),
              "one rank out of range, collective: %s", e.msg);
    dd_err_clear(&e);
    rc = r->write_block(&io, "C", t, 0, 1, 0, 1, x, &e);
    CHECK(rc != DD_OK && has(&e, "reading"), "write to a file opened for reading: %s", e.msg);
    dd_err_clear(&e);
    rc = r->close(&io, &e);
    CHECK(rc == DD_OK, "%s close after reading: %s", r->name, e.msg);
}

static void bad_opens(const dd_io_ops *p)
{
    char file[600];
    dd_io io = {0};
    dd_err e;
    dd_err_clear(&e);
    path_in_dir(file, sizeof file, "missing.h5");
    int rc = p->open_read(&io, MPI_COMM_WORLD, file, &e);
    CHECK(rc != DD_OK && has(&e, "missing.h5") && same_everywhere(rc, &e), "%s open missing: %s",
          p->name, e.msg);
    CHECK(io.impl == NULL, "failed open left a handle");
    p->close(&io, &e);

    const char *names[1] = {"C"};
    const int64_t dims[1][2] = {{2, 2}};
    dd_err_clear(&e);
    path_in_dir(file, sizeof file, "no-such-dir/out.h5");
    rc = p->create(&io, MPI_COMM_WORLD, file, 1, names, dims, DD_F64, &e);
    CHECK(rc != DD_OK && has(&e, "no-such-dir/out.h5") && same_everywhere(rc, &e),
          "%s create in a missing directory: %s", p->name, e.msg);
    CHECK(io.impl == NULL, "failed create left a handle");

    /* A write that fails on one rank only must not hang the turn-taking. */
    path_in_dir(file, sizeof file, "onebad.h5");
    dd_err_clear(&e);
    rc = p->create(&io, MPI_COMM_WORLD, file, 1, names, dims, DD_F64, &e);
    CHECK(rc == DD_OK, "%s create: %s", p->name, e.msg);
    if (rc != DD_OK)
        return;
    double x[4] = {1, 2, 3, 4};
    int last = g_rank == g_size - 1;
    rc = p->write_block(&io, "C", DD_F64, 0, last ? 3 : (g_rank == 0 ? 2 : 0), 0, 2, x, &e);
    if (p == &dd_io_independent)
        CHECK(last ? rc != DD_OK && has(&e, "outside") : rc == DD_OK,
              "one rank writing out of range: %s", e.msg);
    else
        CHECK(rc != DD_OK && same_everywhere(rc, &e), "one rank writing out of range: %s", e.msg);
    dd_err_clear(&e);
    rc = p->write_block(&io, "E", DD_F64, 0, 1, 0, 1, x, &e);
    CHECK(rc != DD_OK && has(&e, "\"E\" was not created") && same_everywhere(rc, &e),
          "write to a dataset never created: %s", e.msg);
    dd_err_clear(&e);
    rc = p->close(&io, &e);
    CHECK(rc == DD_OK, "close: %s", e.msg);
}

/* A file as h5py users also write them: C chunked and compressed, D stored
 * big-endian.  Rank 0 writes it with plain HDF5; every path must read it. */
static void make_foreign(const char *file, int64_t M, int64_t N, dd_dtype t)
{
    if (g_rank == 0) {
        hid_t f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        hsize_t chunk[2] = {2, 2};
        H5Pset_create_intermediate_group(lcpl, 1);
        H5Pset_chunk(dcpl, 2, chunk);
        H5Pset_deflate(dcpl, 4);
        hid_t mem = t == DD_F64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
        hid_t be = t == DD_F64 ? H5T_IEEE_F64BE : H5T_IEEE_F32BE;
        for (int k = 0; k < 2; k++) {
            int64_t b[4] = {0, k ? N : M, 0, k ? M : N};
            hsize_t dims[2] = {(hsize_t)b[1], (hsize_t)b[3]};
            void *buf = fill_block(b, t, k);
            hid_t s = H5Screate_simple(2, dims, NULL);
            hid_t d = H5Dcreate2(f, k ? "grp/D" : "C", k ? be : mem, s, lcpl,
                                 k ? H5P_DEFAULT : dcpl, H5P_DEFAULT);
            CHECK(d >= 0 && H5Dwrite(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0,
                  "writing the foreign file %s", file);
            H5Dclose(d);
            H5Sclose(s);
            free(buf);
        }
        H5Pclose(dcpl);
        H5Pclose(lcpl);
        H5Fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void suite_roundtrip(const char *which)
{
    const dd_io_ops *w = io_select(which);
    CHECK(w != NULL, "io_select(\"%s\") gave NULL", which);
    if (w == NULL)
        return;
    const int64_t shapes[][2] = {{7, 5}, {2, 9}, {1, 1}, {13, 3}};
    char file[600];
    path_in_dir(file, sizeof file, "roundtrip.h5");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 2; t++)
            for (int wcut = 0; wcut < NCUTS; wcut++) {
                dd_dtype dt = t == 0 ? DD_F64 : DD_F32;
                write_file(w, file, shapes[s][0], shapes[s][1], dt, wcut);
                check_attrs(file);
                for (int p = 0; p < npaths; p++)
                    read_file(paths[p], file, shapes[s][0], shapes[s][1], dt);
            }
    path_in_dir(file, sizeof file, "foreign.h5");
    for (int t = 0; t < 2; t++) {
        make_foreign(file, 7, 5, t == 0 ? DD_F64 : DD_F32);
        read_file(w, file, 7, 5, t == 0 ? DD_F64 : DD_F32);
    }
    bad_opens(w);
}

/* ---- probe ----------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    int ndims;
    hsize_t dims[3];
    hid_t type;
    int group; /* make a group of this name instead of a dataset */
} fixture;

static void make_file(const char *file, const fixture *fx, int n)
{
    hid_t f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    for (int i = 0; i < n; i++) {
        if (fx[i].group) {
            H5Gclose(H5Gcreate2(f, fx[i].name, lcpl, H5P_DEFAULT, H5P_DEFAULT));
            continue;
        }
        hid_t s = H5Screate_simple(fx[i].ndims, fx[i].dims, NULL);
        hid_t d = H5Dcreate2(f, fx[i].name, fx[i].type, s, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(d >= 0, "fixture %s in %s", fx[i].name, file);
        H5Dclose(d);
        H5Sclose(s);
    }
    H5Pclose(lcpl);
    CHECK(H5Fclose(f) >= 0, "fixture %s", file);
}

static int probe(const char *name, const char *a, const char *b, int64_t *M, int64_t *N, int64_t *K,
                 dd_dtype *t, dd_err *e)
{
    char file[600];
    if (name[0] == '/')
        snprintf(file, sizeof file, "%s", name);
    else
        path_in_dir(file, sizeof file, name);
    dd_err_clear(e);
    *M = *N = *K = -1;
    int rc = io_probe_inputs(MPI_COMM_WORLD, file, a, b, M, N, K, t, e);
    CHECK(same_everywhere(rc, e), "probe %s: ranks disagree", name);
    return rc;
}

#define EXPECT_FAIL(file, a, b, ...)                                                               \
    do {                                                                                           \
        int rc_ = probe(file, a, b, &M, &N, &K, &t, &e);                                           \
        const char *w_[] = {__VA_ARGS__};                                                          \
        CHECK(rc_ != DD_OK, "probe %s succeeded", file);                                           \
        for (size_t i_ = 0; i_ < sizeof w_ / sizeof w_[0]; i_++)                                   \
            CHECK(has(&e, w_[i_]), "probe %s: \"%s\" lacks \"%s\"", file, e.msg, w_[i_]);          \
    } while (0)

static void suite_probe(void)
{
    char f[600];
    if (g_rank == 0) {
        const fixture good[] = {{"A", 2, {3, 4}, H5T_IEEE_F64LE, 0},
                                {"B", 2, {4, 2}, H5T_IEEE_F64LE, 0}};
        const fixture good32[] = {{"A", 2, {5, 1}, H5T_IEEE_F32BE, 0},
                                  {"B", 2, {1, 7}, H5T_IEEE_F32LE, 0}};
        const fixture nested[] = {{"mats/left", 2, {2, 3}, H5T_IEEE_F64LE, 0},
                                  {"mats/right", 2, {3, 6}, H5T_IEEE_F64LE, 0}};
        const fixture onlya[] = {{"A", 2, {3, 4}, H5T_IEEE_F64LE, 0}};
        const fixture threed[] = {{"A", 3, {2, 3, 4}, H5T_IEEE_F64LE, 0},
                                  {"B", 2, {4, 2}, H5T_IEEE_F64LE, 0}};
        const fixture ints[] = {{"A", 2, {3, 4}, H5T_STD_I32LE, 0},
                                {"B", 2, {4, 2}, H5T_IEEE_F64LE, 0}};
        const fixture u8[] = {{"A", 2, {3, 4}, H5T_IEEE_F64LE, 0},
                              {"B", 2, {4, 2}, H5T_STD_U8LE, 0}};
        const fixture shape[] = {{"A", 2, {3, 4}, H5T_IEEE_F64LE, 0},
                                 {"B", 2, {5, 2}, H5T_IEEE_F64LE, 0}};
        const fixture mixed[] = {{"A", 2, {3, 4}, H5T_IEEE_F64LE, 0},
                                 {"B", 2, {4, 2}, H5T_IEEE_F32LE, 0}};
        const fixture group[] = {{"A", 0, {0}, 0, 1}, {"B", 2, {4, 2}, H5T_IEEE_F64LE, 0}};
        const fixture empty[] = {{"A", 2, {0, 4}, H5T_IEEE_F64LE, 0},
                                 {"B", 2, {4, 2}, H5T_IEEE_F64LE, 0}};
#define MK(name, fx)                                                                               \
    (path_in_dir(f, sizeof f, name), make_file(f, fx, (int)(sizeof fx / sizeof fx[0])))
        MK("good.h5", good);
        MK("good32.h5", good32);
        MK("nested.h5", nested);
        MK("onlya.h5", onlya);
        MK("threed.h5", threed);
        MK("ints.h5", ints);
        MK("u8.h5", u8);
        MK("shape.h5", shape);
        MK("mixed.h5", mixed);
        MK("group.h5", group);
        MK("empty.h5", empty);
#undef MK
        path_in_dir(f, sizeof f, "text.h5");
        FILE *fp = fopen(f, "w");
        fputs("A,B\n1,2\n", fp);
        fclose(fp);
        path_in_dir(f, sizeof f, "zero.h5");
        fclose(fopen(f, "w"));
        path_in_dir(f, sizeof f, "adir.h5");
        mkdir(f, 0755);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int64_t M, N, K;
    dd_dtype t;
    dd_err e;
    int rc = probe("good.h5", "A", "B", &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 3 && K == 4 && N == 2 && t == DD_F64,
          "good.h5: rc %d %s M%lld N%lld K%lld", rc, e.msg, (long long)M, (long long)N,
          (long long)K);
    rc = probe("good32.h5", "A", "B", &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 5 && K == 1 && N == 7 && t == DD_F32, "good32.h5: rc %d %s", rc,
          e.msg);
    rc = probe("nested.h5", "mats/left", "/mats/right", &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 2 && K == 3 && N == 6, "nested.h5: rc %d %s", rc, e.msg);

    EXPECT_FAIL("missing.h5", "A", "B", "cannot open input file", "missing.h5: no such file");
    EXPECT_FAIL("text.h5", "A", "B", "text.h5 is not an HDF5 file");
    EXPECT_FAIL("zero.h5", "A", "B", "not an HDF5 file");
    EXPECT_FAIL("adir.h5", "A", "B", "is a directory");
    EXPECT_FAIL("onlya.h5", "A", "B", "no dataset \"B\"", "--b");
    EXPECT_FAIL("good.h5", "X", "B", "no dataset \"X\"", "--a");
    EXPECT_FAIL("nested.h5", "nogroup/left", "mats/right", "no dataset \"nogroup/left\"");
    EXPECT_FAIL("threed.h5", "A", "B", "dataset A", "3-D", "2-D");
    EXPECT_FAIL("ints.h5", "A", "B", "dataset A",
                "has type int32; dgemm-dist needs 8- or 4-byte floats");
    EXPECT_FAIL("u8.h5", "A", "B", "dataset B", "has type uint8");
    EXPECT_FAIL("shape.h5", "A", "B", "A is 3×4 but B is 5×2: A's columns must equal B's rows");
    EXPECT_FAIL("mixed.h5", "A", "B", "A is f64 but B is f32");
    EXPECT_FAIL("group.h5", "A", "B", "not a dataset");
    EXPECT_FAIL("empty.h5", "A", "B", "0×4", "non-empty");
}

/* ---- complex matrices ------------------------------------------------------------------- */

/* Every path built here (direct included), for writing and for reading. */
static const dd_io_ops *every_path[3];
static int nevery;

/* A compound element of `size` bytes: member `n0` of type t0 at offset o0,
 * then (where n1 is not NULL) `n1` of t1 at o1 and (where n2 is not NULL)
 * `n2` of t0 at o2.  The caller closes it. */
static hid_t compound(size_t size, const char *n0, hid_t t0, size_t o0, const char *n1, hid_t t1,
                      size_t o1, const char *n2, size_t o2)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, size);
    CHECK(t >= 0 && H5Tinsert(t, n0, o0, t0) >= 0 && (!n1 || H5Tinsert(t, n1, o1, t1) >= 0) &&
              (!n2 || H5Tinsert(t, n2, o2, t0) >= 0),
          "making a compound of %s", n0);
    return t;
}

/* Complex types as h5py writes them (members r, i) and as other tools do (real, imag). */
static hid_t cx_type(hid_t part, int realimag)
{
    size_t es = H5Tget_size(part);
    return compound(2 * es, realimag ? "real" : "r", part, 0, realimag ? "imag" : "i", part, es,
                    NULL, 0);
}

/* Whether the direct path reads dataset `dset` (rows×cols of type t, values
 * `which`) of `file` with pread, as `want` says: under DD_FAULT=direct-only
 * a read it would make through HDF5 fails instead. */
static void read_directly(const char *file, const char *dset, int64_t rows, int64_t cols,
                          dd_dtype t, int which, int want)
{
    dd_io io = {0};
    dd_err e;
    dd_err_clear(&e);
    int64_t b[4];
    cut(CUT_ROWS, rows, cols, b);
    size_t n = (size_t)(b[1] * b[3]);
    void *buf = malloc(n ? n * dd_elsize(t) : 1);
    setenv("DD_FAULT", "direct-only:*", 1);
    int rc = dd_io_direct.open_read(&io, MPI_COMM_WORLD, file, &e);
    if (rc == DD_OK) {
        rc = dd_io_direct.read_block(&io, dset, t, b[0], b[1], b[2], b[3], n ? buf : NULL, &e);
        dd_err ignored;
        dd_io_direct.close(&io, &ignored);
    }
    unsetenv("DD_FAULT");
    if (want)
        CHECK(rc == DD_OK && check_block(buf, b, t, which) == 0,
              "direct read of %s in %s with pread alone: %s", dset, file, e.msg);
    else if (n > 0)
        CHECK(rc != DD_OK && has(&e, "not read directly but through HDF5"),
              "direct read of %s in %s: rc %d %s, want it through HDF5", dset, file, rc, e.msg);
    free(buf);
}

/* Round trips of complex128 and complex64: every write path, then every
 * read path, odd shapes, each cut; values checked part by part. */
static void complex_roundtrips(void)
{
    const int64_t shapes[][2] = {{7, 5}, {1, 1}, {13, 3}, {2, 9}};
    char file[600];
    path_in_dir(file, sizeof file, "cx-roundtrip.h5");
    for (int w = 0; w < nevery; w++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 2; t++) {
                dd_dtype dt = t == 0 ? DD_C128 : DD_C64;
                int wcut = (int)((s * 2 + (size_t)t + (size_t)w) % NCUTS);
                write_file(every_path[w], file, shapes[s][0], shapes[s][1], dt, wcut);
                check_attrs(file);
                if (g_rank ==
                    0) { /* as h5py reads it: the compound r, i of IEEE little-endian floats */
                    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
                    hid_t d = H5Dopen2(f, "C", H5P_DEFAULT), ft = H5Dget_type(d);
                    hid_t want = cx_type(t == 0 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, 0);
                    CHECK(H5Tequal(ft, want) > 0, "%s wrote %s without the type r, i of %s",
                          every_path[w]->name, dd_dtype_name(dt), t == 0 ? "f64le" : "f32le");
                    H5Tclose(want);
                    H5Tclose(ft);
                    H5Dclose(d);
                    H5Fclose(f);
                }
                for (int r = 0; r < nevery; r++)
                    read_file(every_path[r], file, shapes[s][0], shapes[s][1], dt);
                read_directly(file, "C", shapes[s][0], shapes[s][1], dt, 0, 1);
            }
}

/* Complex files as other writers make them, read by every path: members
 * real and imag; big-endian members; chunked and compressed.  Rank 0 writes
 * them with plain HDF5 (C M×N values 0, grp/D N×M values 1, as read_file
 * expects). */
static void complex_foreign(void)
{
    char file[600];
    path_in_dir(file, sizeof file, "cx-foreign.h5");
    const int64_t M = 7, N = 5;
    for (int t = 0; t < 2; t++)
        for (int kind = 0; kind < 3; kind++) {
            dd_dtype dt = t == 0 ? DD_C128 : DD_C64;
            if (g_rank == 0) {
                hid_t le = t == 0 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
                hid_t be = t == 0 ? H5T_IEEE_F64BE : H5T_IEEE_F32BE;
                /* kind 0: real, imag; 1: r, i big-endian; 2: real, imag chunked and compressed */
                hid_t ft = cx_type(kind == 1 ? be : le, kind != 1);
                hid_t f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
                hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
                hsize_t chunk[2] = {2, 3};
                H5Pset_create_intermediate_group(lcpl, 1);
                if (kind == 2) {
                    H5Pset_chunk(dcpl, 2, chunk);
                    H5Pset_deflate(dcpl, 4);
                }
                /* HDF5 converts a compound member by member, by name: memory r, i
                 * into file real, imag needs the memory type of the file's names */
                hid_t wmem = cx_type(t == 0 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, kind != 1);
                for (int k = 0; k < 2; k++) {
                    int64_t b[4] = {0, k ? N : M, 0, k ? M : N};
                    hsize_t dims[2] = {(hsize_t)b[1], (hsize_t)b[3]};
                    void *buf = fill_block(b, dt, k);
                    hid_t s = H5Screate_simple(2, dims, NULL);
                    hid_t d = H5Dcreate2(f, k ? "grp/D" : "C", ft, s, lcpl, dcpl, H5P_DEFAULT);
                    CHECK(d >= 0 && H5Dwrite(d, wmem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0,
                          "writing the foreign complex file %s", file);
                    H5Dclose(d);
                    H5Sclose(s);
                    free(buf);
                }
                H5Tclose(wmem);
                H5Tclose(ft);
                H5Pclose(dcpl);
                H5Pclose(lcpl);
                H5Fclose(f);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            for (int r = 0; r < nevery; r++)
                read_file(every_path[r], file, M, N, dt);
            /* bytes on disk that are the memory's, whatever the names: pread */
            read_directly(file, "C", M, N, dt, 0, kind == 0);
        }
}

/* Compound types that are not complex numbers as dgemm-dist reads them,
 * each refused by name with what is wrong: by the probe and by every read
 * path, the same on every rank. */
typedef struct {
    const char *name;
    const char *words;
} cx_refusal;
static const cx_refusal cx_bad[] = {
    {"three", "it has 3 members (\"r\", \"i\", \"x\")"},
    {"one", "it has 1 member (\"r\")"},
    {"names", "its members are named \"x\" and \"y\""},
    {"halfnames", "its members are named \"r\" and \"imag\""},
    {"mixed", "its members are of mixed types (r is an 8-byte float, i is int64)"},
    {"ints", "its members r and i are int32, not floats"},
    {"sizes", "its members are of different sizes (r is 8 bytes, i 4)"},
    {"formats", "different formats"},
    {"long", "its members are 16-byte floats"},
    {"swapped", "r lies at byte 8 and i at byte 0 of an element, not at 0 and 8"},
    {"padded", "an element is 24 bytes (padded), not 16"},
};
enum { NBAD = sizeof cx_bad / sizeof cx_bad[0] };

static void make_cx_bad(const char *file)
{
    hid_t d8 = H5T_IEEE_F64LE;
    hid_t ld = H5Tcopy(H5T_NATIVE_LDOUBLE); /* numpy's complex256 has two of them on x86-64 */
    hid_t types[NBAD] = {
        compound(24, "r", d8, 0, "i", d8, 8, "x", 16),
        compound(8, "r", d8, 0, NULL, 0, 0, NULL, 0),
        compound(16, "x", d8, 0, "y", d8, 8, NULL, 0),
        compound(16, "r", d8, 0, "imag", d8, 8, NULL, 0),
        compound(16, "r", d8, 0, "i", H5T_STD_I64LE, 8, NULL, 0),
        compound(8, "r", H5T_STD_I32LE, 0, "i", H5T_STD_I32LE, 4, NULL, 0),
        compound(12, "r", d8, 0, "i", H5T_IEEE_F32LE, 8, NULL, 0),
        compound(16, "r", d8, 0, "i", H5T_IEEE_F64BE, 8, NULL, 0),
        compound(32, "r", ld, 0, "i", ld, 16, NULL, 0),
        compound(16, "i", d8, 0, "r", d8, 8, NULL, 0),
        compound(24, "r", d8, 0, "i", d8, 8, NULL, 0),
    };
    fixture fx[NBAD + 1];
    for (int k = 0; k < NBAD; k++)
        fx[k] = (fixture){cx_bad[k].name, 2, {3, 4}, types[k], 0};
    hid_t good = cx_type(d8, 0);
    fx[NBAD] = (fixture){"B", 2, {4, 2}, good, 0};
    make_file(file, fx, NBAD + 1);
    for (int k = 0; k < NBAD; k++)
        H5Tclose(types[k]);
    H5Tclose(good);
    H5Tclose(ld);
}

static void complex_refusals(void)
{
    char file[600];
    path_in_dir(file, sizeof file, "cx-bad.h5");
    if (g_rank == 0)
        make_cx_bad(file);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t M, N, K;
    dd_dtype t;
    dd_err e;
    for (int k = 0; k < NBAD; k++)
        EXPECT_FAIL(file, cx_bad[k].name, "B", "dataset A", "a compound type that is not a complex",
                    cx_bad[k].words, "named r and i (or real and imag)");
    for (int r = 0; r < nevery; r++) {
        dd_io io = {0};
        dd_err_clear(&e);
        int rc = every_path[r]->open_read(&io, MPI_COMM_WORLD, file, &e);
        CHECK(rc == DD_OK, "%s open_read %s: %s", every_path[r]->name, file, e.msg);
        if (rc != DD_OK)
            continue;
        double x[8];
        for (int k = 0; k < NBAD; k++) {
            for (int ti = 0; ti < 2; ti++) {
                dd_err_clear(&e);
                rc = every_path[r]->read_block(&io, cx_bad[k].name, ti ? DD_C64 : DD_C128, 0, 1, 0,
                                               1, x, &e);
                CHECK(rc == DD_EUSAGE && has(&e, "not a complex number") &&
                          has(&e, cx_bad[k].words) && same_everywhere(rc, &e),
                      "%s read of %s: rc %d %s", every_path[r]->name, cx_bad[k].name, rc, e.msg);
            }
        }
        /* a complex dataset asked for as real, and a real type as complex */
        dd_err_clear(&e);
        rc = every_path[r]->read_block(&io, "B", DD_F64, 0, 1, 0, 1, x, &e);
        CHECK(rc != DD_OK && has(&e, "holds c128 values, not f64") && same_everywhere(rc, &e),
              "%s: a complex dataset read as real: %s", every_path[r]->name, e.msg);
        dd_err_clear(&e);
        rc = every_path[r]->read_block(&io, "B", DD_C64, 0, 1, 0, 1, x, &e);
        CHECK(rc != DD_OK && has(&e, "holds c128 values, not c64") && same_everywhere(rc, &e),
              "%s: c128 read as c64: %s", every_path[r]->name, e.msg);
        dd_err_clear(&e);
        rc = every_path[r]->close(&io, &e);
        CHECK(rc == DD_OK, "%s close: %s", every_path[r]->name, e.msg);
    }
}

/* The probe: complex inputs report their type; complex against real,
 * and precisions that differ, are refused by name; --order col and
 * transposes give the shapes; C's input must be of A's type. */
static void complex_probe(void)
{
    char f[600];
    if (g_rank == 0) {
        hid_t c128 = cx_type(H5T_IEEE_F64LE, 0), c64ri = cx_type(H5T_IEEE_F32LE, 1);
        hid_t c64 = cx_type(H5T_IEEE_F32LE, 0), be = cx_type(H5T_IEEE_F64BE, 0);
        const fixture good[] = {{"A", 2, {3, 4}, c128, 0}, {"B", 2, {4, 2}, c128, 0}};
        const fixture good64[] = {{"A", 2, {5, 1}, c64ri, 0}, {"B", 2, {1, 7}, c64, 0}};
        const fixture big[] = {{"A", 2, {3, 4}, be, 0}, {"B", 2, {4, 2}, c128, 0}};
        const fixture realb[] = {{"A", 2, {3, 4}, c128, 0}, {"B", 2, {4, 2}, H5T_IEEE_F64LE, 0}};
        const fixture reala[] = {{"A", 2, {3, 4}, H5T_IEEE_F32LE, 0}, {"B", 2, {4, 2}, c64, 0}};
        const fixture prec[] = {{"A", 2, {3, 4}, c128, 0}, {"B", 2, {4, 2}, c64, 0}};
        /* column-major 3×4 A, 4×2 B and 3×2 C: stored 4×3, 2×4 and 2×3 */
        const fixture col[] = {{"A", 2, {4, 3}, c128, 0},
                               {"B", 2, {2, 4}, c128, 0},
                               {"C", 2, {2, 3}, c128, 0},
                               {"Creal", 2, {2, 3}, H5T_IEEE_F64LE, 0}};
#define MK(name, fx)                                                                               \
    (path_in_dir(f, sizeof f, name), make_file(f, fx, (int)(sizeof fx / sizeof fx[0])))
        MK("cx-good.h5", good);
        MK("cx-good64.h5", good64);
        MK("cx-big.h5", big);
        MK("cx-realb.h5", realb);
        MK("cx-reala.h5", reala);
        MK("cx-prec.h5", prec);
        MK("cx-col.h5", col);
#undef MK
        H5Tclose(c128), H5Tclose(c64ri), H5Tclose(c64), H5Tclose(be);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t M, N, K;
    dd_dtype t;
    dd_err e;
    int rc = probe("cx-good.h5", "A", "B", &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 3 && K == 4 && N == 2 && t == DD_C128, "cx-good.h5: rc %d %s t %d",
          rc, e.msg, (int)t);
    rc = probe("cx-good64.h5", "A", "B", &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 5 && K == 1 && N == 7 && t == DD_C64, "cx-good64.h5: rc %d %s t %d",
          rc, e.msg, (int)t);
    rc = probe("cx-big.h5", "A", "B", &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && t == DD_C128, "cx-big.h5 (big-endian members): rc %d %s", rc, e.msg);
    EXPECT_FAIL("cx-realb.h5", "A", "B", "A is c128 (complex) but B is f64",
                "complex by complex and real by real");
    EXPECT_FAIL("cx-reala.h5", "A", "B", "A is f32 but B is c64 (complex)",
                "complex by complex and real by real");
    EXPECT_FAIL("cx-prec.h5", "A", "B", "A is c128 (complex) but B is c64 (complex)",
                "same element type");

    path_in_dir(f, sizeof f, "cx-col.h5");
    dd_probe_gemm g = {"A", "B", "C", 'N', 'N', 1, 1, 1.0, 0};
    dd_err_clear(&e);
    rc = io_probe_gemm_cx(MPI_COMM_WORLD, f, &g, &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 3 && N == 2 && K == 4 && t == DD_C128 && same_everywhere(rc, &e),
          "cx-col.h5 --order col: rc %d %s M%lld N%lld K%lld", rc, e.msg, (long long)M,
          (long long)N, (long long)K);
    /* the same file read row-major, A and B transposed: op(A) = A^T is 3×4, op(B) = B^T 4×2 */
    dd_probe_gemm gt = {"A", "B", "C", 'T', 'T', 0, 0, 0.0, 0};
    dd_err_clear(&e);
    rc = io_probe_gemm_cx(MPI_COMM_WORLD, f, &gt, &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 3 && N == 2 && K == 4 && t == DD_C128,
          "cx-col.h5 --transa T --transb T: rc %d %s", rc, e.msg);
    dd_probe_gemm gr = {"A", "B", "Creal", 'N', 'N', 1, 1, 2.0, 0};
    dd_err_clear(&e);
    rc = io_probe_gemm_cx(MPI_COMM_WORLD, f, &gr, &M, &N, &K, &t, &e);
    CHECK(rc == DD_EUSAGE && has(&e, "C (\"Creal\" in") &&
              has(&e, "is f64 but A and B are c128 (complex)") && same_everywhere(rc, &e),
          "a real C for complex A and B: rc %d %s", rc, e.msg);
    /* a caller of real matrices only is never handed complex ones */
    dd_probe_gemm greal = {"A", "B", "C", 'N', 'N', 1, 0, 0.0, 0};
    dd_err_clear(&e);
    rc = io_probe_gemm(MPI_COMM_WORLD, f, &greal, &M, &N, &K, &t, &e);
    CHECK(rc == DD_EUSAGE && has(&e, "are c128 (complex): this program multiplies real matrices") &&
              same_everywhere(rc, &e),
          "complex inputs to a real-only caller: rc %d %s", rc, e.msg);
}

static void suite_complex(void)
{
    complex_roundtrips();
    complex_foreign();
    complex_refusals();
    complex_probe();
}

/* ---- h5py's files, and ours read by h5py (tests/io/h5py_complex.sh) ------------------------- */

/* What tests/io/h5py_complex.py writes into DIR/h5py.h5: name, shape, type,
 * and the values' `which`. */
static const struct {
    const char *name;
    int64_t M, N;
    dd_dtype t;
    int which;
    int pread; /* the direct path reads it with pread, not through HDF5 */
} from_h5py[] = {
    {"c128", 7, 5, DD_C128, 0, 1},           {"c64", 13, 3, DD_C64, 1, 1},
    {"c128_realimag", 2, 9, DD_C128, 2, 1},  {"c64_realimag", 1, 1, DD_C64, 3, 1},
    {"c128_bigendian", 5, 4, DD_C128, 0, 0}, {"c64_chunked_gzip", 11, 6, DD_C64, 1, 0},
};

static void suite_h5py_read(const char *dir)
{
    char file[600];
    snprintf(file, sizeof file, "%s/h5py.h5", dir);
    for (int r = 0; r < nevery; r++) {
        dd_io io = {0};
        dd_err e;
        dd_err_clear(&e);
        int rc = every_path[r]->open_read(&io, MPI_COMM_WORLD, file, &e);
        CHECK(rc == DD_OK, "%s open_read %s: %s", every_path[r]->name, file, e.msg);
        if (rc != DD_OK)
            continue;
        for (size_t k = 0; k < sizeof from_h5py / sizeof from_h5py[0]; k++)
            for (int rcut = 0; rcut < NCUTS; rcut++) {
                int64_t b[4];
                dd_dtype t = from_h5py[k].t;
                cut(rcut, from_h5py[k].M, from_h5py[k].N, b);
                size_t n = (size_t)(b[1] * b[3]);
                void *buf = malloc(n ? n * dd_elsize(t) : 1);
                memset(buf, 0xff, n * dd_elsize(t));
                rc = every_path[r]->read_block(&io, from_h5py[k].name, t, b[0], b[1], b[2], b[3],
                                               n ? buf : NULL, &e);
                int64_t bad = rc == DD_OK ? check_block(buf, b, t, from_h5py[k].which) : 0;
                CHECK(rc == DD_OK && bad == 0, "%s read h5py's %s cut %s: rc %d %s, %lld wrong",
                      every_path[r]->name, from_h5py[k].name, cut_name[rcut], rc, e.msg,
                      (long long)bad);
                free(buf);
            }
        rc = every_path[r]->close(&io, &e);
        CHECK(rc == DD_OK, "%s close: %s", every_path[r]->name, e.msg);
    }
    for (size_t k = 0; k < sizeof from_h5py / sizeof from_h5py[0]; k++)
        read_directly(file, from_h5py[k].name, from_h5py[k].M, from_h5py[k].N, from_h5py[k].t,
                      from_h5py[k].which, from_h5py[k].pread);
    /* the probe of h5py's A (3×4) and B (4×2), and of its column-major
     * pair (a 3×4 A stored 4×3, a 4×2 B stored 2×4) */
    int64_t M, N, K;
    dd_dtype t;
    dd_err e;
    dd_probe_gemm g = {"A", "B", "C", 'N', 'N', 0, 0, 0.0, 0};
    dd_err_clear(&e);
    int rc = io_probe_gemm_cx(MPI_COMM_WORLD, file, &g, &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 3 && N == 2 && K == 4 && t == DD_C128, "probe h5py's A, B: rc %d %s",
          rc, e.msg);
    dd_probe_gemm gc = {"colA", "colB", "C", 'N', 'N', 1, 0, 0.0, 0};
    dd_err_clear(&e);
    rc = io_probe_gemm_cx(MPI_COMM_WORLD, file, &gc, &M, &N, &K, &t, &e);
    CHECK(rc == DD_OK && M == 3 && N == 2 && K == 4 && t == DD_C64,
          "probe h5py's column-major pair: rc %d %s M%lld N%lld K%lld", rc, e.msg, (long long)M,
          (long long)N, (long long)K);
}

/* Files every write path writes for tests/io/h5py_complex.py to read:
 * DIR/<path>-c128.h5 (C 7×5, grp/D 5×7) and DIR/<path>-c64.h5 (C 13×3,
 * grp/D 3×13), values as value_part's (C which 0, D which 1). */
static void suite_h5py_write(const char *dir)
{
    for (int w = 0; w < nevery; w++)
        for (int t = 0; t < 2; t++) {
            char file[600];
            snprintf(file, sizeof file, "%s/%s-%s.h5", dir, every_path[w]->name,
                     t == 0 ? "c128" : "c64");
            write_file(every_path[w], file, t == 0 ? 7 : 13, t == 0 ? 5 : 3,
                       t == 0 ? DD_C128 : DD_C64, (w + t) % NCUTS);
        }
}

/* ---- output discipline ------------------------------------------------------------------- */

static void suite_output(void)
{
    char in[600], out[600], alt[1024];
    dd_output o;
    dd_err e;
    path_in_dir(in, sizeof in, "in.h5");
    path_in_dir(out, sizeof out, "out.h5");
    if (g_rank == 0) {
        hid_t f = H5Fcreate(in, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        H5Fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* A fresh output: a hidden private directory beside it holding the
     * temporary, the same on every rank, with an unpredictable name. */
    dd_err_clear(&e);
    int rc = io_output_prepare(MPI_COMM_WORLD, out, in, 0, &o, &e);
    const char *tmp = o.tmp;
    char want[700];
    snprintf(want, sizeof want, "%s/.out.h5.tmp.", g_dir);
    CHECK(rc == DD_OK && strncmp(tmp, want, strlen(want)) == 0, "prepare: rc %d %s tmp %s", rc,
          e.msg, tmp);
    struct stat dst;
    CHECK(stat(o.dir, &dst) == 0 && S_ISDIR(dst.st_mode) && (dst.st_mode & 077) == 0,
          "the temporary directory %s is not private", o.dir);
    snprintf(alt, sizeof alt, "%s%ld/out.h5", want, (long)getpid());
    CHECK(strcmp(tmp, alt) != 0, "tmp %s is named after a pid, predictable", tmp);
    dd_err as_err;
    memcpy(as_err.msg, tmp, sizeof as_err.msg - 1);
    as_err.msg[sizeof as_err.msg - 1] = '\0';
    CHECK(same_everywhere(DD_EFAIL, &as_err), "ranks got different temporary names");

    /* Write it through the I/O layer, commit, read back under the final name. */
    const dd_io_ops *p = io_select("auto");
    dd_io io = {0};
    const char *names[1] = {"C"};
    const int64_t dims[1][2] = {{4, 3}};
    int64_t b[4];
    cut(CUT_ROWS, 4, 3, b);
    void *buf = fill_block(b, DD_F64, 0);
    rc = p->create(&io, MPI_COMM_WORLD, tmp, 1, names, dims, DD_F64, &e);
    if (rc == DD_OK)
        rc = p->write_block(&io, "C", DD_F64, b[0], b[1], b[2], b[3], buf, &e);
    if (rc == DD_OK)
        rc = p->close(&io, &e);
    CHECK(rc == DD_OK, "writing the temporary: %s", e.msg);
    if (g_rank == 0) /* elsewhere rank 0 may already be renaming */
        CHECK(!exists(out), "output visible before commit");
    rc = io_output_commit(MPI_COMM_WORLD, &o, &e);
    CHECK(rc == DD_OK && exists(out) && !exists(tmp) && !exists(o.dir) && same_everywhere(rc, &e),
          "commit: %s", e.msg);
    memset(buf, 0, (size_t)(b[1] * b[3]) * 8);
    rc = p->open_read(&io, MPI_COMM_WORLD, out, &e);
    if (rc == DD_OK)
        rc = p->read_block(&io, "C", DD_F64, b[0], b[1], b[2], b[3], buf, &e);
    if (rc == DD_OK)
        rc = p->close(&io, &e);
    CHECK(rc == DD_OK && check_block(buf, b, DD_F64, 0) == 0, "reading the output: %s", e.msg);
    free(buf);

    /* Existing output: refused without --force, accepted with it. */
    dd_err_clear(&e);
    rc = io_output_prepare(MPI_COMM_WORLD, out, in, 0, &o, &e);
    CHECK(rc != DD_OK && has(&e, "output ") &&
              has(&e, "out.h5 exists; pass --force to replace it") && !o.active &&
              same_everywhere(rc, &e),
          "existing output without force: %s", e.msg);
    dd_err_clear(&e);
    rc = io_output_prepare(MPI_COMM_WORLD, out, in, 1, &o, &e);
    CHECK(rc == DD_OK && o.active && same_everywhere(rc, &e), "existing output with force: %s",
          e.msg);

    /* Abort removes the temporary and its directory, and never fails (a
     * missing one included). */
    if (g_rank == 0)
        fclose(fopen(o.tmp, "w"));
    MPI_Barrier(MPI_COMM_WORLD);
    dd_output kept = o;
    io_output_abort(MPI_COMM_WORLD, &o);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!exists(kept.tmp) && !exists(kept.dir) && exists(out),
          "abort left %s or removed the output", kept.tmp);
    io_output_abort(MPI_COMM_WORLD, &o);
    io_output_abort(MPI_COMM_WORLD, NULL);

    /* Commit of a missing temporary fails, the same on every rank. */
    dd_err_clear(&e);
    kept.active = 1;
    rc = io_output_commit(MPI_COMM_WORLD, &kept, &e);
    CHECK(rc != DD_OK && has(&e, "cannot rename") && same_everywhere(rc, &e),
          "commit of nothing: %s", e.msg);

    /* The input is never the output, however it is spelled, --force or not. */
    snprintf(alt, sizeof alt, "%s/./in.h5", g_dir);
    for (int force = 0; force < 2; force++) {
        dd_err_clear(&e);
        rc = io_output_prepare(MPI_COMM_WORLD, in, in, force, &o, &e);
        CHECK(rc != DD_OK && has(&e, "is the input file") && same_everywhere(rc, &e),
              "input as output: %s", e.msg);
        dd_err_clear(&e);
        rc = io_output_prepare(MPI_COMM_WORLD, alt, in, force, &o, &e);
        CHECK(rc != DD_OK && has(&e, "is the input file"), "input as output (%s): %s", alt, e.msg);
    }

    /* Directories: missing, not writable; and a bare file name. */
    dd_err_clear(&e);
    path_in_dir(alt, sizeof alt, "nodir/c.h5");
    rc = io_output_prepare(MPI_COMM_WORLD, alt, in, 1, &o, &e);
    CHECK(rc != DD_OK && has(&e, "nodir") && has(&e, "does not exist") && same_everywhere(rc, &e),
          "missing directory: %s", e.msg);
    if (geteuid() != 0) {
        path_in_dir(alt, sizeof alt, "ro");
        if (g_rank == 0)
            mkdir(alt, 0555);
        MPI_Barrier(MPI_COMM_WORLD);
        path_in_dir(alt, sizeof alt, "ro/c.h5");
        dd_err_clear(&e);
        rc = io_output_prepare(MPI_COMM_WORLD, alt, in, 1, &o, &e);
        CHECK(rc != DD_OK && has(&e, "not writable"), "read-only directory: %s", e.msg);
    }
    char bare[128];
    snprintf(bare, sizeof bare, "dd-test-io-%ld.h5", (long)getpid());
    MPI_Bcast(bare, sizeof bare, MPI_CHAR, 0, MPI_COMM_WORLD);
    dd_err_clear(&e);
    rc = io_output_prepare(MPI_COMM_WORLD, bare, NULL, 0, &o, &e);
    snprintf(want, sizeof want, ".%s.tmp.", bare);
    CHECK(rc == DD_OK && strncmp(o.tmp, want, strlen(want)) == 0, "bare name: %s tmp %s", e.msg,
          o.tmp);
    io_output_abort(MPI_COMM_WORLD, &o);
    static char huge[6000];
    memset(huge, 'x', sizeof huge - 1);
    dd_err_clear(&e);
    rc = io_output_prepare(MPI_COMM_WORLD, huge, in, 1, &o, &e);
    CHECK(rc != DD_OK && has(&e, "too long") && same_everywhere(rc, &e), "a path too long: %s",
          e.msg);
}

static void suite_select(void)
{
    CHECK(io_select("independent") == &dd_io_independent, "independent");
    CHECK(io_select("bogus") == NULL && io_select("") == NULL, "unknown names give NULL");
    CHECK(io_select("auto") == &dd_io_direct && io_select(NULL) == &dd_io_direct,
          "auto is direct, with serial or parallel HDF5");
    CHECK(io_select("direct") == &dd_io_direct, "direct");
#ifdef DD_HAVE_PHDF5
    CHECK(io_select("collective") == &dd_io_collective, "collective");
#else
    CHECK(io_select("collective") == NULL, "collective without parallel HDF5");
#endif
}

/* ---- scratch directory -------------------------------------------------------------------- */

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, ent->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    io_quiet();
    const char *suite = argc > 1 ? argv[1] : "";
    paths[npaths++] = &dd_io_independent;
#ifdef DD_HAVE_PHDF5
    paths[npaths++] = &dd_io_collective;
#endif
    for (int p = 0; p < npaths; p++)
        every_path[nevery++] = paths[p];
    every_path[nevery++] = &dd_io_direct;
    if (g_rank == 0) {
        const char *base = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
        snprintf(g_dir, sizeof g_dir, "%s/dd-test-io.XXXXXX", base);
        if (mkdtemp(g_dir) == NULL) {
            fprintf(stderr, "test-io: cannot make a scratch directory under %s\n", base);
            g_dir[0] = '\0';
        }
    }
    MPI_Bcast(g_dir, sizeof g_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (g_dir[0] == '\0') {
        MPI_Finalize();
        return 1;
    }

    suite_select();
    if (strcmp(suite, "roundtrip") == 0 && argc > 2)
        suite_roundtrip(argv[2]);
    else if (strcmp(suite, "probe") == 0)
        suite_probe();
    else if (strcmp(suite, "output") == 0)
        suite_output();
    else if (strcmp(suite, "complex") == 0)
        suite_complex();
    else if (strcmp(suite, "h5py-read") == 0 && argc > 2)
        suite_h5py_read(argv[2]);
    else if (strcmp(suite, "h5py-write") == 0 && argc > 2)
        suite_h5py_write(argv[2]);
    else {
        if (g_rank == 0)
            fprintf(stderr, "usage: test-io roundtrip independent|collective | probe | output | "
                            "complex | h5py-read DIR | h5py-write DIR\n");
        g_fail++;
    }

    /* Every file, dataset, group and attribute the layer opened is closed. */
    ssize_t open_ids = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    CHECK(open_ids == 0, "%zd HDF5 objects left open", open_ids);
    int fails = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        if (fails == 0 && !getenv("DD_TEST_KEEP"))
            remove_tree(g_dir);
        printf("test-io %s%s%s, %d ranks: %s", suite, argc > 2 ? " " : "", argc > 2 ? argv[2] : "",
               g_size, fails ? "FAILED" : "passed");
        if (fails)
            printf(" (%d failed checks; files kept in %s)", fails, g_dir);
        printf("\n");
    }
    MPI_Finalize();
    return fails ? 1 : 0;
}
