/* io_h5.c — HDF5 helpers shared by both I/O paths (io_h5.h): types, the
 * table of open datasets, the matrix checks, block dataspaces, attributes. */
#define _GNU_SOURCE /* fallocate */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <hdf5.h>

#include "dd_fault.h"
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

/* H5Lexists fails (rather than saying no) when an intermediate group is
 * missing, so walk "g1/g2/name" one component at a time. */
int io_h5_link_exists(hid_t file, const char *name, hid_t lapl)
{
    char path[1024];
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof path)
        return 0;
    memcpy(path, name, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char c = path[i];
        path[i] = '\0';
        htri_t e = H5Lexists(file, path, lapl);
        path[i] = c;
        if (e <= 0)
            return 0;
    }
    return 1;
}

const char *io_h5_file_kind(unsigned mode)
{
    mode_t m = (mode_t)mode;
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
           : S_ISDIR(m)  ? "a directory"
                         : "not a regular file";
}

/* One place HDF5 tries: 1 a regular file, -1 something else that open(2)
 * would reach (a FIFO blocks it), 0 nothing there (or a directory, whose
 * open HDF5 passes over). */
static int try_place(const char *cand, char *out, size_t n, const char **kind)
{
    struct stat st;
    if (stat(cand, &st) != 0 || S_ISDIR(st.st_mode))
        return 0;
    snprintf(out, n, "%s", cand);
    if (S_ISREG(st.st_mode))
        return 1;
    *kind = io_h5_file_kind((unsigned)st.st_mode);
    return -1;
}

/* dir + "/" + name, as HDF5 joins a prefix and a name. */
static int try_in(const char *dir, size_t dirlen, const char *name, char *out, size_t n,
                  const char **kind)
{
    char cand[4096];
    int slash = dirlen > 0 && dir[dirlen - 1] == '/';
    if (snprintf(cand, sizeof cand, "%.*s%s%s", (int)dirlen, dir, slash ? "" : "/", name) >=
        (int)sizeof cand)
        return 0;
    return try_place(cand, out, n, kind);
}

int io_h5_find_file(const char *parent, const char *name, const char *env, char *out, size_t n,
                    const char **kind)
{
    *kind = "";
    out[0] = '\0';
    const char *base = name, *slash;
    int r = 0;
    if (name[0] == '/') {
        if ((r = try_place(name, out, n, kind)) != 0)
            return r;
        base = strrchr(name, '/') + 1;
    }
    /* the environment's prefixes, colon-separated ("${ORIGIN}": the parent's directory) */
    const char *pre = env ? getenv(env) : NULL;
    slash = strrchr(parent, '/');
    size_t pdir = slash ? (size_t)(slash - parent) + (slash == parent) : 0;
    while (pre && *pre && r == 0) {
        const char *colon = strchr(pre, ':');
        size_t len = colon ? (size_t)(colon - pre) : strlen(pre);
        char dir[4096];
        if (len >= 9 && strncmp(pre, "${ORIGIN}", 9) == 0)
            snprintf(dir, sizeof dir, "%.*s%.*s", (int)(slash ? pdir : 1), slash ? parent : ".",
                     (int)(len - 9), pre + 9);
        else
            snprintf(dir, sizeof dir, "%.*s", (int)len, pre);
        if (dir[0] != '\0')
            r = try_in(dir, strlen(dir), base, out, n, kind);
        pre = colon ? colon + 1 : NULL;
    }
    /* the parent's directory (HDF5's "extpath"), then the working directory */
    if (r == 0 && slash)
        r = try_in(parent, pdir, base, out, n, kind);
    if (r == 0)
        r = try_place(base, out, n, kind);
    /* the directory of the parent's real path (it may be reached through a link) */
    char real[PATH_MAX];
    if (r == 0 && realpath(parent, real) != NULL && (slash = strrchr(real, '/')) != NULL)
        r = try_in(real, (size_t)(slash - real) + (slash == real), base, out, n, kind);
    if (r == 0)
        out[0] = '\0';
    return r;
}

/* HDF5 calls this before it opens an external link's target file. */
static herr_t guard_elink(const char *parent_file, const char *parent_group, const char *child_file,
                          const char *child_obj, unsigned *flags, hid_t fapl, void *op)
{
    (void)flags;
    (void)fapl;
    io_h5_guard *g = op;
    char found[4096];
    const char *kind = "";
    if (io_h5_find_file(parent_file, child_file, "HDF5_EXT_PREFIX", found, sizeof found, &kind) >=
        0)
        return 0;
    dd_fail(&g->err, DD_EUSAGE,
            "an external link in group \"%s\" of %s points to \"%s\" in file %s, and %s is %s, "
            "not a regular file (opening it could wait for ever); make the link point to an "
            "HDF5 file",
            parent_group, parent_file, child_obj, child_file, found, kind);
    return -1;
}

hid_t io_h5_guard_apl(io_h5_guard *g)
{
    dd_err_clear(&g->err);
    hid_t apl = H5Pcreate(H5P_DATASET_ACCESS); /* a link access list too */
    if (apl >= 0 && H5Pset_elink_cb(apl, guard_elink, g) < 0) {
        H5Pclose(apl);
        apl = H5I_INVALID_HID;
    }
    return apl;
}

/* What HDF5's error stack says about the call that just failed. */
typedef struct {
    int truncated, locked, checksum, filter;
    unsigned long long eof, base, stored;
    char inner[160]; /* the innermost description */
} why_failed;

static herr_t why_walk(unsigned n, const H5E_error2_t *e, void *op)
{
    why_failed *w = op;
    const char *d = e->desc ? e->desc : "";
    if (n == 0)
        snprintf(w->inner, sizeof w->inner, "%s", d);
    const char *at = strstr(d, "eof = ");
    if (e->min_num == H5E_TRUNCATED && at &&
        sscanf(at, "eof = %llu, sblock->base_addr = %llu, stored_eof = %llu", &w->eof, &w->base,
               &w->stored) == 3)
        w->truncated = 1;
    if (e->min_num == H5E_CANTLOCKFILE || strstr(d, "already open for write"))
        w->locked = 1;
    if (strstr(d, "Fletcher32"))
        w->checksum = 1;
    if (e->maj_num == H5E_PLINE)
        w->filter = 1;
    return 0;
}

static void why(why_failed *w)
{
    memset(w, 0, sizeof *w);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, why_walk, w);
}

int io_h5_explain_open(const char *path, dd_err *err)
{
    why_failed w;
    why(&w);
    if (w.truncated) {
        unsigned long long have = w.eof + w.base, need = w.stored > have ? w.stored : have;
        return dd_fail(err, DD_EUSAGE,
                       "%s is truncated: it is %llu bytes long, but its datasets and metadata "
                       "need %llu (%llu bytes, %.0f%%, are missing); the copy or write that "
                       "made it was cut short: copy or write it again",
                       path, have, need, need - have,
                       need ? 100.0 * (double)(need - have) / (double)need : 0.0);
    }
    if (w.locked)
        return dd_fail(err, DD_EIO,
                       "cannot open %s: another program has it open for writing; if it is "
                       "writing it, wait for it to finish (on file systems without locks set "
                       "HDF5_USE_FILE_LOCKING=FALSE; a file marked open by a program that died "
                       "is cleared with h5clear -s)",
                       path);
    return DD_OK;
}

int io_h5_read_failed(const char *path, const char *dset, int64_t row0, int64_t nrows, int64_t col0,
                      int64_t ncols, const char *how, dd_err *err)
{
    why_failed w;
    why(&w);
    char block[128];
    snprintf(block, sizeof block, "rows %lld+%lld, columns %lld+%lld", (long long)row0,
             (long long)nrows, (long long)col0, (long long)ncols);
    if (w.checksum)
        return dd_fail(err, DD_EUSAGE,
                       "the fletcher32 checksum of dataset \"%s\" in %s failed reading %s: the "
                       "file is corrupt (damaged on disk or in a copy); restore it from a good "
                       "copy or write it again",
                       dset, path, block);
    if (w.filter)
        return dd_fail(err, DD_EUSAGE,
                       "the data of dataset \"%s\" in %s could not be decoded reading %s (HDF5: "
                       "%s): the file is corrupt; restore it from a good copy or write it again",
                       dset, path, block, w.inner);
    return dd_fail(err, DD_EIO, "cannot read %s of dataset \"%s\" in %s%s (HDF5: %s)", block, dset,
                   path, how, w.inner[0] ? w.inner : "no reason given");
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

char *io_h5_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = malloc(len);
    if (copy != NULL)
        memcpy(copy, s, len);
    return copy;
}

io_h5_dset *io_h5_find(io_h5_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->d[i].name, name) == 0)
            return &t->d[i];
    return NULL;
}

io_h5_dset *io_h5_add(io_h5_table *t, const char *name, hid_t id, const int64_t dims[2],
                      dd_dtype type, int names)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 4;
        io_h5_dset *d = realloc(t->d, (size_t)cap * sizeof *d);
        if (d == NULL)
            return NULL;
        t->d = d;
        t->cap = cap;
    }
    char *copy = io_h5_strdup(name);
    hid_t mem = copy == NULL ? H5I_INVALID_HID : io_h5_memtype(type, names);
    if (mem < 0) {
        free(copy);
        return NULL;
    }
    io_h5_dset *e = &t->d[t->n++];
    e->name = copy;
    e->id = id;
    e->dims[0] = dims[0];
    e->dims[1] = dims[1];
    e->type = type;
    e->names = names;
    e->mem = mem;
    return e;
}

int io_h5_table_free(io_h5_table *t, const char *path, dd_err *err)
{
    int rc = DD_OK;
    for (int i = 0; i < t->n; i++) {
        if (t->d[i].id >= 0 && H5Dclose(t->d[i].id) < 0 && rc == DD_OK)
            rc = dd_fail(err, DD_EIO, "cannot close dataset \"%s\" of %s", t->d[i].name, path);
        H5Tclose(t->d[i].mem);
        free(t->d[i].name);
    }
    free(t->d);
    t->d = NULL;
    t->n = t->cap = 0;
    return rc;
}

int io_h5_open_dset(io_h5_table *t, hid_t file, const char *path, const char *name,
                    io_h5_dset **out, dd_err *err)
{
    io_h5_guard g;
    hid_t apl = io_h5_guard_apl(&g);
    if (apl < 0)
        return dd_fail(err, DD_EIO, "cannot make an HDF5 access property list for %s", path);
    hid_t d = H5I_INVALID_HID;
    int there = io_h5_link_exists(file, name, apl);
    if (there)
        d = H5Dopen2(file, name, apl);
    H5Pclose(apl);
    if (g.err.msg[0])
        return dd_fail(err, DD_EUSAGE, "%s", g.err.msg);
    if (!there)
        return dd_fail(err, DD_EUSAGE, "file %s has no dataset \"%s\"", path, name);
    if (d < 0)
        return dd_fail(err, DD_EIO, "cannot open \"%s\" in %s as a dataset", name, path);
    int64_t d2[2] = {0, 0};
    dd_dtype dt = DD_F64;
    int names = IO_CX_RI;
    int rc = io_h5_check_matrix(d, path, name, NULL, d2, &dt, &names, err);
    io_h5_dset *e = rc == DD_OK ? io_h5_add(t, name, d, d2, dt, names) : NULL;
    if (rc == DD_OK && e == NULL)
        rc = dd_fail(err, DD_ENOMEM, "out of memory opening dataset \"%s\" in %s", name, path);
    if (rc != DD_OK) {
        H5Dclose(d);
        return rc;
    }
    *out = e;
    return DD_OK;
}

int io_h5_reserve(const char *path, uint64_t bytes, dd_err *err)
{
    if (bytes == 0)
        return DD_OK;
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return dd_fail(err, DD_EIO, "cannot open %s to reserve its space: %s", path,
                       strerror(errno));
    int rc = DD_OK;
    /* the data, and a margin for what HDF5 writes at close (object headers,
     * attributes, the superblock's end of file), allocated without changing
     * the file's size: a full disk at close would leave collective ranks
     * out of step inside HDF5 */
    uint64_t margin = (uint64_t)1 << 20;
    /* DD_FAULT=no-fallocate: tests take the path of a file system without it */
    int fa = dd_fault("no-fallocate")
                 ? (errno = EOPNOTSUPP, -1)
                 : fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)(bytes + margin));
    int e = fa == 0 ? 0 : errno;
    struct statvfs vs;
    struct stat st;
    double avail = fstatvfs(fd, &vs) == 0 ? (double)vs.f_bavail * (double)vs.f_frsize : -1;
    /* Without fallocate (NFSv3, some parallel file systems) the free space
     * is compared instead: a disk that cannot hold the file is found now,
     * not by writes that fail on some ranks inside a collective MPI-IO call
     * (which then hangs) or that MPI-IO lets fail without a word. */
    if ((e == EOPNOTSUPP || e == ENOSYS) && avail >= 0 && fstat(fd, &st) == 0) {
        double held = (double)st.st_blocks * 512.0; /* what HDF5 wrote so far */
        if (avail + held < (double)(bytes + margin))
            e = ENOSPC;
    }
    if (e != 0 && e != EOPNOTSUPP && e != ENOSYS) {
        if (e == ENOSPC || e == EDQUOT)
            rc = dd_fail(err, DD_EIO,
                         "not enough space for %s: it needs %.3g GiB and the file system has "
                         "%.3g GiB free%s; free space or choose another place for the output",
                         path, (double)(bytes + margin) / 1073741824.0, avail / 1073741824.0,
                         e == EDQUOT ? " (or the disk quota is reached)" : "");
        else
            rc = dd_fail(err, DD_EIO, "cannot reserve %.3g GiB for %s: %s",
                         (double)bytes / 1073741824.0, path, strerror(e));
    }
    if (close(fd) != 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close %s after reserving its space: %s", path,
                     strerror(errno));
    return rc;
}

/* Where a new contiguous dataset's data ends in the file (0 if unknown). */
static uint64_t data_end(hid_t d)
{
    haddr_t off = H5Dget_offset(d);
    hsize_t size = H5Dget_storage_size(d);
    return off == HADDR_UNDEF ? 0 : (uint64_t)off + (uint64_t)size;
}

int io_h5_create_dsets(hid_t file, const char *path, int ndsets, const char *const *names,
                       const int64_t (*dims)[2], dd_dtype type, io_h5_table *t, uint64_t *end,
                       dd_err *err)
{
    *end = 0;
    int rc = DD_OK;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t ftype = io_h5_filetype(type);
    /* Contiguous and allocated at creation: parallel HDF5 needs early
     * allocation anyway; never filling avoids writing the matrix twice. */
    if (dcpl < 0 || lcpl < 0 || ftype < 0 || H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ||
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0)
        rc = dd_fail(err, DD_EIO, "cannot set up HDF5 dataset creation properties for %s", path);
    for (int i = 0; rc == DD_OK && i < ndsets; i++) {
        hsize_t hd[2] = {(hsize_t)dims[i][0], (hsize_t)dims[i][1]};
        hid_t space = H5Screate_simple(2, hd, NULL);
        hid_t d = space < 0 ? H5I_INVALID_HID
                            : H5Dcreate2(file, names[i], ftype, space, lcpl, dcpl, H5P_DEFAULT);
        if (space >= 0)
            H5Sclose(space);
        if (d < 0) {
            rc = dd_fail(
                err, DD_EIO, "cannot create dataset \"%s\" (%lld×%lld %s) in %s; is the disk full?",
                names[i], (long long)dims[i][0], (long long)dims[i][1], dd_dtype_name(type), path);
            break;
        }
        if (data_end(d) > *end)
            *end = data_end(d);
        if (t != NULL && io_h5_add(t, names[i], d, dims[i], type, IO_CX_RI) != NULL)
            continue;
        H5Dclose(d);
        if (t != NULL)
            rc = dd_fail(err, DD_ENOMEM, "out of memory creating dataset \"%s\" in %s", names[i],
                         path);
    }
    if (ftype >= 0)
        H5Tclose(ftype);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}

int io_h5_check_block(const char *path, const io_h5_dset *d, dd_dtype type, int64_t row0,
                      int64_t nrows, int64_t col0, int64_t ncols, const void *buf, dd_err *err)
{
    if (type != d->type)
        return dd_fail(err, DD_EUSAGE, "dataset \"%s\" in %s holds %s values, not %s", d->name,
                       path, dd_dtype_name(d->type), dd_dtype_name(type));
    if (row0 < 0 || nrows < 0 || col0 < 0 || ncols < 0 || row0 > d->dims[0] - nrows ||
        col0 > d->dims[1] - ncols)
        return dd_fail(err, DD_EUSAGE,
                       "block of rows %lld+%lld, columns %lld+%lld lies outside dataset \"%s\" "
                       "(%lld×%lld) in %s",
                       (long long)row0, (long long)nrows, (long long)col0, (long long)ncols,
                       d->name, (long long)d->dims[0], (long long)d->dims[1], path);
    if (buf == NULL && nrows > 0 && ncols > 0)
        return dd_fail(err, DD_EUSAGE, "no buffer given for a block of dataset \"%s\" in %s",
                       d->name, path);
    return DD_OK;
}

int io_h5_block_spaces(hid_t dset, int64_t row0, int64_t nrows, int64_t col0, int64_t ncols,
                       hid_t *fspace, hid_t *mspace)
{
    *fspace = H5Dget_space(dset);
    *mspace = H5I_INVALID_HID;
    if (*fspace < 0)
        return -1;
    herr_t ok;
    if (nrows == 0 || ncols == 0) {
        /* An empty block still takes part in collective I/O: none selected. */
        hsize_t one = 1;
        *mspace = H5Screate_simple(1, &one, NULL);
        ok = *mspace < 0 ? -1 : H5Sselect_none(*fspace);
        if (ok >= 0)
            ok = H5Sselect_none(*mspace);
    } else {
        hsize_t start[2] = {(hsize_t)row0, (hsize_t)col0};
        hsize_t count[2] = {(hsize_t)nrows, (hsize_t)ncols};
        ok = H5Sselect_hyperslab(*fspace, H5S_SELECT_SET, start, NULL, count, NULL);
        if (ok >= 0)
            *mspace = H5Screate_simple(2, count, NULL);
        if (*mspace < 0)
            ok = -1;
    }
    if (ok < 0) {
        if (*mspace >= 0)
            H5Sclose(*mspace);
        H5Sclose(*fspace);
        *fspace = *mspace = H5I_INVALID_HID;
        return -1;
    }
    return 0;
}

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

hid_t io_h5_open_read(const char *path)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return H5I_INVALID_HID;
    hid_t f = H5Pset_sieve_buf_size(fapl, 0) < 0 ? H5I_INVALID_HID
                                                : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    return f;
}
