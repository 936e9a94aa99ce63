/* test_io_direct.c — the "direct" I/O path (io/io_direct.c) under MPI.
 *
 *   mpirun -n 3 test-io-direct roundtrip|fallback|refuse|threads
 *
 * roundtrip: odd shapes (f64, f32) cut by rows, columns, a grid, or all on
 * one rank, written by direct and read by independent and direct, and
 * written by independent and read by direct, bit for bit; rank 0's
 * attributes; complex128 and complex64 cut by rows and by columns.
 * fallback: chunked, gzip, big-endian and unallocated datasets (plain HDF5)
 * read right, and so does a contiguous one behind a user block; real and
 * complex (the gzip one with members real, imag).
 * refuse: bad requests, directions and DD_IO_THREADS get a message; one
 * rank's bad request fails that rank alone, and nobody hangs.
 * threads: DD_IO_THREADS=1, 4 and 3 write identical files and read back. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* nftw */
#endif

#include <fcntl.h>
#include <ftw.h>
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

/* A refusal, agreed on every rank, whose message holds `words`. */
#define REFUSED(rc, e, words)                                                                      \
    do {                                                                                           \
        int same_ = same_everywhere(rc, &(e));                                                     \
        CHECK((rc) != DD_OK && strstr((e).msg, words) && same_, "want \"%s\", got rc %d: %s",      \
              words, rc, (e).msg);                                                                 \
    } while (0)

static void path_in_dir(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", g_dir, name);
}

static void split(int64_t n, int parts, int i, int64_t *start, int64_t *len)
{
    int64_t base = n / parts, rem = n % parts;
    *start = i * base + (i < rem ? i : rem);
    *len = base + (i < rem ? 1 : 0);
}

enum { CUT_ROWS, CUT_COLS, CUT_GRID, CUT_FIRST, NCUTS };
static const char *cut_name[NCUTS] = {"rows", "cols", "grid", "first-rank-all"};

/* This rank's block {row0, nrows, col0, ncols} of an M×N matrix. */
static void cut(int kind, int64_t M, int64_t N, int64_t b[4])
{
    int P = 1;
    for (int p = 1; p * p <= g_size; p++)
        if (g_size % p == 0)
            P = p;
    int Q = g_size / P;
    b[0] = 0, b[1] = M, b[2] = 0, b[3] = N;
    if (kind == CUT_ROWS)
        split(M, g_size, g_rank, &b[0], &b[1]);
    else if (kind == CUT_COLS)
        split(N, g_size, g_rank, &b[2], &b[3]);
    else if (kind == CUT_GRID) {
        split(M, P, g_rank / Q, &b[0], &b[1]);
        split(N, Q, g_rank % Q, &b[2], &b[3]);
    } else if (g_rank != 0)
        b[1] = 0;
}

/* Exact in f32 as well as f64 for the shapes used here (below 2^24). */
static double value(int64_t i, int64_t j, int which)
{
    return (double)(i * 2048 + j) + 0.5 + which * 0.25;
}

/* Fills a block with the known values, or counts its elements that differ
 * from them; `which` < 0: zeros.  A complex element's real part is the
 * value v, its imaginary part -(v + 1). */
static int64_t known(void *buf, const int64_t b[4], dd_dtype t, int which, int fill)
{
    int64_t bad = 0;
    int parts = dd_dtype_complex(t) ? 2 : 1, f64 = dd_dtype_real(t) == DD_F64;
    for (int64_t i = 0; i < b[1]; i++)
        for (int64_t j = 0; j < b[3]; j++)
            for (int p = 0; p < parts; p++) {
                double v = which < 0 ? 0.0 : value(b[0] + i, b[2] + j, which);
                v = p && which >= 0 ? -(v + 1) : v;
                size_t k = (size_t)(i * b[3] + j) * (size_t)parts + (size_t)p;
                if (fill && f64)
                    ((double *)buf)[k] = v;
                else if (fill)
                    ((float *)buf)[k] = (float)v;
                else
                    bad += (f64 ? ((double *)buf)[k] : (double)((float *)buf)[k]) != v;
            }
    return bad;
}

/* A complex element of two `part` floats, members r, i (or real, imag). */
static hid_t cx_type(hid_t part, int realimag)
{
    size_t es = H5Tget_size(part);
    hid_t t = H5Tcreate(H5T_COMPOUND, 2 * es);
    CHECK(t >= 0 && H5Tinsert(t, realimag ? "real" : "r", 0, part) >= 0 &&
              H5Tinsert(t, realimag ? "imag" : "i", es, part) >= 0,
          "making a complex type");
    return t;
}

static void *fill_block(const int64_t b[4], dd_dtype t, int which)
{
    size_t n = (size_t)(b[1] * b[3]);
    void *buf = malloc(n ? n * dd_elsize(t) : 1);
    known(buf, b, t, which, 1);
    return buf;
}

static const char *names[2] = {"C", "grp/D"};

/* Writes C (M×N, values 0) and grp/D (N×M, values 1) cut by `wcut`, and attributes. */
static void write_file(const dd_io_ops *w, const char *file, int64_t M, int64_t N, dd_dtype t,
                       int wcut)
{
    dd_io io = {0};
    dd_err e;
    dd_err_clear(&e);
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
    dd_attr attrs[2] = {{.key = "tool", .kind = DD_ATTR_STR, .s = "dgemm-dist"},
                        {.key = "ranks", .kind = DD_ATTR_I64, .i = 42 + g_rank}};
    rc = w->set_attrs(&io, "C", attrs, 2, &e);
    CHECK(rc == DD_OK, "%s set_attrs: %s", w->name, e.msg);
    rc = w->close(&io, &e);
    CHECK(rc == DD_OK && io.impl == NULL, "%s close after writing: %s", w->name, e.msg);
    if (g_rank != 0 || rc != DD_OK)
        return;
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "C", H5P_DEFAULT);
    hid_t a = H5Aopen(d, "ranks", H5P_DEFAULT);
    int64_t n = 0; /* rank 0's value */
    CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_INT64, &n) >= 0 && n == 42, "attribute ranks = %lld",
          (long long)n);
    H5Aclose(a);
    H5Dclose(d);
    H5Fclose(f);
}

/* Reads datasets names[0..nd) in every cutting and compares with values
 * which[k] (-1: zeros). */
static void read_file(const dd_io_ops *r, const char *file, const char *const *dn, int nd,
                      const int64_t (*dims)[2], const int *which, dd_dtype t)
{
    dd_io io = {0};
    dd_err e;
    dd_err_clear(&e);
    int rc = r->open_read(&io, MPI_COMM_WORLD, file, &e);
    CHECK(rc == DD_OK, "%s open_read %s: %s", r->name, file, e.msg);
    if (rc != DD_OK)
        return;
    for (int rcut = 0; rcut < NCUTS; rcut++)
        for (int k = 0; k < nd; k++) {
            int64_t b[4];
            cut(rcut, dims[k][0], dims[k][1], b);
            size_t n = (size_t)(b[1] * b[3]);
            void *buf = malloc(n ? n * dd_elsize(t) : 1);
            memset(buf, 0xff, n * dd_elsize(t)); /* NaN everywhere */
            rc = r->read_block(&io, dn[k], t, b[0], b[1], b[2], b[3], n ? buf : NULL, &e);
            CHECK(rc == DD_OK, "%s read %s cut %s: %s", r->name, dn[k], cut_name[rcut], e.msg);
            int64_t bad = rc == DD_OK ? known(buf, b, t, which[k], 0) : 0;
            CHECK(bad == 0, "%s read %s of %s (%lldx%lld %s) cut %s: %lld wrong values", r->name,
                  dn[k], file, (long long)dims[k][0], (long long)dims[k][1], dd_dtype_name(t),
                  cut_name[rcut], (long long)bad);
            free(buf);
        }
    rc = r->close(&io, &e);
    CHECK(rc == DD_OK, "%s close after reading: %s", r->name, e.msg);
}

static void suite_roundtrip(void)
{
    setenv("DD_IO_THREADS", "3", 1); /* shares that end mid-row */
    const int64_t shapes[][2] = {{7, 5}, {2, 9}, {1, 1}, {13, 3}, {1201, 1103}};
    const int which[2] = {0, 1};
    CHECK(io_select("direct") == &dd_io_direct, "io_select(\"direct\")");
    char file[600];
    path_in_dir(file, sizeof file, "roundtrip.h5");
    const dd_dtype types[4] = {DD_F64, DD_F32, DD_C128, DD_C64};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (int wcut = 0; wcut < NCUTS; wcut++) {
                dd_dtype dt = types[t];
                /* complex: by rows (whole rows, shares that end mid-row) and by
                 * columns (parts of rows) */
                if (dd_dtype_complex(dt) && wcut != CUT_ROWS && wcut != CUT_COLS)
                    continue;
                int64_t M = shapes[s][0], N = shapes[s][1];
                const int64_t dims[2][2] = {{M, N}, {N, M}};
                write_file(&dd_io_direct, file, M, N, dt, wcut);
                read_file(&dd_io_independent, file, names, 2, dims, which, dt);
                read_file(&dd_io_direct, file, names, 2, dims, which, dt);
                write_file(&dd_io_independent, file, M, N, dt, wcut);
                read_file(&dd_io_direct, file, names, 2, dims, which, dt);
            }
}

/* Rank 0 writes dataset `name` (values `which`, or none when which < 0) with plain HDF5. */
static void h5_dset(hid_t f, const char *name, hid_t ftype, hid_t dcpl, int64_t M, int64_t N,
                    dd_dtype t, int which)
{
    hsize_t hd[2] = {(hsize_t)M, (hsize_t)N};
    hid_t s = H5Screate_simple(2, hd, NULL);
    hid_t d = H5Dcreate2(f, name, ftype, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int64_t b[4] = {0, M, 0, N};
    void *buf = fill_block(b, t, which < 0 ? 0 : which);
    hid_t part = dd_dtype_real(t) == DD_F64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
    /* complex: the memory type names its members as the file does */
    hid_t mem = dd_dtype_complex(t) ? cx_type(part, H5Tget_member_index(ftype, "real") >= 0)
                                    : H5Tcopy(part);
    CHECK(d >= 0 && (which < 0 || H5Dwrite(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0),
          "making dataset %s", name);
    H5Tclose(mem);
    free(buf);
    H5Dclose(d);
    H5Sclose(s);
}

static void suite_fallback(void)
{
    setenv("DD_IO_THREADS", "4", 1);
    char file[600], ub[600];
    path_in_dir(file, sizeof file, "foreign.h5");
    path_in_dir(ub, sizeof ub, "userblock.h5");
    const char *dn[5] = {"chunked", "gzip", "bigendian", "unallocated", "plain"};
    const int which[5] = {0, 1, 2, -1, 3};
    const int64_t M = 301, N = 203;
    const int64_t dims[5][2] = {{M, N}, {N, M}, {M, N}, {M, N}, {N, M}};
    const dd_dtype types[4] = {DD_F64, DD_F32, DD_C128, DD_C64};
    for (int t = 0; t < 4; t++) {
        dd_dtype dt = types[t];
        if (g_rank == 0) {
            hid_t lep = dd_dtype_real(dt) == DD_F64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
            hid_t bep = dd_dtype_real(dt) == DD_F64 ? H5T_IEEE_F64BE : H5T_IEEE_F32BE;
            /* complex: members r, i; the gzip one real, imag */
            int cx = dd_dtype_complex(dt);
            hid_t le = cx ? cx_type(lep, 0) : H5Tcopy(lep),
                  be = cx ? cx_type(bep, 0) : H5Tcopy(bep);
            hid_t le2 = cx ? cx_type(lep, 1) : H5Tcopy(lep);
            hid_t chunked = H5Pcreate(H5P_DATASET_CREATE), gzip = H5Pcreate(H5P_DATASET_CREATE);
            hid_t late = H5Pcreate(H5P_DATASET_CREATE), fcpl = H5Pcreate(H5P_FILE_CREATE);
            hsize_t c1[2] = {7, 11}, c2[2] = {16, 16};
            H5Pset_chunk(chunked, 2, c1);
            H5Pset_chunk(gzip, 2, c2);
            H5Pset_deflate(gzip, 6);
            H5Pset_alloc_time(late, H5D_ALLOC_TIME_LATE);
            H5Pset_userblock(fcpl, 4096);
            hid_t f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
            h5_dset(f, dn[0], le, chunked, M, N, dt, 0);
            h5_dset(f, dn[1], le2, gzip, N, M, dt, 1);
            h5_dset(f, dn[2], be, H5P_DEFAULT, M, N, dt, 2);
            h5_dset(f, dn[3], le, late, M, N, dt, -1);
            h5_dset(f, dn[4], le, H5P_DEFAULT, N, M, dt, 3);
            CHECK(H5Fclose(f) >= 0, "closing %s", file);
            f = H5Fcreate(ub, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
            h5_dset(f, dn[4], le, H5P_DEFAULT, N, M, dt, 3);
            CHECK(H5Fclose(f) >= 0, "closing %s", ub);
            H5Pclose(chunked), H5Pclose(gzip), H5Pclose(late), H5Pclose(fcpl);
            H5Tclose(le), H5Tclose(be), H5Tclose(le2);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        read_file(&dd_io_direct, file, dn, 5, dims, which, dt);
        read_file(&dd_io_direct, ub, dn + 4, 1, dims + 4, which + 4, dt);
    }
}

/* Requests refused on every rank alike, reading or writing a 7×5 f64 "C". */
static void refuse_requests(dd_io *io, int writing)
{
    static const struct {
        const char *ds;
        dd_dtype t;
        int64_t b[4];
        const char *words;
    } bad[] = {
        {"C", DD_F32, {0, 1, 0, 1}, "holds f64 values, not f32"},
        {"C", DD_F64, {6, 2, 0, 1}, "rows 6+2, columns 0+1 lies outside dataset \"C\" (7×5)"},
        {"C", DD_F64, {0, 1, 4, 2}, "outside"},
        {"C", DD_F64, {-1, 1, 0, 1}, "outside"},
        {"C", DD_F64, {0, 1, 0, -1}, "outside"},
        {"nope", DD_F64, {0, 1, 0, 1}, "\"nope\""},
        {"C", DD_F64, {0, 1, 0, 1}, "no buffer"},
    };
    double x[4] = {0};
    dd_err e;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const int64_t *b = bad[i].b;
        double *buf = strcmp(bad[i].words, "no buffer") ? x : NULL;
        dd_err_clear(&e);
        int rc =
            writing
                ? dd_io_direct.write_block(io, bad[i].ds, bad[i].t, b[0], b[1], b[2], b[3], buf, &e)
                : dd_io_direct.read_block(io, bad[i].ds, bad[i].t, b[0], b[1], b[2], b[3], buf, &e);
        REFUSED(rc, e, bad[i].words);
    }
    dd_err_clear(&e);
    int rc = writing ? dd_io_direct.read_block(io, "C", DD_F64, 0, 1, 0, 1, x, &e)
                     : dd_io_direct.write_block(io, "C", DD_F64, 0, 1, 0, 1, x, &e);
    REFUSED(rc, e,
            writing ? "created for writing, not opened for reading"
                    : "opened for reading, not writing");
    dd_attr a = {.key = "k", .kind = DD_ATTR_I64, .i = 1};
    dd_err_clear(&e);
    rc = dd_io_direct.set_attrs(io, writing ? "E" : "C", &a, 1, &e);
    REFUSED(rc, e, writing ? "\"E\" was not created" : "opened for reading, not writing");
}

static void refuse_reads(const char *file)
{
    dd_io io = {0};
    dd_err e;
    double x[4] = {0};
    dd_err_clear(&e);
    int rc = dd_io_direct.open_read(&io, MPI_COMM_WORLD, file, &e);
    CHECK(rc == DD_OK, "open_read: %s", e.msg);
    if (rc != DD_OK)
        return;
    refuse_requests(&io, 0);
    /* Only the last rank asks out of range: it alone fails, as on the independent path. */
    int last = g_rank == g_size - 1;
    dd_err_clear(&e);
    rc = dd_io_direct.read_block(&io, "C", DD_F64, 0, last ? 8 : 1, 0, 1, x, &e);
    CHECK(last ? rc != DD_OK && strstr(e.msg, "outside") : rc == DD_OK && x[0] == value(0, 0, 0),
          "one rank out of range: rc %d %s", rc, e.msg);
    rc = dd_io_direct.close(&io, &e);
    CHECK(rc == DD_OK && io.impl == NULL, "close: %s", e.msg);
    rc = dd_io_direct.close(&io, &e);
    CHECK(rc == DD_OK, "close of a closed handle: %s", e.msg);
}

static void suite_refuse(void)
{
    char file[600];
    dd_io io = {0};
    dd_err e;
    const char *one[1] = {"C"};
    const int64_t dims[1][2] = {{7, 5}};
    path_in_dir(file, sizeof file, "missing.h5");
    dd_err_clear(&e);
    int rc = dd_io_direct.open_read(&io, MPI_COMM_WORLD, file, &e);
    REFUSED(rc, e, "missing.h5");
    CHECK(io.impl == NULL, "a failed open left a handle");
    path_in_dir(file, sizeof file, "no-such-dir/out.h5");
    dd_err_clear(&e);
    rc = dd_io_direct.create(&io, MPI_COMM_WORLD, file, 1, one, dims, DD_F64, &e);
    REFUSED(rc, e, "no-such-dir/out.h5");
    const char *bad[3] = {"0", "four", "999"};
    path_in_dir(file, sizeof file, "refuse.h5");
    for (int i = 0; i < 3; i++) {
        setenv("DD_IO_THREADS", bad[i], 1);
        dd_err_clear(&e);
        rc = i == 0 ? dd_io_direct.open_read(&io, MPI_COMM_WORLD, file, &e)
                    : dd_io_direct.create(&io, MPI_COMM_WORLD, file, 1, one, dims, DD_F64, &e);
        REFUSED(rc, e, "DD_IO_THREADS");
        CHECK(io.impl == NULL, "a refused open or create left a handle");
    }
    unsetenv("DD_IO_THREADS");
    dd_err_clear(&e);
    rc = dd_io_direct.create(&io, MPI_COMM_WORLD, file, 1, one, dims, DD_F64, &e);
    CHECK(rc == DD_OK, "create: %s", e.msg);
    if (rc != DD_OK)
        return;
    refuse_requests(&io, 1);
    /* Rank 0 writes the matrix; the last rank (also) asks out of range and fails alone. */
    int64_t b[4] = {0, g_rank == 0 ? 7 : 0, 0, 5};
    void *buf = fill_block(b, DD_F64, 0);
    int last = g_rank == g_size - 1;
    dd_err_clear(&e);
    rc = dd_io_direct.write_block(&io, "C", DD_F64, 0, b[1], 0, 5, buf, &e);
    CHECK(rc == DD_OK, "write: %s", e.msg);
    rc = dd_io_direct.write_block(&io, "C", DD_F64, 0, last ? 9 : 0, 0, 5, buf, &e);
    CHECK(last ? rc != DD_OK && strstr(e.msg, "outside") : rc == DD_OK,
          "one rank writing out of range: rc %d %s", rc, e.msg);
    free(buf);
    dd_err_clear(&e);
    rc = dd_io_direct.close(&io, &e);
    CHECK(rc == DD_OK && io.impl == NULL, "close: %s", e.msg);
    refuse_reads(file);
}

/* Rank 0: the raw bytes of a file's data (every dataset's, in order); *size: the file's. */
static char *raw_data(const char *file, int nd, size_t *len, off_t *size)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    int fd = open(file, O_RDONLY), ok = f >= 0 && fd >= 0;
    char *out = NULL;
    for (int k = 0; k < nd && ok; k++) {
        hid_t d = H5Dopen2(f, names[k], H5P_DEFAULT);
        haddr_t off = H5Dget_offset(d);
        size_t n = (size_t)H5Dget_storage_size(d);
        char *p = realloc(out, *len + n + 1);
        out = p ? p : out;
        ok =
            d >= 0 && off != HADDR_UNDEF && p && pread(fd, out + *len, n, (off_t)off) == (ssize_t)n;
        *len += n;
        H5Dclose(d);
    }
    struct stat st;
    *size = ok && fstat(fd, &st) == 0 ? st.st_size : -1;
    CHECK(*size > 0, "cannot read the data of %s", file);
    close(fd);
    H5Fclose(f);
    return out;
}

static void suite_threads(void)
{
    const char *counts[3] = {"1", "4", "3"};
    const int64_t M = 1501, N = 997; /* 12 MB of f64: shares of 1 MiB and more */
    const int64_t dims[2][2] = {{M, N}, {N, M}};
    const int which[2] = {0, 1};
    char file[3][600];
    char *raw[3] = {NULL, NULL, NULL};
    size_t len[3] = {0, 0, 0};
    off_t size[3] = {-1, -1, -1};
    for (int c = 0; c < 3; c++) {
        snprintf(file[c], sizeof file[c], "%s/threads-%s.h5", g_dir, counts[c]);
        setenv("DD_IO_THREADS", counts[c], 1);
        write_file(&dd_io_direct, file[c], M, N, DD_F64, c == 2 ? CUT_COLS : CUT_GRID);
        read_file(&dd_io_direct, file[c], names, 2, dims, which, DD_F64);
        if (g_rank == 0)
            raw[c] = raw_data(file[c], 2, &len[c], &size[c]);
    }
    if (g_rank == 0)
        for (int c = 1; c < 3; c++)
            CHECK(size[c] == size[0] && size[0] > 0 && len[c] == len[0] &&
                      memcmp(raw[c], raw[0], len[0]) == 0,
                  "DD_IO_THREADS=%s and =1 wrote different files", counts[c]);
    for (int c = 0; c < 3; c++)
        free(raw[c]);
    unsetenv("DD_IO_THREADS");
}

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    io_quiet();
    const char *suite = argc > 1 ? argv[1] : "";
    if (g_rank == 0) {
        const char *base = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
        snprintf(g_dir, sizeof g_dir, "%s/dd-test-io-direct.XXXXXX", base);
        if (mkdtemp(g_dir) == NULL) {
            fprintf(stderr, "test-io-direct: cannot make a scratch directory under %s\n", base);
            g_dir[0] = '\0';
        }
    }
    MPI_Bcast(g_dir, sizeof g_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (g_dir[0] == '\0')
        return MPI_Finalize(), 1;
    if (strcmp(suite, "roundtrip") == 0)
        suite_roundtrip();
    else if (strcmp(suite, "fallback") == 0)
        suite_fallback();
    else if (strcmp(suite, "refuse") == 0)
        suite_refuse();
    else if (strcmp(suite, "threads") == 0)
        suite_threads();
    else if (++g_fail && g_rank == 0)
        fprintf(stderr, "usage: test-io-direct roundtrip|fallback|refuse|threads\n");
    ssize_t open_ids = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    CHECK(open_ids == 0, "%zd HDF5 objects left open", open_ids);
    int fails = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        if (fails == 0 && !getenv("DD_TEST_KEEP"))
            nftw(g_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        printf("test-io-direct %s, %d ranks: %s", suite, g_size, fails ? "FAILED" : "passed");
        if (fails)
            printf(" (%d failed checks; files kept in %s)", fails, g_dir);
        printf("\n");
    }
    MPI_Finalize();
    return fails ? 1 : 0;
}
