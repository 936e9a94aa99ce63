/* io_probe.c — the input probe (io.h): rank 0 opens the input read-only,
 * checks that A and B (and C's input, for beta ≠ 0) are matrices that fit
 * together as GEMM's flags say, and broadcasts its verdict and the sizes,
 * so every rank returns the same rc and message. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"

typedef struct {
    int64_t rows, cols;
    dd_dtype type;
} probe_mat;

/* The bytes of external file `ext` (as HDF5 names it: relative to the
 * working directory, else beside the input), or -1 when neither exists;
 * *mode: its type (a FIFO would block HDF5's open for ever). */
static long long external_size(const char *path, const char *ext, unsigned *mode)
{
    struct stat st;
    *mode = 0;
    if (stat(ext, &st) == 0) {
        *mode = (unsigned)st.st_mode;
        return (long long)st.st_size;
    }
    char beside[4096];
    const char *slash = strrchr(path, '/');
    if (ext[0] == '/' || !slash ||
        snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - path), path, ext) >=
            (int)sizeof beside ||
        stat(beside, &st) != 0)
        return -1;
    *mode = (unsigned)st.st_mode;
    return (long long)st.st_size;
}

/* A dataset kept in external raw files that hold less than they declare
 * reads its missing values as zeros, and the product of those zeros would
 * pass the check: refused. */
static int check_external(hid_t dset, const char *path, const char *label, const char *name,
                          dd_err *err)
{
    hid_t dcpl = H5Dget_create_plist(dset);
    int n = dcpl < 0 ? 0 : H5Pget_external_count(dcpl), rc = DD_OK;
    for (int i = 0; i < n && rc == DD_OK; i++) {
        char ext[1024] = "";
        off_t off = 0;
        hsize_t size = 0;
        if (H5Pget_external(dcpl, (unsigned)i, sizeof ext, ext, &off, &size) < 0)
            rc = dd_fail(err, DD_EIO, "cannot read where dataset %s (\"%s\" in %s) keeps its data",
                         label, name, path);
        unsigned mode = 0;
        long long have = rc ? 0 : external_size(path, ext, &mode);
        if (rc == DD_OK && have >= 0 && !S_ISREG((mode_t)mode))
            rc = dd_fail(err, DD_EUSAGE,
                         "dataset %s (\"%s\" in %s) keeps its values in external file %s, which "
                         "is %s, not a regular file (reading it could wait for ever); store the "
                         "values in a regular file",
                         label, name, path, ext, io_h5_file_kind(mode));
        else if (rc == DD_OK && size != H5F_UNLIMITED && have < (long long)(off + (off_t)size))
            rc = dd_fail(err, DD_EUSAGE,
                         "dataset %s (\"%s\" in %s) keeps its values in external file %s, which "
                         "%s: the missing values would read as zeros; complete that file or store "
                         "the dataset in %s",
                         label, name, path, ext,
                         have < 0 ? "is missing" : "is shorter than declared", path);
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}

/* ---- links that lead nowhere ------------------------------------------------------ */

/* snprintf for descriptions: a name too long for the message is cut short. */
static void put(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

static int broken_link(hid_t file, const char *fpath, const char *name, hid_t apl, char *out,
                       size_t n, int depth);

/* The name of the file that holds the link `p` of `file` (whose own name
 * is `fpath`): its parent group's file, which an external link on the way
 * may have made another one. */
static void link_home(hid_t file, const char *fpath, const char *p, hid_t apl, char *out, size_t n)
{
    put(out, n, "%s", fpath);
    const char *slash = strrchr(p, '/');
    if (slash == NULL || slash == p)
        return;
    char parent[1024];
    put(parent, sizeof parent, "%.*s", (int)(slash - p), p);
    hid_t g = H5Oopen(file, parent, apl);
    if (g >= 0) {
        char got[4096];
        if (H5Fget_name(g, got, sizeof got) > 0)
            put(out, n, "%s", got);
        H5Oclose(g);
    }
}

/* Link `p` of `file` (soft or external, `li`) that does not resolve,
 * described in out: where it points and what is missing there. */
static int describe_link(hid_t file, const char *fpath, const char *p, const H5L_info_t *li,
                         hid_t apl, char *out, size_t n, int depth)
{
    char val[2048], sub[1024] = "";
    if (li->u.val_size == 0 || li->u.val_size > sizeof val ||
        H5Lget_val(file, p, val, sizeof val, apl) < 0)
        return 0;
    if (li->type == H5L_TYPE_SOFT) {
        char target[2048];
        const char *slash = strrchr(p, '/');
        if (val[0] == '/' || slash == NULL)
            put(target, sizeof target, "%s", val);
        else
            put(target, sizeof target, "%.*s/%s", (int)(slash - p), p, val);
        int deeper = depth < 8 && broken_link(file, fpath, target, apl, sub, sizeof sub, depth + 1);
        put(out, n, "\"%s\" is a soft link to \"%s\", %s%s", p, val,
            deeper ? "and " : "which does not exist", sub);
        return 1;
    }
    if (li->type != H5L_TYPE_EXTERNAL)
        return 0;
    unsigned flags = 0;
    const char *xfile = NULL, *xobj = NULL;
    if (H5Lunpack_elink_val(val, li->u.val_size, &flags, &xfile, &xobj) < 0 || !xfile || !xobj)
        return 0;
    char home[4096], found[4096];
    const char *kind = "";
    link_home(file, fpath, p, apl, home, sizeof home);
    int where = io_h5_find_file(home, xfile, "HDF5_EXT_PREFIX", found, sizeof found, &kind);
    if (where == 0) {
        put(out, n,
            "\"%s\" is an external link to \"%s\" in file %s, which does not exist (HDF5 "
            "looks for it beside %s and in the working directory)",
            p, xobj, xfile, home);
        return 1;
    }
    if (where < 0) {
        put(out, n, "\"%s\" is an external link to \"%s\" in file %s, which is %s", p, xobj, found,
            kind);
        return 1;
    }
    hid_t x = H5Fopen(found, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (x < 0) {
        put(out, n,
            "\"%s\" is an external link to \"%s\" in file %s, which HDF5 cannot open (not "
            "an HDF5 file?)",
            p, xobj, found);
        return 1;
    }
    int deeper = depth < 8 && broken_link(x, found, xobj, apl, sub, sizeof sub, depth + 1);
    int there = deeper || io_h5_link_exists(x, xobj, apl);
    put(out, n, "\"%s\" is an external link to \"%s\" in file %s, %s%s", p, xobj, found,
        deeper  ? "where "
        : there ? "which cannot be opened"
                : "which has no such object",
        sub);
    H5Fclose(x);
    return 1;
}

/* The first link on the path `name` in `file` (named `fpath`) that does
 * not resolve: 1 with its description in out, else 0 (every link on the
 * way resolves, or a link is simply absent). */
static int broken_link(hid_t file, const char *fpath, const char *name, hid_t apl, char *out,
                       size_t n, int depth)
{
    char p[1024];
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof p)
        return 0;
    memcpy(p, name, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        H5L_info_t li;
        if (H5Lget_info(file, p, &li, apl) < 0)
            return 0;
        if (li.type != H5L_TYPE_HARD && H5Oexists_by_name(file, p, apl) <= 0)
            return describe_link(file, fpath, p, &li, apl, out, n, depth);
        p[i] = c;
    }
    return 0;
}

static const char *option_of(const char *label)
{
    return label[0] == 'A' ? "a" : label[0] == 'B' ? "b" : "c";
}

/* Matrix `label`'s dataset `name` does not open: a link on its way that
 * points to nothing or to a FIFO (exit 2, naming it), else `fallback`. */
static int unreachable(hid_t file, const char *path, const char *label, const char *name, hid_t apl,
                       const io_h5_guard *g, int missing, dd_err *err)
{
    char why[DD_ERRLEN] = "";
    if (g->err.msg[0])
        return dd_fail(err, DD_EUSAGE, "matrix %s (\"%s\" in %s): %s", label, name, path,
                       g->err.msg);
    if (broken_link(file, path, name, apl, why, sizeof why, 0))
        return dd_fail(err, DD_EUSAGE,
                       "matrix %s (\"%s\" in %s) cannot be read: %s; make the link point to the "
                       "dataset, or name the right one with --%s",
                       label, name, path, why, option_of(label));
    if (missing)
        return dd_fail(err, DD_EUSAGE,
                       "input file %s has no dataset \"%s\" for matrix %s; name the right one "
                       "with --%s",
                       path, name, label, option_of(label));
    return dd_fail(err, DD_EIO, "cannot open \"%s\" in input file %s; is the file damaged?", name,
                   path);
}

/* ---- virtual datasets -------------------------------------------------------------- */

/* A mapping's name with HDF5's "%%" escapes undone; 0 for a printf-style
 * name ("%b": the sources of an unlimited mapping, as many as there are). */
static int literal_name(const char *in, char *out, size_t n)
{
    size_t j = 0;
    for (size_t i = 0; in[i] && j + 1 < n; i++) {
        if (in[i] == '%') {
            if (in[i + 1] != '%')
                return 0;
            i++;
        }
        out[j++] = in[i];
    }
    out[j] = '\0';
    return 1;
}

/* A virtual dataset reads the fill value wherever a source file or source
 * dataset is missing, or smaller than its mapping, and the product of those
 * values would pass the check: every source must be there (exit 2 naming
 * the first that is not).  Nested virtual sources are checked the same way. */
static int check_virtual(hid_t dset, const char *path, const char *label, const char *name,
                         int depth, dd_err *err)
{
    hid_t dcpl = H5Dget_create_plist(dset);
    size_t count = 0;
    if (dcpl < 0)
        return dd_fail(err, DD_EIO, "cannot read the storage layout of dataset %s (\"%s\" in %s)",
                       label, name, path);
    int rc = DD_OK;
    if (H5Pget_layout(dcpl) != H5D_VIRTUAL) {
        H5Pclose(dcpl);
        return DD_OK;
    }
    char home[4096]; /* the file that holds the virtual dataset: source names are relative to it */
    if (H5Fget_name(dset, home, sizeof home) <= 0)
        put(home, sizeof home, "%s", path);
    if (H5Pget_virtual_count(dcpl, &count) < 0)
        rc = dd_fail(err, DD_EIO, "cannot read the mappings of virtual dataset %s (\"%s\" in %s)",
                     label, name, path);
    for (size_t i = 0; rc == DD_OK && i < count; i++) {
        char fraw[2048] = "", draw[1024] = "", fname[2048], dname[1024], found[4096];
        const char *kind = "";
        if (H5Pget_virtual_filename(dcpl, i, fraw, sizeof fraw) < 0 ||
            H5Pget_virtual_dsetname(dcpl, i, draw, sizeof draw) < 0) {
            rc =
                dd_fail(err, DD_EIO, "cannot read mapping %zu of virtual dataset %s (\"%s\" in %s)",
                        i, label, name, path);
            break;
        }
        if (!literal_name(fraw, fname, sizeof fname) || !literal_name(draw, dname, sizeof dname))
            continue;
        char what[1400];
        put(what, sizeof what,
            "dataset %s (\"%s\" in %s) is a virtual dataset whose mapping %zu reads \"%s\" "
            "in %s",
            label, name, path, i, dname, fname);
        const char *advice = "those values would read as the fill value (and pass the check)";
        int where = strcmp(fname, ".") == 0 ? 1
                                            : io_h5_find_file(home, fname, "HDF5_VDS_PREFIX", found,
                                                              sizeof found, &kind);
        if (where == 0) {
            rc = dd_fail(err, DD_EUSAGE,
                         "%s, which does not exist (looked for beside %s and in the working "
                         "directory): %s; restore that file",
                         what, home, advice);
            break;
        }
        if (where < 0) {
            rc = dd_fail(err, DD_EUSAGE,
                         "%s, and %s is %s, not a regular file (reading it could wait for ever)",
                         what, found, kind);
            break;
        }
        hid_t src = strcmp(fname, ".") == 0 ? H5Iget_file_id(dset)
                                            : H5Fopen(found, H5F_ACC_RDONLY, H5P_DEFAULT);
        io_h5_guard g;
        hid_t apl = src < 0 ? H5I_INVALID_HID : io_h5_guard_apl(&g);
        hid_t sd = apl < 0 || !io_h5_link_exists(src, dname, apl) ? H5I_INVALID_HID
                                                                  : H5Dopen2(src, dname, apl);
        hid_t sel = sd < 0 ? H5I_INVALID_HID : H5Pget_virtual_srcspace(dcpl, i);
        hid_t ext = sd < 0 ? H5I_INVALID_HID : H5Dget_space(sd);
        if (src < 0)
            rc = dd_fail(err, DD_EUSAGE, "%s, which HDF5 cannot open (not an HDF5 file?): %s", what,
                         advice);
        else if (apl >= 0 && g.err.msg[0])
            rc = dd_fail(err, DD_EUSAGE, "%s: %s", what, g.err.msg);
        else if (sd < 0)
            rc = dd_fail(err, DD_EUSAGE, "%s, which has no dataset \"%s\": %s; restore it", what,
                         dname, advice);
        else if (sel >= 0 && ext >= 0 && H5Sget_select_type(sel) == H5S_SEL_ALL) {
            /* all of the source: it must hold as many values as the mapping's
             * part of the virtual dataset (HDF5 keeps no extent for it) */
            hid_t vsel = H5Pget_virtual_vspace(dcpl, i);
            hssize_t need = vsel < 0 ? -1 : H5Sget_select_npoints(vsel);
            hssize_t have = H5Sget_simple_extent_npoints(ext);
            if (need > 0 && have >= 0 && have != need)
                rc = dd_fail(err, DD_EUSAGE,
                             "%s, which holds %lld values where the mapping needs %lld: HDF5 "
                             "cannot read it as mapped; make the source and the mapping agree",
                             what, (long long)have, (long long)need);
            if (vsel >= 0)
                H5Sclose(vsel);
        } else if (sel >= 0 && ext >= 0) {
            /* a selection in the source: inside the source's extent now (an
             * unlimited selection has no bounds, and is not checked) */
            hsize_t lo[H5S_MAX_RANK], hi[H5S_MAX_RANK], dims[H5S_MAX_RANK];
            int nd = H5Sget_simple_extent_ndims(ext), ns = H5Sget_simple_extent_ndims(sel);
            if (nd > 0 && nd == ns && H5Sget_select_npoints(sel) > 0 &&
                H5Sget_select_bounds(sel, lo, hi) >= 0 &&
                H5Sget_simple_extent_dims(ext, dims, NULL) >= 0)
                for (int k = 0; k < nd && rc == DD_OK; k++)
                    if (hi[k] >= dims[k])
                        rc = dd_fail(err, DD_EUSAGE,
                                     "%s, which has only %llu where the mapping needs %llu in "
                                     "dimension %d: the values past its end cannot be read as "
                                     "mapped; make the source and the mapping agree",
                                     what, (unsigned long long)dims[k],
                                     (unsigned long long)hi[k] + 1, k + 1);
        }
        if (rc == DD_OK && sd >= 0 && depth < 4)
            rc = check_virtual(sd, found[0] ? found : path, label, dname, depth + 1, err);
        if (ext >= 0)
            H5Sclose(ext);
        if (sel >= 0)
            H5Sclose(sel);
        if (sd >= 0)
            H5Dclose(sd);
        if (apl >= 0)
            H5Pclose(apl);
        if (src >= 0)
            H5Fclose(src);
    }
    H5Pclose(dcpl);
    return rc;
}

/* Checks one matrix dataset; `label` is "A", "B" or "C", `name` its name in the file. */
static int probe_matrix(hid_t file, const char *path, const char *label, const char *name,
                        probe_mat *m, dd_err *err)
{
    io_h5_guard g;
    hid_t apl = io_h5_guard_apl(&g);
    if (apl < 0)
        return dd_fail(err, DD_EIO, "cannot make an HDF5 access property list for %s", path);
    hid_t obj = H5I_INVALID_HID;
    int there = io_h5_link_exists(file, name, apl);
    if (there)
        obj = H5Oopen(file, name, apl);
    if (obj < 0) {
        int rc = unreachable(file, path, label, name, apl, &g, !there, err);
        H5Pclose(apl);
        return rc;
    }
    H5Pclose(apl);
    int rc = DD_OK;
    int64_t dims[2] = {0, 0};
    if (H5Iget_type(obj) != H5I_DATASET)
        rc = dd_fail(err, DD_EUSAGE,
                     "\"%s\" in input file %s is not a dataset (a group?); matrix %s must be a "
                     "2-D dataset",
                     name, path, label);
    else
        rc = io_h5_check_matrix(obj, path, name, label, dims, &m->type, NULL, err);
    if (rc == DD_OK && (dims[0] == 0 || dims[1] == 0))
        rc = dd_fail(err, DD_EUSAGE,
                     "dataset %s (\"%s\" in %s) is %lld×%lld; dgemm-dist needs a non-empty matrix",
                     label, name, path, (long long)dims[0], (long long)dims[1]);
    if (rc == DD_OK)
        rc = check_external(obj, path, label, name, err);
    if (rc == DD_OK)
        rc = check_virtual(obj, path, label, name, 0, err);
    m->rows = dims[0];
    m->cols = dims[1];
    H5Oclose(obj);
    return rc;
}

/* The file itself: there, readable, HDF5; then opened read-only. */
static int open_input(const char *path, hid_t *file, dd_err *err)
{
    struct stat st;
    if (path == NULL || path[0] == '\0')
        return dd_fail(err, DD_EUSAGE, "no input file given; pass --in FILE");
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return dd_fail(err, DD_EUSAGE, "cannot open input file %s: no such file", path);
        return dd_fail(err, DD_EIO, "cannot open input file %s: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return dd_fail(err, DD_EUSAGE, "input %s is a directory, not an HDF5 file", path);
    /* before anything opens it: open(2) of a FIFO waits for a writer for ever */
    if (!S_ISREG(st.st_mode))
        return dd_fail(err, DD_EUSAGE,
                       "input %s is %s, not a regular file; dgemm-dist reads HDF5 files only", path,
                       io_h5_file_kind((unsigned)st.st_mode));
    if (access(path, R_OK) != 0)
        return dd_fail(err, DD_EIO, "cannot open input file %s: %s", path, strerror(errno));
#if H5_VERSION_GE(1, 12, 0)
    htri_t is = H5Fis_accessible(path, H5P_DEFAULT);
#else
    htri_t is = H5Fis_hdf5(path);
#endif
    if (is == 0)
        return dd_fail(err, DD_EUSAGE, "input file %s is not an HDF5 file", path);
    if (is < 0)
        return dd_fail(err, DD_EIO, "cannot read input file %s to check that it is HDF5", path);
    *file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int rc = *file < 0 ? io_h5_explain_open(path, err) : DD_OK;
    if (*file < 0 && rc == DD_OK)
        rc =
            dd_fail(err, DD_EIO, "cannot open input file %s with HDF5; is the file damaged?", path);
    return rc;
}

/* "--transa T --order col" (the options that differ from the defaults), or "" */
static void layout_words(const dd_probe_gemm *g, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s",
             g->transa == 'T'   ? " --transa T"
             : g->transa == 'C' ? " --transa C"
                                : "",
             g->transb == 'T'   ? " --transb T"
             : g->transb == 'C' ? " --transb C"
                                : "",
             g->col ? " --order col" : "");
}

/* "f64", "c128 (complex)": an element type in a message. */
static const char *type_words(dd_dtype t)
{
    return t == DD_C128 ? "c128 (complex)" : t == DD_C64 ? "c64 (complex)" : dd_dtype_name(t);
}

/* op(A) M×K and op(B) K×N from the stored shapes; their K must agree. */
static int fit_ab(const char *path, const dd_probe_gemm *g, const probe_mat *ma,
                  const probe_mat *mb, int64_t mnk[3], dd_err *err)
{
    /* 'C' (the conjugate transpose) is stored as 'T' is */
    int ta = (g->transa != 'N') != (g->col != 0), tb = (g->transb != 'N') != (g->col != 0);
    int64_t am = ta ? ma->cols : ma->rows, ak = ta ? ma->rows : ma->cols;
    int64_t bk = tb ? mb->cols : mb->rows, bn = tb ? mb->rows : mb->cols;
    char words[64];
    layout_words(g, words, sizeof words);
    if (ma->type != mb->type)
        return dd_fail(err, DD_EUSAGE,
                       "A is %s but B is %s in %s; store both with the same element type%s",
                       type_words(ma->type), type_words(mb->type), path,
                       dd_dtype_complex(ma->type) != dd_dtype_complex(mb->type)
                           ? " (dgemm-dist multiplies complex by complex and real by real)"
                           : "");
    if (ak != bk && !words[0])
        return dd_fail(
            err, DD_EUSAGE, "A is %lld×%lld but B is %lld×%lld: A's columns must equal B's rows",
            (long long)ma->rows, (long long)ma->cols, (long long)mb->rows, (long long)mb->cols);
    if (ak != bk)
        return dd_fail(err, DD_EUSAGE,
                       "%s: op(B) is %lld×%lld but op(A) has %lld columns (A is stored %lld×%lld "
                       "and B %lld×%lld in %s); op(A)'s columns must equal op(B)'s rows: check "
                       "--transa, --transb and --order",
                       words + 1, (long long)bk, (long long)bn, (long long)ak, (long long)ma->rows,
                       (long long)ma->cols, (long long)mb->rows, (long long)mb->cols, path);
    mnk[0] = am;
    mnk[1] = bn;
    mnk[2] = ak;
    return DD_OK;
}

/* C's input (beta ≠ 0): there, of A's type, M×N as stored (N×M with col). */
static int probe_c(hid_t file, const char *path, const dd_probe_gemm *g, dd_dtype type,
                   const int64_t mnk[3], dd_err *err)
{
    probe_mat mc;
    /* absent, as opposed to behind a link that leads nowhere (probe_matrix says which) */
    io_h5_guard gd;
    hid_t apl = io_h5_guard_apl(&gd);
    int there = 0, broken = 0;
    if (apl >= 0) {
        char why[DD_ERRLEN];
        there = io_h5_link_exists(file, g->c, apl);
        broken =
            !there && (gd.err.msg[0] || broken_link(file, path, g->c, apl, why, sizeof why, 0));
        H5Pclose(apl);
    }
    if (!there && !broken) {
        char beta[64]; /* --beta as given: RE, RE+IMi or IMi */
        if (g->beta_im == 0)
            snprintf(beta, sizeof beta, "%g", g->beta);
        else if (g->beta == 0)
            snprintf(beta, sizeof beta, "%gi", g->beta_im);
        else
            snprintf(beta, sizeof beta, "%g%+gi", g->beta, g->beta_im);
        return dd_fail(err, DD_EUSAGE,
                       "--beta %s needs C's input, but input file %s has no dataset \"%s\": name "
                       "it with --c, or use --beta 0 (C = alpha·op(A)·op(B))",
                       beta, path, g->c);
    }
    int rc = probe_matrix(file, path, "C", g->c, &mc, err);
    int64_t rows = g->col ? mnk[1] : mnk[0], cols = g->col ? mnk[0] : mnk[1];
    if (!rc && mc.type != type)
        rc = dd_fail(err, DD_EUSAGE,
                     "C (\"%s\" in %s) is %s but A and B are %s; store C with their element "
                     "type",
                     g->c, path, type_words(mc.type), type_words(type));
    if (!rc && (mc.rows != rows || mc.cols != cols))
        rc = dd_fail(err, DD_EUSAGE,
                     "C (\"%s\" in %s) is stored %lld×%lld but op(A)·op(B) is %lld×%lld, so C "
                     "must be stored %lld×%lld%s",
                     g->c, path, (long long)mc.rows, (long long)mc.cols, (long long)mnk[0],
                     (long long)mnk[1], (long long)rows, (long long)cols,
                     g->col ? " (its transpose: --order col)" : "");
    return rc;
}

static int probe_local(const char *path, const dd_probe_gemm *g, int complex_ok, int64_t mnk[3],
                       dd_dtype *type, dd_err *err)
{
    hid_t file = -1;
    int rc = open_input(path, &file, err);
    if (rc)
        return rc;
    probe_mat ma, mb;
    rc = probe_matrix(file, path, "A", g->a, &ma, err);
    if (rc == DD_OK)
        rc = probe_matrix(file, path, "B", g->b, &mb, err);
    if (rc == DD_OK)
        rc = fit_ab(path, g, &ma, &mb, mnk, err);
    if (rc == DD_OK && dd_dtype_complex(ma.type) && !complex_ok)
        rc = dd_fail(err, DD_EUSAGE,
                     "A and B in %s are %s: this program multiplies real matrices only (f64, "
                     "f32); store them as real floats",
                     path, type_words(ma.type));
    if (rc == DD_OK && g->need_c)
        rc = probe_c(file, path, g, ma.type, mnk, err);
    *type = ma.type;
    if (H5Fclose(file) < 0 && rc == DD_OK)
        rc = dd_fail(err, DD_EIO, "cannot close input file %s after checking it", path);
    return rc;
}

static int probe_gemm(MPI_Comm comm, const char *path, const dd_probe_gemm *g, int complex_ok,
                      int64_t *M, int64_t *N, int64_t *K, dd_dtype *type, dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    io_quiet();
    struct {
        int rc, type;
        int64_t mnk[3];
    } v;
    memset(&v, 0, sizeof v);
    dd_err local;
    dd_err_clear(&local);
    if (rank == 0) {
        dd_dtype t = DD_F64;
        v.rc = probe_local(path, g, complex_ok, v.mnk, &t, &local);
        v.type = (int)t;
    }
    if (MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        return dd_fail(err, DD_EFAIL, "MPI_Bcast failed while sharing the input file's shape");
    int rc = io_bcast_verdict(comm, v.rc, &local, err);
    if (rc != DD_OK)
        return rc;
    *M = v.mnk[0];
    *N = v.mnk[1];
    *K = v.mnk[2];
    *type = (dd_dtype)v.type;
    return DD_OK;
}

int io_probe_gemm(MPI_Comm comm, const char *path, const dd_probe_gemm *g, int64_t *M, int64_t *N,
                  int64_t *K, dd_dtype *type, dd_err *err)
{
    return probe_gemm(comm, path, g, 0, M, N, K, type, err);
}

int io_probe_gemm_cx(MPI_Comm comm, const char *path, const dd_probe_gemm *g, int64_t *M,
                     int64_t *N, int64_t *K, dd_dtype *type, dd_err *err)
{
    return probe_gemm(comm, path, g, 1, M, N, K, type, err);
}

int io_probe_inputs(MPI_Comm comm, const char *path, const char *a, const char *b, int64_t *M,
                    int64_t *N, int64_t *K, dd_dtype *type, dd_err *err)
{
    dd_probe_gemm g = {a ? a : "A", b ? b : "B", "C", 'N', 'N', 0, 0, 0, 0};
    return io_probe_gemm_cx(comm, path, &g, M, N, K, type, err);
}
