/* io_h5_types.c — element types (io_h5.h): which HDF5 types a matrix
 * dataset may hold (floats of 8 or 4 bytes, or complex numbers of them as
 * h5py writes them), the checks every matrix passes for the probe and the
 * readers alike (io_h5_check_matrix), the memory and file types blocks are
 * read and written with, and a type's short name for messages. */
#include <stdio.h>
#include <string.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"

/* A short human name for an HDF5 type: "int32", "uint8", "2-byte float", "string". */
void io_h5_type_name(hid_t t, char *out, size_t len)
{
    H5T_class_t cls = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    switch (cls) {
    case H5T_INTEGER:
        snprintf(out, len, "%s%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "uint" : "int", size * 8);
        break;
    case H5T_FLOAT:
        snprintf(out, len, "%zu-byte float", size);
        break;
    case H5T_STRING:
        snprintf(out, len, "string");
        break;
    case H5T_COMPOUND:
        snprintf(out, len, "compound");
        break;
    case H5T_ENUM:
        snprintf(out, len, "enum");
        break;
    case H5T_ARRAY:
        snprintf(out, len, "array");
        break;
    case H5T_VLEN:
        snprintf(out, len, "variable-length");
        break;
    case H5T_BITFIELD:
        snprintf(out, len, "bitfield");
        break;
    case H5T_OPAQUE:
        snprintf(out, len, "opaque");
        break;
    case H5T_REFERENCE:
        snprintf(out, len, "reference");
        break;
    case H5T_TIME:
        snprintf(out, len, "time");
        break;
    default:
        snprintf(out, len, "unknown");
        break;
    }
}

/* The member names of a complex compound, by IO_CX_*: real part, imaginary part. */
static const char *const cx_member[2][2] = {{"r", "i"}, {"real", "imag"}};

/* "an 8-byte float", "int32": a member's type in a refusal. */
static void member_desc(hid_t t, char *out, size_t len)
{
    char tn[64];
    io_h5_type_name(t, tn, sizeof tn);
    snprintf(out, len, "%s%s",
             H5Tget_class(t) == H5T_FLOAT ? (H5Tget_size(t) == 8 ? "an " : "a ") : "", tn);
}

/* Whether compound type ft is a complex number (io_h5.h): 1 with *type and
 * *names set; 0 with what is wrong with it in `why`; -1 when HDF5 cannot
 * say. */
static int complex_type(hid_t ft, dd_dtype *type, int *names, char *why, size_t len)
{
    int nm = H5Tget_nmembers(ft);
    if (nm < 0)
        return -1;
    char *mn[2] = {NULL, NULL};
    if (nm != 2) {
        /* the members' names, as many as fit */
        size_t at = (size_t)snprintf(why, len, "it has %d member%s", nm, nm == 1 ? "" : "s");
        for (int k = 0; k < nm && k < 6 && at < len; k++) {
            char *n = H5Tget_member_name(ft, (unsigned)k);
            at +=
                (size_t)snprintf(why + at, len - at, "%s\"%s\"", k == 0 ? " (" : ", ", n ? n : "?");
            H5free_memory(n);
        }
        if (nm > 0 && at < len)
            snprintf(why + at, len - at, "%s)", nm > 6 ? ", ..." : "");
        return 0;
    }
    for (int k = 0; k < 2; k++)
        mn[k] = H5Tget_member_name(ft, (unsigned)k);
    int which = -1, re = 0;
    for (int p = 0; p < 2 && which < 0 && mn[0] && mn[1]; p++)
        for (int k = 0; k < 2; k++)
            if (strcmp(mn[k], cx_member[p][0]) == 0 && strcmp(mn[1 - k], cx_member[p][1]) == 0)
                which = p, re = k;
    if (which < 0)
        snprintf(why, len, "its members are named \"%s\" and \"%s\"", mn[0] ? mn[0] : "?",
                 mn[1] ? mn[1] : "?");
    H5free_memory(mn[0]);
    H5free_memory(mn[1]);
    if (which < 0)
        return 0;
    const char *rn = cx_member[which][0], *in = cx_member[which][1];
    hid_t mr = H5Tget_member_type(ft, (unsigned)re),
          mi = H5Tget_member_type(ft, (unsigned)(1 - re));
    int ok = -1;
    if (mr >= 0 && mi >= 0) {
        H5T_class_t cr = H5Tget_class(mr), ci = H5Tget_class(mi);
        size_t sr = H5Tget_size(mr), si = H5Tget_size(mi), es = sr;
        size_t or_ = H5Tget_member_offset(ft, (unsigned)re),
               oi = H5Tget_member_offset(ft, (unsigned)(1 - re)), size = H5Tget_size(ft);
        char dr[80], di[80];
        member_desc(mr, dr, sizeof dr);
        member_desc(mi, di, sizeof di);
        ok = 0;
        if (cr != ci)
            snprintf(why, len, "its members are of mixed types (%s is %s, %s is %s)", rn, dr, in,
                     di);
        else if (cr != H5T_FLOAT)
            snprintf(why, len, "its members %s and %s are %s, not floats", rn, in, dr);
        else if (sr != si)
            snprintf(why, len, "its members are of different sizes (%s is %zu bytes, %s %zu)", rn,
                     sr, in, si);
        else if (sr != 8 && sr != 4)
            snprintf(why, len, "its members are %zu-byte floats", sr);
        else if (H5Tequal(mr, mi) <= 0)
            snprintf(why, len,
                     "its members are of mixed types (%s and %s are %zu-byte floats of "
                     "different formats: byte order or precision)",
                     rn, in, sr);
        else if (or_ != 0 || oi != es)
            snprintf(why, len,
                     "%s lies at byte %zu and %s at byte %zu of an element, not at 0 and %zu", rn,
                     or_, in, oi, es);
        else if (size != 2 * es)
            snprintf(why, len, "an element is %zu bytes (padded), not %zu", size, 2 * es);
        else {
            ok = 1;
            *type = es == 8 ? DD_C128 : DD_C64;
            *names = which;
        }
    }
    if (mr >= 0)
        H5Tclose(mr);
    if (mi >= 0)
        H5Tclose(mi);
    return ok;
}

/* The checks every matrix dataset passes, for the probe and for the
 * readers alike: 2-D, of floats of 8 or 4 bytes or complex numbers of them.
 * `label` ("A", "B") names the matrix in messages; NULL names only the
 * dataset. */
int io_h5_check_matrix(hid_t dset, const char *path, const char *name, const char *label,
                       int64_t dims[2], dd_dtype *type, int *names, dd_err *err)
{
    char what[1200];
    if (label)
        snprintf(what, sizeof what, "dataset %s (\"%s\" in %s)", label, name, path);
    else
        snprintf(what, sizeof what, "dataset \"%s\" in %s", name, path);
    int rc = DD_OK, nm = IO_CX_RI;
    dd_dtype t = DD_F64;
    hid_t space = H5Dget_space(dset), ft = H5Dget_type(dset);
    hsize_t d[H5S_MAX_RANK];
    int nd = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    H5T_class_t cls = ft < 0 ? H5T_NO_CLASS : H5Tget_class(ft);
    char why[512] = "";
    int cx = cls == H5T_COMPOUND ? complex_type(ft, &t, &nm, why, sizeof why) : 0;
    if (ft < 0 || nd < 0 || cx < 0 || H5Sget_simple_extent_dims(space, d, NULL) < 0) {
        rc = dd_fail(err, DD_EIO, "cannot read the shape and type of %s", what);
    } else if (nd != 2) {
        rc = dd_fail(err, DD_EUSAGE, "%s is %d-D; dgemm-dist needs a 2-D matrix", what, nd);
    } else if (cls == H5T_COMPOUND && !cx) {
        rc = dd_fail(err, DD_EUSAGE,
                     "%s has a compound type that is not a complex number: %s; dgemm-dist reads "
                     "complex matrices as h5py writes them, a compound of two floats named r and "
                     "i (or real and imag), both 8 bytes at offsets 0 and 8 (complex128) or both "
                     "4 bytes at 0 and 4 (complex64)",
                     what, why);
    } else if (cls != H5T_COMPOUND &&
               (cls != H5T_FLOAT || (H5Tget_size(ft) != 8 && H5Tget_size(ft) != 4))) {
        char tn[64];
        io_h5_type_name(ft, tn, sizeof tn);
        rc = dd_fail(err, DD_EUSAGE,
                     "%s has type %s; dgemm-dist needs 8- or 4-byte floats, or complex numbers of "
                     "them (h5py's complex128, complex64)",
                     what, tn);
    } else if (d[0] > INT64_MAX || d[1] > INT64_MAX) {
        rc = dd_fail(err, DD_EUSAGE, "%s is %llu×%llu, too large", what, (unsigned long long)d[0],
                     (unsigned long long)d[1]);
    } else {
        dims[0] = (int64_t)d[0];
        dims[1] = (int64_t)d[1];
        *type = cx ? t : H5Tget_size(ft) == 8 ? DD_F64 : DD_F32;
        if (names)
            *names = cx ? nm : IO_CX_RI;
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* A complex compound of two `part` floats named as cx_member[names]. */
static hid_t complex_of(hid_t part, int names)
{
    size_t es = H5Tget_size(part);
    const char *const *mn = cx_member[names == IO_CX_REALIMAG];
    hid_t t = es == 0 ? H5I_INVALID_HID : H5Tcreate(H5T_COMPOUND, 2 * es);
    if (t >= 0 && (H5Tinsert(t, mn[0], 0, part) < 0 || H5Tinsert(t, mn[1], es, part) < 0)) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

hid_t io_h5_memtype(dd_dtype t, int names)
{
    hid_t part = t == DD_F64 || t == DD_C128 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
    return dd_dtype_complex(t) ? complex_of(part, names) : H5Tcopy(part);
}
hid_t io_h5_filetype(dd_dtype t)
{
    hid_t part = t == DD_F64 || t == DD_C128 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
    return dd_dtype_complex(t) ? complex_of(part, IO_CX_RI) : H5Tcopy(part);
}
