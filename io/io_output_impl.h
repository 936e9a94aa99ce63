/* io_output_impl.h — what the output discipline's three files share,
 * private to io/: io_output.c (prepare, the temporary and the stale sweep,
 * commit, abort), io_output_signals.c (what removes the temporary when a
 * run is interrupted, and writes in pieces) and io_output_checks.c (side
 * outputs' names, room for what will be written).  io.h is the interface. */
#ifndef DD_IO_OUTPUT_IMPL_H
#define DD_IO_OUTPUT_IMPL_H

#include <stddef.h>
#include <sys/types.h>

#include "io.h"

/* The file in the temporary directory that says whose it is. */
#define OWNER_FILE "owner"

/* io_output.c */
/* Splits `path` into its directory ("." when there is none) and base name;
 * -1 where the directory does not fit in `dlen`. */
int io_output_split_path(const char *path, char *dir, size_t dlen, const char **base);
/* Whether p and q (either may be NULL) exist and are one inode. */
int io_output_same_file(const char *p, const char *q);
/* "a symbolic link", "a FIFO", ...: what a file that is not regular is. */
const char *io_output_kind_of(mode_t m);

/* io_output_signals.c */
/* Removes the temporary file, its owner file and its directory (what a
 * signal, the launcher's watch and the abort remove; async-signal-safe). */
void io_output_remove_temporary(const char *file, const char *owner, const char *dir);
/* From prepare on: TERM, INT and HUP remove out's temporary, and so does
 * the launcher's watch where the parent is a launcher. */
void io_output_arm_signals(const dd_output *out);
/* After the commit or the abort: neither removes anything any more. */
void io_output_disarm_signals(void);

#endif
