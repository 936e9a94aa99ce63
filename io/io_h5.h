/* io_h5.h — helpers private to io/: HDF5 helpers shared by the two I/O
 * paths and the probe (io_h5.c), and rank 0's verdict (io_output.c).
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
 * fails rather than saying no when an intermediate group is missing). */
int io_h5_link_exists(hid_t file, const char *name);
/* 2-D IEEE float of 8 or 4 bytes: its dims and type, or one message;
 * `label` ("A", "B") names the matrix in it, NULL only the dataset. */
int io_h5_check_matrix(hid_t dset, const char *path, const char *name, const char *label,
                       int64_t dims[2], dd_dtype *type, dd_err *err);

/* Memory type for reads and writes; file type for new datasets (IEEE, little endian). */
hid_t io_h5_memtype(dd_dtype t);
hid_t io_h5_filetype(dd_dtype t);

/* The datasets a file handle knows about, opened once and cached by name. */
typedef struct {
    char *name;
    hid_t id; /* H5I_INVALID_HID where the dataset is not held open */
    int64_t dims[2];
    dd_dtype type;
} io_h5_dset;

typedef struct {
    io_h5_dset *d;
    int n, cap;
} io_h5_table;

io_h5_dset *io_h5_find(io_h5_table *t, const char *name);
/* Adds an entry (name copied); NULL when out of memory. */
io_h5_dset *io_h5_add(io_h5_table *t, const char *name, hid_t id, const int64_t dims[2],
                      dd_dtype type);
/* Closes every held dataset and frees the table; returns DD_OK or the first failure. */
int io_h5_table_free(io_h5_table *t, const char *path, dd_err *err);

/* Opens dataset `name` of `file` and adds it to `t`, checking that it is a 2-D
 * IEEE float of 8 or 4 bytes. */
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
