/* dd_mkbad.c — writes the malformed inputs the bad-input tests feed to
 * dgemm-dist, with plain serial HDF5 calls:
 *   dd-mkbad DIR
 * makes DIR/rank3.h5 (A is 3-D), int.h5 (A is int32), mismatch.h5 (A 3×4,
 * B 5×2), mixed.h5 (A f64, B f32), nan.h5 (A holds a NaN), inf.h5 (B holds
 * an Inf), empty.h5 (A is 0×4), noB.h5 (only A), notes.txt (not HDF5).
 *   dd-mkbad DIR faults
 * makes instead the crafted files of the fault tests (tests/faults/):
 *   huge.h5     A (2^31-1)×(2^31+1) and B (2^31+1)×2, f64, chunked and never
 *               written, so the file is a few KiB: its shape alone asks for
 *               more memory than exists (and more than 2^64 bytes for A);
 *   big.h5      A 10^6×10^6 and B 10^6×10^6, f64, chunked, unwritten: 8 TB
 *               each, no size overflow, only too little memory;
 *   extreme.h5  A 24×16 with |entries| in [1e300, 4e300], B 16×20 with
 *               |entries| in [1e-300, 4e-300]: every product and sum is finite;
 *   extreme307.h5  the same with A at 2e306·[1, 4] and B at 1e-307·[1, 4]
 *               (A's row sums of |a| reach about 1e308, just below DBL_MAX).
 *   dd-mkbad DIR ozaki
 * makes the inputs of the sliced-panel tests (tests/cli/ozaki2_slices.sh):
 *   smooth.h5   A 70×384 and B 384×50, f64, |entries| in [0.5, 1): no row or
 *               column leaves ozaki2's range at any panel width;
 *   wide.h5     the same, but row 5 of A has every other entry of columns
 *               0-63 and column 3 of B every other entry of rows 200-263
 *               scaled by 2^-60: the panels holding them leave the range.
 *   dd-mkbad DIR inputs
 * makes the inputs whose A lives elsewhere or is damaged (tests/faults/inputs.sh);
 * each file has B 16×20 f64 of its own, and A is 12×16 f64:
 *   target.h5        A itself, the target of the links below;
 *   extlink.h5       A an external link to target.h5:/A, and a dataset "pad" after
 *                    B, so that A's offset in target.h5 lies inside this file too;
 *   softext.h5       A a soft link to /X, X an external link to target.h5:/A (pad too),
 *                    and C (the input --beta reads) a soft link to /noC, which is not there;
 *   extraw.h5        A kept whole in the external raw file extraw.raw;
 *   vds.h5           A a virtual dataset: rows 0-5 from vds_src1.h5:/S, 6-11 from
 *                    vds_src2.h5:/S (both made here);
 *   vds_missing.h5   the same with rows 6-11 from vds_gone.h5, which does not exist;
 *   vds_fifo.h5      the same with rows 6-11 from vds_fifo_src.h5 (the test makes a FIFO);
 *   vds_short.h5     the same with rows 6-11 from vds_short_src.h5:/S, which has 3 rows;
 *   vds_beyond.h5    the same with rows 6-11 from rows 2-7 of vds_short_src.h5:/S;
 *   dangling_soft.h5    A a soft link to /nowhere;
 *   dangling_ext.h5     A an external link to gone.h5:/A (no such file);
 *   dangling_extobj.h5  A an external link to target.h5:/nothing;
 *   ext_fifo.h5      A an external link to fifo_target.h5:/A (the test makes a FIFO);
 *   extraw_fifo.h5   A in the external raw file fifo.raw (the test makes a FIFO);
 *   fletcher.h5      A chunked (two chunks of 6 rows) with the fletcher32 checksum,
 *                    one byte of its second chunk changed after it was written. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put(hid_t f, const char *name, hid_t type, int nd, const hsize_t *dims, double poison)
{
    hid_t s = H5Screate_simple(nd, dims, NULL);
    hid_t d = H5Dcreate2(f, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (s < 0 || d < 0)
        return -1;
    size_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= dims[i];
    double *v = malloc(sizeof(double) * (n + 1));
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(i % 7) - 3.0;
    if (n && poison != 0)
        v[n / 2] = poison;
    herr_t rc = n ? H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) : 0;
    free(v);
    H5Dclose(d);
    H5Sclose(s);
    return rc < 0 ? -1 : 0;
}

/* A chunked dataset of any shape, never written: the file stays tiny. */
static int put_chunked(hid_t f, const char *name, const hsize_t *dims)
{
    hsize_t chunk[2] = {dims[0] < 64 ? dims[0] : 64, dims[1] < 64 ? dims[1] : 64};
    hid_t s = H5Screate_simple(2, dims, NULL);
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    int rc = s < 0 || p < 0 || H5Pset_chunk(p, 2, chunk) < 0 ? -1 : 0;
    hid_t d = rc ? -1 : H5Dcreate2(f, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
    if (d < 0)
        rc = -1;
    else
        H5Dclose(d);
    if (p >= 0)
        H5Pclose(p);
    if (s >= 0)
        H5Sclose(s);
    return rc;
}

/* Dataset `name`, rows×cols f64 (contiguous, the file's defaults), holding
 * the row-major values v: 0, or -1 where any HDF5 call fails. */
static int write_f64(hid_t f, const char *name, hsize_t rows, hsize_t cols, const double *v)
{
    hsize_t dims[2] = {rows, cols};
    hid_t s = H5Screate_simple(2, dims, NULL);
    hid_t d =
        s < 0 ? -1 : H5Dcreate2(f, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    if (d >= 0)
        H5Dclose(d);
    if (s >= 0)
        H5Sclose(s);
    return rc < 0 ? -1 : 0;
}

/* f64 entries of magnitude scale·[1, 4], signs and sizes varying. */
static int put_scaled(hid_t f, const char *name, hsize_t rows, hsize_t cols, double scale)
{
    size_t n = (size_t)(rows * cols);
    double *v = malloc(sizeof(double) * n);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + (double)(i * 7 % 13) / 4.0) * scale;
    int rc = write_f64(f, name, rows, cols, v);
    free(v);
    return rc;
}

/* Dataset `name` (rows×cols f64) kept in the external raw file DIR/RAW,
 * written `keep` bytes long (HDF5 would read the rest as zeros), or not
 * written at all when keep is (size_t)-1. */
static int put_external_in(const char *dir, hid_t f, const char *name, const char *rel,
                           hsize_t rows, hsize_t cols, size_t keep)
{
    char raw[4096];
    snprintf(raw, sizeof raw, "%s/%s", dir, rel);
    if (keep != (size_t)-1) {
        FILE *r = fopen(raw, "wb");
        if (!r)
            return -1;
        for (size_t i = 0; i < keep; i++)
            fputc(0x3f, r); /* 0x3f3f3f3f3f3f3f3f is a double near 0.49 */
        if (fclose(r) != 0)
            return -1;
    }
    hsize_t dims[2] = {rows, cols};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(2, dims, NULL);
    int rc = dcpl < 0 || space < 0 ||
             H5Pset_external(dcpl, raw, 0, (hsize_t)(rows * cols * sizeof(double))) < 0;
    hid_t d = rc ? -1 : H5Dcreate2(f, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    rc |= d < 0;
    if (d >= 0)
        H5Dclose(d);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc ? -1 : 0;
}

/* A (rows×cols f64) in the external raw file "NAME.raw" beside the file. */
static int put_external(const char *dir, hid_t f, const char *name, hsize_t rows, hsize_t cols,
                        size_t keep)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s.raw", name);
    return put_external_in(dir, f, name, rel, rows, cols, keep);
}

static hid_t make(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
}

static int make_faults(const char *dir)
{
    const hsize_t huge_a[2] = {2147483647ULL, 2147483649ULL}, huge_b[2] = {2147483649ULL, 2};
    const hsize_t big[2] = {1000000, 1000000};
    int rc = 0;
    hid_t f = make(dir, "huge.h5");
    rc |= f < 0 || put_chunked(f, "A", huge_a) || put_chunked(f, "B", huge_b);
    H5Fclose(f);
    f = make(dir, "big.h5");
    rc |= f < 0 || put_chunked(f, "A", big) || put_chunked(f, "B", big);
    H5Fclose(f);
    f = make(dir, "extreme.h5");
    rc |= f < 0 || put_scaled(f, "A", 24, 16, 1e300) || put_scaled(f, "B", 16, 20, 1e-300);
    H5Fclose(f);
    f = make(dir, "external.h5"); /* A's raw file holds 100 of its 1536 bytes */
    rc |= f < 0 || put_external(dir, f, "A", 12, 16, 100) || put_scaled(f, "B", 16, 20, 1.0);
    H5Fclose(f);
    f = make(dir, "extreme307.h5");
    rc |= f < 0 || put_scaled(f, "A", 24, 16, 2e306) || put_scaled(f, "B", 16, 20, 1e-307);
    H5Fclose(f);
    if (rc)
        fprintf(stderr, "dd-mkbad: could not write every fault file in %s\n", dir);
    return rc ? 1 : 0;
}

/* A rows×cols f64 dataset of entries in ±[0.5, 1) from a fixed sequence;
 * with `wide`, every other entry of the given row's (rows of the given
 * column's, when col >= 0) range [from, from + 64) scaled by 2^-60. */
static int put_smooth(hid_t f, const char *name, hsize_t rows, hsize_t cols, int wide, int row,
                      int col, int from)
{
    size_t n = (size_t)(rows * cols);
    double *v = malloc(sizeof(double) * n);
    if (!v)
        return -1;
    unsigned long long x = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)(rows * 31 + cols);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[i] = ((x >> 11) & 1 ? -1.0 : 1.0) * (0.5 + (double)(x >> 12) / 9007199254740992.0);
    }
    for (int l = from; wide && l < from + 64; l += 2) {
        size_t at = col >= 0 ? (size_t)l * cols + (size_t)col : (size_t)row * cols + (size_t)l;
        v[at] = ldexp(v[at], -60);
    }
    int rc = write_f64(f, name, rows, cols, v);
    free(v);
    return rc;
}

static int make_ozaki(const char *dir)
{
    int rc = 0;
    for (int wide = 0; wide < 2; wide++) {
        hid_t f = make(dir, wide ? "wide.h5" : "smooth.h5");
        rc |= f < 0 || put_smooth(f, "A", 70, 384, wide, 5, -1, 0) ||
              put_smooth(f, "B", 384, 50, wide, -1, 3, 200);
        H5Fclose(f);
    }
    if (rc)
        fprintf(stderr, "dd-mkbad: could not write the ozaki2 inputs in %s\n", dir);
    return rc ? 1 : 0;
}

/* A 12×16 virtual dataset "A": rows 0-5 from all of src1:/S, rows 6-11 from
 * all of src2:/S, or with `rows2` from rows 2-7 of src2:/S, an 8×16 extent
 * when the mapping was made. */
static int put_vds(hid_t f, const char *src1, const char *src2, int rows2)
{
    hsize_t dims[2] = {12, 16}, half[2] = {6, 16}, start[2] = {0, 0}, eight[2] = {8, 16};
    hsize_t from[2] = {2, 0};
    hid_t vspace = H5Screate_simple(2, dims, NULL), sspace = H5Screate_simple(2, half, NULL);
    hid_t part = H5Screate_simple(2, eight, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int rc = vspace < 0 || sspace < 0 || part < 0 || dcpl < 0 ||
             H5Sselect_hyperslab(part, H5S_SELECT_SET, from, NULL, half, NULL) < 0;
    const char *src[2] = {src1, src2};
    for (int i = 0; !rc && i < 2; i++) {
        start[0] = (hsize_t)(6 * i);
        rc = H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, half, NULL) < 0 ||
             H5Pset_virtual(dcpl, vspace, src[i], "/S", i && rows2 ? part : sspace) < 0;
    }
    rc = rc || H5Sselect_all(vspace) < 0;
    hid_t d = rc ? -1 : H5Dcreate2(f, "A", H5T_IEEE_F64LE, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    rc |= d < 0;
    if (d >= 0)
        H5Dclose(d);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (part >= 0)
        H5Sclose(part);
    if (sspace >= 0)
        H5Sclose(sspace);
    if (vspace >= 0)
        H5Sclose(vspace);
    return rc ? -1 : 0;
}

/* A 12×16 f64, two chunks of 6 rows with the fletcher32 checksum, then one
 * byte of the second chunk changed in the closed file. */
static int put_fletcher(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {12, 16}, chunk[2] = {6, 16};
    double v[12 * 16];
    for (int i = 0; i < 12 * 16; i++)
        v[i] = 1.0 + (double)(i % 5) / 8.0;
    hid_t s = H5Screate_simple(2, dims, NULL), p = H5Pcreate(H5P_DATASET_CREATE);
    int rc = f < 0 || s < 0 || p < 0 || H5Pset_chunk(p, 2, chunk) < 0 || H5Pset_fletcher32(p) < 0;
    hid_t d = rc ? -1 : H5Dcreate2(f, "A", H5T_IEEE_F64LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
    rc = rc || d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ||
         H5Dflush(d) < 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t off[2] = {6, 0};
    unsigned mask = 0;
    hsize_t size = 0;
    if (!rc && H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) < 0)
        rc = 1;
    if (d >= 0)
        H5Dclose(d);
    if (p >= 0)
        H5Pclose(p);
    if (s >= 0)
        H5Sclose(s);
    rc = rc || put_scaled(f, "B", 16, 20, 1.0);
    if (f >= 0)
        H5Fclose(f);
    if (rc || addr == HADDR_UNDEF || size < 16)
        return -1;
    FILE *raw = fopen(path, "r+b");
    unsigned char byte = 0;
    rc = !raw || fseek(raw, (long)(addr + 10), SEEK_SET) != 0 || fread(&byte, 1, 1, raw) != 1;
    byte ^= 0x40;
    rc = rc || fseek(raw, (long)(addr + 10), SEEK_SET) != 0 || fwrite(&byte, 1, 1, raw) != 1;
    if (raw && fclose(raw) != 0)
        rc = 1;
    return rc ? -1 : 0;
}

static int make_inputs(const char *dir)
{
    int rc = 0;
    hid_t f = make(dir, "target.h5");
    rc |= f < 0 || put_scaled(f, "A", 12, 16, 2.0);
    H5Fclose(f);
    const char *linked[2] = {"extlink.h5", "softext.h5"};
    for (int i = 0; i < 2; i++) {
        f = make(dir, linked[i]);
        rc |= f < 0 || put_scaled(f, "B", 16, 20, 1.0) || put_scaled(f, "pad", 64, 64, 0.5);
        if (i == 0)
            rc |= H5Lcreate_external("target.h5", "/A", f, "A", H5P_DEFAULT, H5P_DEFAULT) < 0;
        else
            rc |= H5Lcreate_external("target.h5", "/A", f, "X", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
                  H5Lcreate_soft("/X", f, "A", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
                  H5Lcreate_soft("/noC", f, "C", H5P_DEFAULT, H5P_DEFAULT) < 0;
        H5Fclose(f);
    }
    f = make(dir, "extraw.h5");
    rc |= f < 0 || put_external_in(dir, f, "A", "extraw.raw", 12, 16, 12 * 16 * 8) ||
          put_scaled(f, "B", 16, 20, 1.0);
    H5Fclose(f);
    f = make(dir, "extraw_fifo.h5");
    rc |= f < 0 || put_external_in(dir, f, "A", "fifo.raw", 12, 16, (size_t)-1) ||
          put_scaled(f, "B", 16, 20, 1.0);
    H5Fclose(f);
    const char *srcs[3] = {"vds_src1.h5", "vds_src2.h5", "vds_short_src.h5"};
    for (int i = 0; i < 3; i++) {
        f = make(dir, srcs[i]);
        rc |= f < 0 || put_scaled(f, "S", i < 2 ? 6 : 3, 16, 1.0 + i);
        H5Fclose(f);
    }
    const char *vds[5][2] = {{"vds.h5", "vds_src2.h5"},
                             {"vds_missing.h5", "vds_gone.h5"},
                             {"vds_fifo.h5", "vds_fifo_src.h5"},
                             {"vds_short.h5", "vds_short_src.h5"},
                             {"vds_beyond.h5", "vds_short_src.h5"}};
    for (int i = 0; i < 5; i++) {
        f = make(dir, vds[i][0]);
        rc |= f < 0 || put_vds(f, "vds_src1.h5", vds[i][1], i == 4) ||
              put_scaled(f, "B", 16, 20, 1.0);
        H5Fclose(f);
    }
    f = make(dir, "dangling_soft.h5");
    rc |= f < 0 || put_scaled(f, "B", 16, 20, 1.0) ||
          H5Lcreate_soft("/nowhere", f, "A", H5P_DEFAULT, H5P_DEFAULT) < 0;
    H5Fclose(f);
    const char *ext[3][3] = {{"dangling_ext.h5", "gone.h5", "/A"},
                             {"dangling_extobj.h5", "target.h5", "/nothing"},
                             {"ext_fifo.h5", "fifo_target.h5", "/A"}};
    for (int i = 0; i < 3; i++) {
        f = make(dir, ext[i][0]);
        rc |= f < 0 || put_scaled(f, "B", 16, 20, 1.0) ||
              H5Lcreate_external(ext[i][1], ext[i][2], f, "A", H5P_DEFAULT, H5P_DEFAULT) < 0;
        H5Fclose(f);
    }
    rc |= put_fletcher(dir, "fletcher.h5");
    if (rc)
        fprintf(stderr, "dd-mkbad: could not write every input file in %s\n", dir);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[2], "faults"))
        return make_faults(argv[1]);
    if (argc == 3 && !strcmp(argv[2], "inputs"))
        return make_inputs(argv[1]);
    if (argc == 3 && !strcmp(argv[2], "ozaki"))
        return make_ozaki(argv[1]);
    if (argc != 2) {
        fprintf(stderr, "usage: dd-mkbad DIR [faults|inputs|ozaki]\n");
        return 2;
    }
    const char *dir = argv[1];
    hsize_t d34[2] = {3, 4}, d43[2] = {4, 3}, d52[2] = {5, 2}, d333[3] = {3, 3, 3}, d04[2] = {0, 4};
    int rc = 0;
    hid_t f;
    f = make(dir, "rank3.h5");
    rc |= put(f, "A", H5T_IEEE_F64LE, 3, d333, 0) | put(f, "B", H5T_IEEE_F64LE, 2, d34, 0);
    H5Fclose(f);
    f = make(dir, "int.h5");
    rc |= put(f, "A", H5T_STD_I32LE, 2, d34, 0) | put(f, "B", H5T_STD_I32LE, 2, d43, 0);
    H5Fclose(f);
    f = make(dir, "mismatch.h5");
    rc |= put(f, "A", H5T_IEEE_F64LE, 2, d34, 0) | put(f, "B", H5T_IEEE_F64LE, 2, d52, 0);
    H5Fclose(f);
    f = make(dir, "mixed.h5");
    rc |= put(f, "A", H5T_IEEE_F64LE, 2, d34, 0) | put(f, "B", H5T_IEEE_F32LE, 2, d43, 0);
    H5Fclose(f);
    f = make(dir, "nan.h5");
    rc |= put(f, "A", H5T_IEEE_F64LE, 2, d34, NAN) | put(f, "B", H5T_IEEE_F64LE, 2, d43, 0);
    H5Fclose(f);
    f = make(dir, "inf.h5");
    rc |= put(f, "A", H5T_IEEE_F32LE, 2, d34, 0) | put(f, "B", H5T_IEEE_F32LE, 2, d43, INFINITY);
    H5Fclose(f);
    f = make(dir, "empty.h5");
    rc |= put(f, "A", H5T_IEEE_F64LE, 2, d04, 0) | put(f, "B", H5T_IEEE_F64LE, 2, d43, 0);
    H5Fclose(f);
    f = make(dir, "noB.h5");
    rc |= put(f, "A", H5T_IEEE_F64LE, 2, d34, 0);
    H5Fclose(f);
    char path[4096];
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    FILE *t = fopen(path, "w");
    if (!t || fputs("not an HDF5 file\n", t) < 0 || fclose(t))
        rc = 1;
    if (rc)
        fprintf(stderr, "dd-mkbad: could not write every file in %s\n", dir);
    return rc ? 1 : 0;
}
