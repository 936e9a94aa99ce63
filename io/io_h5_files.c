/* io_h5_files.c — the files HDF5 opens on its own (io_h5.h): an external
 * link's target and a virtual dataset's sources, found where HDF5 itself
 * finds them (io_h5_find_file), and the access property list whose
 * external-link traversals refuse a target that is not a regular file, so
 * that HDF5 never opens a FIFO (which would block the open for ever) or a
 * device behind a link (io_h5_guard_apl). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"

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
