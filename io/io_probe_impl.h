/* io_probe_impl.h — what the input probe's three files share, private to
 * io/: io_probe.c (the file, each matrix's dataset and type, how A, B and
 * C fit together, the broadcast of the verdict, the real and complex
 * entries), io_probe_links.c (links on a dataset's way that lead nowhere)
 * and io_probe_sources.c (external raw files, virtual datasets' sources).
 * io.h is the interface. */
#ifndef DD_IO_PROBE_IMPL_H
#define DD_IO_PROBE_IMPL_H

#include <stddef.h>

#include <hdf5.h>

#include "io.h"
#include "io_h5.h"

/* io_probe_links.c */
/* snprintf for descriptions: a name too long for the message is cut short. */
void io_probe_put(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The first link on the path `name` in `file` (named `fpath`) that does
 * not resolve: 1 with its description in out, else 0. */
int io_probe_broken_link(hid_t file, const char *fpath, const char *name, hid_t apl, char *out,
                         size_t n, int depth);
/* Matrix `label`'s dataset `name` does not open: why (exit 2 for a link
 * that leads nowhere or a dataset that is `missing`, else exit 1). */
int io_probe_unreachable(hid_t file, const char *path, const char *label, const char *name,
                         hid_t apl, const io_h5_guard *g, int missing, dd_err *err);

/* io_probe_sources.c */
/* External raw files that hold less than they declare, or are not regular: refused. */
int io_probe_check_external(hid_t dset, const char *path, const char *label, const char *name,
                            dd_err *err);
/* A virtual dataset's sources, every one there and fitting its mapping. */
int io_probe_check_virtual(hid_t dset, const char *path, const char *label, const char *name,
                           int depth, dd_err *err);

#endif
