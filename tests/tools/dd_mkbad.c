/* dd_mkbad.c — writes the malformed inputs the bad-input tests feed to
 * dgemm-dist, with plain serial HDF5 calls:
 *   dd-mkbad DIR
 * makes DIR/rank3.h5 (A is 3-D), int.h5 (A is int32), mismatch.h5 (A 3×4,
 * B 5×2), mixed.h5 (A f64, B f32), nan.h5 (A holds a NaN), inf.h5 (B holds
 * an Inf), empty.h5 (A is 0×4), noB.h5 (only A), notes.txt (not HDF5). */
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

static hid_t make(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dd-mkbad DIR\n");
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
