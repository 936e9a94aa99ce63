/* dd_compare.c — test oracle, independent of the code under test (plain
 * serial HDF5 calls, a naive product in double).
 *
 *   dd-compare product IN.h5 OUT.h5
 *       C in OUT.h5 against A·B from IN.h5; each element must satisfy
 *       |C - ref| <= 2·k·u·Σ_k|a||b| + 1e-300 (u: unit roundoff of the type).
 *       Also checks C's shape and type and that no element is NaN.
 *   dd-compare equal F1 F2 DSET...
 *       the named datasets have the same shape, type and bytes in both files.
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
    fprintf(stderr, "usage: dd-compare product IN OUT | dd-compare equal F1 F2 DSET...\n");
    return 2;
}
