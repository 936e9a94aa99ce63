/* io_h5_attrs.c — attributes (io_h5.h): the provenance of an output (tool,
 * input, grid, times, residual: io.h's dd_attr) written on an object of the
 * file as scalars, replacing any of the same name; strings as
 * variable-length UTF-8, which h5py reads back as str. */
#include <hdf5.h>

#include "io.h"
#include "io_h5.h"

static herr_t write_attr(hid_t obj, hid_t scalar, const dd_attr *a)
{
    hid_t ftype, mtype;
    const void *val;
    const char *s = a->s ? a->s : "";
    switch (a->kind) {
    case DD_ATTR_STR:
        /* Variable-length UTF-8: h5py reads it back as str, not bytes. */
        ftype = H5Tcopy(H5T_C_S1);
        if (ftype < 0)
            return -1;
        if (H5Tset_size(ftype, H5T_VARIABLE) < 0 || H5Tset_cset(ftype, H5T_CSET_UTF8) < 0) {
            H5Tclose(ftype);
            return -1;
        }
        mtype = ftype;
        val = &s;
        break;
    case DD_ATTR_F64:
        ftype = H5T_IEEE_F64LE;
        mtype = H5T_NATIVE_DOUBLE;
        val = &a->d;
        break;
    case DD_ATTR_I64:
        ftype = H5T_STD_I64LE;
        mtype = H5T_NATIVE_INT64;
        val = &a->i;
        break;
    default:
        return -1;
    }
    herr_t ok = 0;
    htri_t exists = H5Aexists(obj, a->key);
    if (exists < 0 || (exists > 0 && H5Adelete(obj, a->key) < 0))
        ok = -1;
    hid_t attr =
        ok < 0 ? H5I_INVALID_HID : H5Acreate2(obj, a->key, ftype, scalar, H5P_DEFAULT, H5P_DEFAULT);
    if (attr < 0 || H5Awrite(attr, mtype, val) < 0)
        ok = -1;
    if (attr >= 0 && H5Aclose(attr) < 0)
        ok = -1;
    if (a->kind == DD_ATTR_STR)
        H5Tclose(ftype);
    return ok;
}

int io_h5_write_attrs(hid_t file, const char *path, const char *obj, const dd_attr *attrs,
                      int nattrs, dd_err *err)
{
    hid_t o = H5Oopen(file, obj, H5P_DEFAULT);
    if (o < 0)
        return dd_fail(err, DD_EIO, "cannot open \"%s\" in %s to set its attributes", obj, path);
    hid_t scalar = H5Screate(H5S_SCALAR);
    int rc =
        scalar < 0 ? dd_fail(err, DD_EIO, "cannot make an HDF5 dataspace for attributes") : DD_OK;
    for (int i = 0; rc == DD_OK && i < nattrs; i++)
        if (attrs[i].key == NULL || write_attr(o, scalar, &attrs[i]) < 0)
            rc = dd_fail(err, DD_EIO, "cannot write attribute \"%s\" on \"%s\" in %s",
                         attrs[i].key ? attrs[i].key : "(null)", obj, path);
    if (scalar >= 0)
        H5Sclose(scalar);
    if (H5Oclose(o) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close \"%s\" in %s after setting attributes", obj, path);
    return rc;
}
