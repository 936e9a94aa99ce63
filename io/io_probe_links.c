/* io_probe_links.c — why a matrix's dataset does not open, for the input
 * probe (io_probe.c): the first soft or external link on its way that
 * leads nowhere (to a file or object that is missing, a FIFO, a file HDF5
 * cannot open), described where it points and what is missing there; else
 * the dataset is absent or the file damaged.  io_probe_impl.h declares
 * what io_probe.c and io_probe_sources.c use. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"
#include "io_probe_impl.h"

/* ---- links that lead nowhere ------------------------------------------------------ */

/* snprintf for descriptions: a name too long for the message is cut short. */
void io_probe_put(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

/* The name of the file that holds the link `p` of `file` (whose own name
 * is `fpath`): its parent group's file, which an external link on the way
 * may have made another one. */
static void link_home(hid_t file, const char *fpath, const char *p, hid_t apl, char *out, size_t n)
{
    io_probe_put(out, n, "%s", fpath);
    const char *slash = strrchr(p, '/');
    if (slash == NULL || slash == p)
        return;
    char parent[1024];
    io_probe_put(parent, sizeof parent, "%.*s", (int)(slash - p), p);
    hid_t g = H5Oopen(file, parent, apl);
    if (g >= 0) {
        char got[4096];
        if (H5Fget_name(g, got, sizeof got) > 0)
            io_probe_put(out, n, "%s", got);
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
            io_probe_put(target, sizeof target, "%s", val);
        else
            io_probe_put(target, sizeof target, "%.*s/%s", (int)(slash - p), p, val);
        int deeper =
            depth < 8 && io_probe_broken_link(file, fpath, target, apl, sub, sizeof sub, depth + 1);
        io_probe_put(out, n, "\"%s\" is a soft link to \"%s\", %s%s", p, val,
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
        io_probe_put(out, n,
                     "\"%s\" is an external link to \"%s\" in file %s, which does not exist (HDF5 "
                     "looks for it beside %s and in the working directory)",
                     p, xobj, xfile, home);
        return 1;
    }
    if (where < 0) {
        io_probe_put(out, n, "\"%s\" is an external link to \"%s\" in file %s, which is %s", p,
                     xobj, found, kind);
        return 1;
    }
    hid_t x = H5Fopen(found, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (x < 0) {
        io_probe_put(out, n,
                     "\"%s\" is an external link to \"%s\" in file %s, which HDF5 cannot open (not "
                     "an HDF5 file?)",
                     p, xobj, found);
        return 1;
    }
    int deeper = depth < 8 && io_probe_broken_link(x, found, xobj, apl, sub, sizeof sub, depth + 1);
    int there = deeper || io_h5_link_exists(x, xobj, apl);
    io_probe_put(out, n, "\"%s\" is an external link to \"%s\" in file %s, %s%s", p, xobj, found,
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
int io_probe_broken_link(hid_t file, const char *fpath, const char *name, hid_t apl, char *out,
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
int io_probe_unreachable(hid_t file, const char *path, const char *label, const char *name,
                         hid_t apl, const io_h5_guard *g, int missing, dd_err *err)
{
    char why[DD_ERRLEN] = "";
    if (g->err.msg[0])
        return dd_fail(err, DD_EUSAGE, "matrix %s (\"%s\" in %s): %s", label, name, path,
                       g->err.msg);
    if (io_probe_broken_link(file, path, name, apl, why, sizeof why, 0))
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
