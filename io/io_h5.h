/* io_h5.h — helpers private to io/: HDF5 helpers shared by the two I/O
 * paths and the probe, and rank 0's verdict (io_output.c).  The helpers'
 * files: io_h5.c (the dataset table, opening and creating datasets, the
 * space reservation, blocks' checks and dataspaces, opening for reading),
 * io_h5_types.c (names of types, the matrix checks, memory and file
 * types), io_h5_files.c (the files HDF5 opens on its own), io_h5_why.c
 * (HDF5's error stack) and io_h5_attrs.c (attributes).
 *  Every function checks each HDF5 return and
 * turns a failure into one dd_err sentence naming the file and dataset. */
#ifndef DD_IO_H5_H
#define DD_IO_H5_H

#include <hdf5.h>

#include "io.h"

#ifndef H5I_INVALID_HID /* older 1.8 and 1.10 releases */
#define H5I_INVALID_HID (-1)
#endif

/* Every rank returns rank 0's rc and, on failure, rank 0's message
 * (collective over comm). */
int io_bcast_verdict(MPI_Comm comm, int rc, const dd_err *local, dd_err *err);

/* A malloc'ed copy of s (NULL when out of memory): the file and dataset
 * names the handles and the dataset table keep. */
char *io_h5_strdup(const char *s);
/* A short human name for an HDF5 type: "int32", "uint8", "2-byte float", "string". */
void io_h5_type_name(hid_t t, char *out, size_t len);
/* Whether "g1/g2/name" exists, walking one component at a time (H5Lexists
 * fails rather than saying no when an intermediate group is missing);
 * links are traversed with `lapl` (H5P_DEFAULT, or a guard's below). */
int io_h5_link_exists(hid_t file, const char *name, hid_t lapl);

/* ---- the files HDF5 opens on its own: external links' targets, virtual
 * datasets' sources ---- */

/* Where HDF5 finds file `name`, named by an external link (env
 * "HDF5_EXT_PREFIX") or a virtual dataset's mapping (env "HDF5_VDS_PREFIX")
 * in file `parent`, trying HDF5's places in HDF5's order (an absolute name
 * as given; then, without its directory, the environment's prefixes, the
 * parent's directory, the working directory, the directory of the parent's
 * real path).  1: `out` is the regular file HDF5 opens; 0: none exists
 * (`out` empty); -1: `out` is the first one there and it is not a regular
 * file (*kind says what: "a FIFO", ...; a FIFO would block open(2) for
 * ever).  Directories are passed over, as HDF5's failed open passes them. */
int io_h5_find_file(const char *parent, const char *name, const char *env, char *out, size_t n,
                    const char **kind);
/* "a FIFO", "a character device", ... for a file that is not regular. */
const char *io_h5_file_kind(unsigned mode);

/* A dataset (and link) access property list whose external-link traversals
 * refuse a target that is not a regular file: the traversal fails, HDF5
 * never opens it, and g->err says which link and file (exit status 2).
 * The caller closes the list; g lives as long as it. */
typedef struct {
    dd_err err;
} io_h5_guard;
hid_t io_h5_guard_apl(io_h5_guard *g);

/* ---- why an HDF5 call failed, read from HDF5's error stack right after
 * the failed call (any other HDF5 call clears it) ---- */

/* After H5Fopen(path) failed: 0 when the stack says nothing specific, else
 * the message: a truncated file (how many bytes are missing: exit 2), or a
 * file another program holds open for writing (wait: exit 1). */
int io_h5_explain_open(const char *path, dd_err *err);
/* After H5Dread of rows row0+nrows, columns col0+ncols of dataset `dset`
 * failed (`how`: "" or " collectively"): the message, from the stack: a
 * fletcher32 checksum that failed, or a filter that could not decode the
 * data (the file is corrupt: exit 2), else HDF5's innermost reason (exit 1). */
int io_h5_read_failed(const char *path, const char *dset, int64_t row0, int64_t nrows, int64_t col0,
                      int64_t ncols, const char *how, dd_err *err);
/* 2-D, of floats of 8 or 4 bytes or of complex numbers of them: its dims
 * and type, or one message (exit 2 for a dataset of any other type);
 * `label` ("A", "B") names the matrix in it, NULL only the dataset.
 * *names (where not NULL): which member names a complex type has
 * (IO_CX_RI, IO_CX_REALIMAG; IO_CX_RI for real types).
 *
 * A complex element is an HDF5 compound of exactly two members, the real
 * part at byte 0 and the imaginary part at byte 8 (complex128) or 4
 * (complex64), both floats of that size and of one format, with no
 * padding: as h5py and numpy write complex128 and complex64.  The members
 * are named "r" and "i" (h5py) or "real" and "imag" (other writers). */
enum { IO_CX_RI = 0, IO_CX_REALIMAG = 1 };
int io_h5_check_matrix(hid_t dset, const char *path, const char *name, const char *label,
                       int64_t dims[2], dd_dtype *type, int *names, dd_err *err);

/* H5Fopen for reading with no sieve buffer: a column of a contiguous
 * row-major dataset is then one small read per row, not a 64 KiB sieve
 * read per row (a column of a 16384-square FP64 matrix: 0.018 s against
 * 0.17 s; rows and wide blocks are read whole either way). */
hid_t io_h5_open_read(const char *path);

/* The memory type of an element (native floats; a complex one with the
 * member names `names`, the file's, so that a file of native floats is read
 * with no conversion), and the file type of new datasets (IEEE little
 * endian; complex members "r" and "i", what h5py reads back as complex).
 * New types: the caller closes them (H5Tclose); H5I_INVALID_HID when HDF5
 * cannot make one. */
hid_t io_h5_memtype(dd_dtype t, int names);
hid_t io_h5_filetype(dd_dtype t);

/* The datasets a file handle knows about, opened once and cached by name. */
typedef struct {
    char *name;
    hid_t id; /* H5I_INVALID_HID where the dataset is not held open */
    int64_t dims[2];
    dd_dtype type;
    int names; /* a complex type's member names: IO_CX_RI, IO_CX_REALIMAG */
    hid_t mem; /* io_h5_memtype(type, names), owned by the table */
} io_h5_dset;

typedef struct {
    io_h5_dset *d;
    int n, cap;
} io_h5_table;

io_h5_dset *io_h5_find(io_h5_table *t, const char *name);
/* Adds an entry (name copied, its memory type made); NULL when out of
 * memory or HDF5 cannot make the type. */
io_h5_dset *io_h5_add(io_h5_table *t, const char *name, hid_t id, const int64_t dims[2],
                      dd_dtype type, int names);
/* Closes every held dataset and frees the table; returns DD_OK or the first failure. */
int io_h5_table_free(io_h5_table *t, const char *path, dd_err *err);

/* Opens dataset `name` of `file` and adds it to `t`, checking that it is a
 * matrix as io_h5_check_matrix says. */
int io_h5_open_dset(io_h5_table *t, hid_t file, const char *path, const char *name,
                    io_h5_dset **out, dd_err *err);

/* Creates the datasets (contiguous, space allocated at once, never filled);
 * when `t` is not NULL the open handles are kept there, else closed.  *end:
 * where their data ends in the file, for io_h5_reserve(). */
int io_h5_create_dsets(hid_t file, const char *path, int ndsets, const char *const *names,
                       const int64_t (*dims)[2], dd_dtype type, io_h5_table *t, uint64_t *end,
                       dd_err *err);

/* Before any data is written (one rank): allocates the file's first `bytes`
 * on disk, so that a full disk or quota is found now with a message saying
 * how much is needed, not by writes that some MPI-IO layers let fail without
 * a word (and, collectively, hang on).  On file systems without fallocate
 * the free space is compared instead (DD_FAULT=no-fallocate takes that path
 * in tests); the read-back of the output still guards them. */
int io_h5_reserve(const char *path, uint64_t bytes, dd_err *err);

/* Checks a block request against the dataset before any (collective) I/O. */
int io_h5_check_block(const char *path, const io_h5_dset *d, dd_dtype type, int64_t row0,
                      int64_t nrows, int64_t col0, int64_t ncols, const void *buf, dd_err *err);

/* File and memory dataspaces for a block: a hyperslab, or none selected on
 * both when the block is empty.  On failure both are H5I_INVALID_HID. */
int io_h5_block_spaces(hid_t dset, int64_t row0, int64_t nrows, int64_t col0, int64_t ncols,
                       hid_t *fspace, hid_t *mspace);

/* Writes the attributes on object `obj` of `file`, replacing any of the same name. */
int io_h5_write_attrs(hid_t file, const char *path, const char *obj, const dd_attr *attrs,
                      int nattrs, dd_err *err);

#endif
