/* io_probe_sources.c — where a matrix's values come from, for the input
 * probe (io_probe.c): a dataset kept in external raw files, or a virtual
 * dataset's mappings, reads zeros or the fill value wherever a source is
 * missing or short, and their product would pass the check, so every
 * external file must be a regular file that holds what it declares, and
 * every virtual source (nested ones too) must be there and fit its
 * mapping; refused with exit 2 naming the first that does not. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"
#include "io_probe_impl.h"

/* ---- external raw files ------------------------------------------------------------ */

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
int io_probe_check_external(hid_t dset, const char *path, const char *label, const char *name,
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
int io_probe_check_virtual(hid_t dset, const char *path, const char *label, const char *name,
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
        io_probe_put(home, sizeof home, "%s", path);
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
        io_probe_put(
            what, sizeof what,
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
            rc = io_probe_check_virtual(sd, found[0] ? found : path, label, dname, depth + 1, err);
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
