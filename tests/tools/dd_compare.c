/* dd_compare.c — test oracle, independent of the code under test (plain
 * serial HDF5 calls, a naive product in double).
 *
 *   dd-compare product IN.h5 OUT.h5
 *       C in OUT.h5 against A·B from IN.h5; each element must satisfy
 *       |C - ref| <= 2·k·u·Σ_k|a||b| + 1e-300 (u: unit roundoff of the type).
 *       Also checks C's shape and type and that no element is NaN.
 *   dd-compare equal F1 F2 DSET...
 *       the named datasets have the same shape, type and bytes in both files.
 *   dd-compare gemm IN OUT [--transa N|T] [--transb N|T] [--alpha X] [--beta Y]
 *                          [--order row|col] [--a A] [--b B] [--c C]
 *       C in OUT against alpha·op(A)·op(B) + beta·C_in (C_in from IN, read
 *       only when beta ≠ 0), each dataset read as the writer meant it (col:
 *       the dataset is the matrix's transpose); per element
 *       |C - ref| <= 2·(k+2)·u·(Σ|alpha·a·b| + |beta·c|) + 1e-300.
 *   dd-compare mkcol IN OUT DSET...       OUT gets the transposes of IN's DSETs
 *   dd-compare transposed F1 D1 F2 D2     F2:D2 = transpose of F1:D1, bit for bit
 *   dd-compare poison FILE DSET           every element of FILE:DSET becomes NaN
 *   dd-compare no-nan FILE DSET           FILE:DSET holds no NaN
 *   dd-compare attr FILE DSET NAME        prints attribute NAME of FILE:DSET
 * Exit 0 when all holds, 1 with a message otherwise. */
#include <float.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t rows, cols;
    size_t es;
    void *data;
} mat;

static int load(const char *path, const char *name, mat *m)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        fprintf(stderr, "dd-compare: cannot open %s\n", path);
        return -1;
    }
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) {
        fprintf(stderr, "dd-compare: %s has no dataset %s\n", path, name);
        H5Fclose(f);
        return -1;
    }
    hid_t s = H5Dget_space(d), t = H5Dget_type(d);
    hsize_t dims[2] = {0, 0};
    int nd = H5Sget_simple_extent_ndims(s);
    H5Sget_simple_extent_dims(s, dims, NULL);
    m->es = H5Tget_size(t);
    m->rows = (int64_t)dims[0];
    m->cols = (int64_t)dims[1];
    int rc = -1;
    if (nd == 2 && H5Tget_class(t) == H5T_FLOAT && (m->es == 8 || m->es == 4)) {
        m->data = malloc((size_t)(m->rows * m->cols) * m->es + 1);
        if (m->data && H5Dread(d, m->es == 8 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, H5S_ALL,
                               H5S_ALL, H5P_DEFAULT, m->data) >= 0)
            rc = 0;
    }
    if (rc)
        fprintf(stderr, "dd-compare: %s:%s is not a readable 2-D float dataset\n", path, name);
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    return rc;
}

static double at(const mat *m, int64_t i, int64_t j)
{
    int64_t x = i * m->cols + j;
    return m->es == 8 ? ((double *)m->data)[x] : (double)((float *)m->data)[x];
}

static int product(const char *in, const char *out)
{
    mat A, B, C;
    if (load(in, "A", &A) || load(in, "B", &B) || load(out, "C", &C))
        return 1;
    if (C.rows != A.rows || C.cols != B.cols || A.cols != B.rows || C.es != A.es) {
        fprintf(stderr, "dd-compare: shapes A %lldx%lld B %lldx%lld C %lldx%lld (elsize %zu/%zu)\n",
                (long long)A.rows, (long long)A.cols, (long long)B.rows, (long long)B.cols,
                (long long)C.rows, (long long)C.cols, A.es, C.es);
        return 1;
    }
    double u = A.es == 8 ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
    int64_t K = A.cols, bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < C.rows; i++)
        for (int64_t j = 0; j < C.cols; j++) {
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                double p = at(&A, i, k) * at(&B, k, j);
                ref += p;
                mag += fabs(p);
            }
            double c = at(&C, i, j), err = fabs(c - ref), tol = 2.0 * (double)K * u * mag + 1e-300;
            if (!(err <= tol)) {
                if (bad++ < 5)
                    fprintf(stderr,
                            "dd-compare: C[%lld,%lld] = %.17g, reference %.17g (tol %.3g)\n",
                            (long long)i, (long long)j, c, ref, tol);
            }
            if (tol > 0 && err / tol > worst)
                worst = err / tol;
        }
    if (bad) {
        fprintf(stderr, "dd-compare: %lld of %lld elements of C wrong\n", (long long)bad,
                (long long)(C.rows * C.cols));
        return 1;
    }
    printf("dd-compare: C (%lldx%lld) matches the serial product (worst error %.3f of tolerance)\n",
           (long long)C.rows, (long long)C.cols, worst);
    return 0;
}

/* ---- GEMM: C = alpha·op(A)·op(B) + beta·C_in, files row- or column-major ---- */

typedef struct {
    char transa, transb;
    double alpha, beta;
    int col; /* the datasets hold the transposes (a column-major writer's matrices) */
    const char *a, *b, *c;
} gemm_opts;

/* Element (i, j) of the matrix the writer meant: the dataset, or with col
 * its transpose. */
static double logical(const mat *m, int col, int64_t i, int64_t j)
{
    return col ? at(m, j, i) : at(m, i, j);
}
static int64_t lrows(const mat *m, int col)
{
    return col ? m->cols : m->rows;
}
static int64_t lcols(const mat *m, int col)
{
    return col ? m->rows : m->cols;
}
/* op(X)(i, j) */
static double op(const mat *m, int col, char trans, int64_t i, int64_t j)
{
    return trans == 'T' ? logical(m, col, j, i) : logical(m, col, i, j);
}

static int gemm_shapes(const gemm_opts *g, const mat *A, const mat *B, const mat *Cin, const mat *C,
                       int64_t *M, int64_t *N, int64_t *K)
{
    *M = g->transa == 'T' ? lcols(A, g->col) : lrows(A, g->col);
    *K = g->transa == 'T' ? lrows(A, g->col) : lcols(A, g->col);
    int64_t kb = g->transb == 'T' ? lcols(B, g->col) : lrows(B, g->col);
    *N = g->transb == 'T' ? lrows(B, g->col) : lcols(B, g->col);
    int bad = kb != *K || lrows(C, g->col) != *M || lcols(C, g->col) != *N || C->es != A->es;
    if (Cin)
        bad |= lrows(Cin, g->col) != *M || lcols(Cin, g->col) != *N;
    if (bad)
        fprintf(stderr,
                "dd-compare: shapes do not fit: op(A) %lldx%lld, op(B) %lldx%lld, C stored "
                "%lldx%lld (elsize %zu/%zu)\n",
                (long long)*M, (long long)*K, (long long)kb, (long long)*N, (long long)C->rows,
                (long long)C->cols, A->es, C->es);
    return bad;
}

static int gemm(const char *in, const char *out, const gemm_opts *g)
{
    mat A, B, C, Cin;
    int with_c = g->beta != 0;
    if (load(in, g->a, &A) || load(in, g->b, &B) || load(out, g->c, &C) ||
        (with_c && load(in, g->c, &Cin)))
        return 1;
    int64_t M, N, K, bad = 0;
    if (gemm_shapes(g, &A, &B, with_c ? &Cin : NULL, &C, &M, &N, &K))
        return 1;
    double u = A.es == 8 ? DBL_EPSILON / 2 : FLT_EPSILON / 2, worst = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < K && g->alpha != 0; k++) { /* alpha = 0: A, B not read */
                double p =
                    g->alpha * op(&A, g->col, g->transa, i, k) * op(&B, g->col, g->transb, k, j);
                ref += p;
                mag += fabs(p);
            }
            if (with_c) { /* beta = 0: C's input is never read (it may hold NaN) */
                double c = g->beta * logical(&Cin, g->col, i, j);
                ref += c;
                mag += fabs(c);
            }
            double c = logical(&C, g->col, i, j), err = fabs(c - ref);
            double tol = 2.0 * (double)(K + 2) * u * mag + 1e-300;
            if (!(err <= tol) && bad++ < 5)
                fprintf(stderr, "dd-compare: C[%lld,%lld] = %.17g, reference %.17g (tol %.3g)\n",
                        (long long)i, (long long)j, c, ref, tol);
            if (tol > 0 && err / tol > worst)
                worst = err / tol;
        }
    if (bad) {
        fprintf(stderr, "dd-compare: %lld of %lld elements of C wrong\n", (long long)bad,
                (long long)(M * N));
        return 1;
    }
    printf("dd-compare: C (%lldx%lld, %s) matches %g·op%c(A)·op%c(B)%s%g·C (worst error %.3f of "
           "tolerance)\n",
           (long long)M, (long long)N, g->col ? "col" : "row", g->alpha, g->transa, g->transb,
           with_c ? " + " : " + 0·", g->beta, worst);
    return 0;
}

static int gemm_args(int argc, char **argv, gemm_opts *g)
{
    *g = (gemm_opts){'N', 'N', 1, 0, 0, "A", "B", "C"};
    for (int i = 0; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--transa") || !strcmp(k, "--transb"))
            *(k[7] == 'a' ? &g->transa : &g->transb) = v[0] == 'T' || v[0] == 't' ? 'T' : 'N';
        else if (!strcmp(k, "--alpha") || !strcmp(k, "--beta"))
            *(k[2] == 'a' ? &g->alpha : &g->beta) = strtod(v, NULL);
        else if (!strcmp(k, "--order"))
            g->col = !strcmp(v, "col");
        else if (!strcmp(k, "--a") || !strcmp(k, "--b") || !strcmp(k, "--c"))
            *(k[2] == 'a' ? &g->a : k[2] == 'b' ? &g->b : &g->c) = v;
        else
            return -1;
    }
    return argc % 2 ? -1 : 0;
}

/* ---- files for the tests, written with plain HDF5 ---- */

static int store(hid_t f, const char *name, const mat *m)
{
    hsize_t dims[2] = {(hsize_t)m->rows, (hsize_t)m->cols};
    hid_t t = m->es == 8 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
    hid_t s = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, name, t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d >= 0 && H5Dwrite(d, m->es == 8 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, H5S_ALL,
                                H5S_ALL, H5P_DEFAULT, m->data) >= 0
                 ? 0
                 : -1;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(s);
    if (rc)
        fprintf(stderr, "dd-compare: cannot write dataset %s\n", name);
    return rc;
}

static void transpose(const mat *m, mat *t)
{
    *t = (mat){m->cols, m->rows, m->es, malloc((size_t)(m->rows * m->cols) * m->es + 1)};
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++)
            memcpy((char *)t->data + (size_t)(j * m->rows + i) * m->es,
                   (const char *)m->data + (size_t)(i * m->cols + j) * m->es, m->es);
}

/* OUT (new) gets, for each DSET of IN, its transpose under the same name:
 * the file a column-major writer (MATLAB, Julia) makes of IN's matrices. */
static int mkcol(const char *in, const char *out, int n, char **names)
{
    hid_t f = H5Fcreate(out, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        fprintf(stderr, "dd-compare: cannot create %s\n", out);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        mat m, t;
        if ((rc = load(in, names[i], &m)))
            break;
        transpose(&m, &t);
        rc = store(f, names[i], &t);
    }
    if (H5Fclose(f) < 0)
        rc = -1;
    if (!rc)
        printf("dd-compare: %s holds the transposes of %d datasets of %s\n", out, n, in);
    return rc ? 1 : 0;
}

/* F2:D2 is the transpose of F1:D1, bit for bit. */
static int transposed(const char *f1, const char *d1, const char *f2, const char *d2)
{
    mat a, b, t;
    if (load(f1, d1, &a) || load(f2, d2, &b))
        return 1;
    transpose(&a, &t);
    if (t.rows != b.rows || t.cols != b.cols || t.es != b.es ||
        memcmp(t.data, b.data, (size_t)(t.rows * t.cols) * t.es)) {
        fprintf(stderr, "dd-compare: %s:%s is not the transpose of %s:%s\n", f2, d2, f1, d1);
        return 1;
    }
    printf("dd-compare: %s:%s is the transpose of %s:%s\n", f2, d2, f1, d1);
    return 0;
}

/* FILE:DSET gets NaN in every element (the file is rewritten in place). */
static int poison(const char *path, const char *name)
{
    mat m;
    if (load(path, name, &m))
        return 1;
    for (int64_t i = 0; i < m.rows * m.cols; i++) {
        if (m.es == 8)
            ((double *)m.data)[i] = NAN;
        else
            ((float *)m.data)[i] = NAN;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1;
    int rc = d >= 0 && H5Dwrite(d, m.es == 8 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, H5S_ALL,
                                H5S_ALL, H5P_DEFAULT, m.data) >= 0
                 ? 0
                 : 1;
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    if (rc)
        fprintf(stderr, "dd-compare: cannot rewrite %s:%s\n", path, name);
    return rc;
}

/* Prints attribute NAME of FILE:DSET: a string (variable length), or a
 * number. */
static int attr(const char *path, const char *dset, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = f >= 0 ? H5Aopen_by_name(f, dset, name, H5P_DEFAULT, H5P_DEFAULT) : -1;
    hid_t t = a >= 0 ? H5Aget_type(a) : -1;
    int rc = 1;
    if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) {
        char *v = NULL;
        hid_t m = H5Tcopy(H5T_C_S1);
        H5Tset_size(m, H5T_VARIABLE);
        H5Tset_cset(m, H5Tget_cset(t)); /* HDF5 converts no ASCII to UTF-8 */
        if (H5Aread(a, m, &v) >= 0 && v) {
            printf("%s\n", v);
            rc = 0;
        }
        H5free_memory(v);
        H5Tclose(m);
    } else if (t >= 0 && (H5Tget_class(t) == H5T_FLOAT || H5Tget_class(t) == H5T_INTEGER)) {
        double v = 0;
        if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0) {
            printf("%.17g\n", v);
            rc = 0;
        }
    }
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    if (f >= 0)
        H5Fclose(f);
    if (rc)
        fprintf(stderr, "dd-compare: no readable attribute %s on %s:%s\n", name, path, dset);
    return rc;
}

/* No element of FILE:DSET is NaN. */
static int no_nan(const char *path, const char *name)
{
    mat m;
    if (load(path, name, &m))
        return 1;
    for (int64_t i = 0; i < m.rows * m.cols; i++)
        if (isnan(m.es == 8 ? ((double *)m.data)[i] : (double)((float *)m.data)[i])) {
            fprintf(stderr, "dd-compare: %s:%s holds NaN\n", path, name);
            return 1;
        }
    printf("dd-compare: %s:%s holds no NaN\n", path, name);
    return 0;
}

static int equal(const char *f1, const char *f2, int n, char **names)
{
    for (int i = 0; i < n; i++) {
        mat a, b;
        if (load(f1, names[i], &a) || load(f2, names[i], &b))
            return 1;
        if (a.rows != b.rows || a.cols != b.cols || a.es != b.es ||
            memcmp(a.data, b.data, (size_t)(a.rows * a.cols) * a.es)) {
            fprintf(stderr, "dd-compare: dataset %s differs between %s and %s\n", names[i], f1, f2);
            return 1;
        }
    }
    printf("dd-compare: %d datasets identical\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (argc == 4 && !strcmp(argv[1], "product"))
        return product(argv[2], argv[3]);
    if (argc >= 5 && !strcmp(argv[1], "equal"))
        return equal(argv[2], argv[3], argc - 4, argv + 4);
    gemm_opts g;
    if (argc >= 4 && !strcmp(argv[1], "gemm") && !gemm_args(argc - 4, argv + 4, &g))
        return gemm(argv[2], argv[3], &g);
    if (argc >= 5 && !strcmp(argv[1], "mkcol"))
        return mkcol(argv[2], argv[3], argc - 4, argv + 4);
    if (argc == 6 && !strcmp(argv[1], "transposed"))
        return transposed(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 4 && !strcmp(argv[1], "poison"))
        return poison(argv[2], argv[3]);
    if (argc == 5 && !strcmp(argv[1], "attr"))
        return attr(argv[2], argv[3], argv[4]);
    if (argc == 4 && !strcmp(argv[1], "no-nan"))
        return no_nan(argv[2], argv[3]);
    fprintf(stderr, "usage: dd-compare product IN OUT | equal F1 F2 DSET... | gemm IN OUT "
                    "[--transa N|T] [--transb N|T] [--alpha X] [--beta Y] [--order row|col] "
                    "[--a A] [--b B] [--c C] | mkcol IN OUT DSET... | transposed F1 D1 F2 D2 | "
                    "poison FILE DSET | no-nan FILE DSET | attr FILE DSET NAME\n");
    return 2;
}
