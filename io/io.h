/* io.h — HDF5 reads and writes of distributed blocks, behind one ops struct.
 *
 * Two paths, chosen with --io:
 *   "collective"  (io_collective.c): every rank opens the file through the
 *                 MPI-IO driver and reads/writes its hyperslab collectively.
 *                 Needs parallel HDF5 (DD_HAVE_PHDF5).
 *   "independent" (io_independent.c): every rank opens the file itself with
 *                 the default driver and reads its hyperslab; writes are
 *                 taken in turn, rank by rank.  Works with serial HDF5.
 *   "direct"      (io_direct.c): HDF5 for the file's structure only; the
 *                 bytes of contiguous little-endian datasets move with
 *                 pread/pwrite at their file offset, several threads per
 *                 rank, every rank at once (DD_IO_THREADS sets the threads);
 *                 other layouts are read through HDF5.  Works with serial HDF5.
 * Matrices are 2-D datasets, row-major, IEEE float of 8 or 4 bytes, or
 * complex numbers of them (dd_dtype DD_C128, DD_C64): a compound of two
 * such floats, real part first, named r and i as h5py writes them (or real
 * and imag), read and written as (re, im) pairs; new datasets get r and i.
 * Blocks are read with the file's own type (no conversion), so collective
 * I/O stays collective.
 *
 * Every function here is collective over the communicator it was opened on,
 * even for ranks whose block is empty (nrows or ncols 0).  Failures are local
 * and returned; the caller agrees across ranks.  The HDF5 error stack is
 * never printed. */
#ifndef DD_IO_H
#define DD_IO_H

#include <mpi.h>
#include <stdint.h>

#include "dd.h"

typedef struct dd_io dd_io;

typedef enum { DD_ATTR_STR, DD_ATTR_F64, DD_ATTR_I64 } dd_attr_kind;
typedef struct {
    const char *key;
    dd_attr_kind kind;
    const char *s;
    double d;
    int64_t i;
} dd_attr;

typedef struct dd_io_ops {
    const char *name;
    int (*open_read)(dd_io *io, MPI_Comm comm, const char *path, dd_err *err);
    /* Creates a new file (truncating any file of that exact name: callers
     * pass a temporary name) and the named 2-D datasets, all of one type. */
    int (*create)(dd_io *io, MPI_Comm comm, const char *path, int ndsets, const char *const *names,
                  const int64_t (*dims)[2], dd_dtype type, dd_err *err);
    int (*read_block)(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                      int64_t col0, int64_t ncols, void *buf, dd_err *err);
    int (*write_block)(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                       int64_t col0, int64_t ncols, const void *buf, dd_err *err);
    /* Attributes on a dataset; values are rank 0's. */
    int (*set_attrs)(dd_io *io, const char *dset, const dd_attr *attrs, int nattrs, dd_err *err);
    int (*close)(dd_io *io, dd_err *err);
} dd_io_ops;

struct dd_io {
    const dd_io_ops *ops;
    MPI_Comm comm;
    void *impl;
    /* Set by the caller before create (--sync): the direct path fdatasyncs
     * each rank's writes before its close, so that what every rank wrote
     * is on disk when close returns, also where ranks on several hosts
     * share a file system that caches per client.  The commit then fsyncs
     * the file and its directory (io_output_commit, dd_output.sync). */
    int durable;
};

extern const dd_io_ops dd_io_independent;
extern const dd_io_ops dd_io_direct;
#ifdef DD_HAVE_PHDF5
extern const dd_io_ops dd_io_collective;
#endif

/* --- helpers shared by both paths (io_quiet: io_select.c; the probes: io_probe.c) --- */

/* Silence HDF5's automatic error-stack printing (call once, early). */
void io_quiet(void);

/* Rank 0 inspects `path` (read-only) and checks that datasets `a` and `b`
 * exist, are 2-D, of one type (floats of 8 or 4 bytes, or complex numbers of
 * them: io_h5_check_matrix in io/io_h5.h says which compounds), and that A's
 * columns equal B's rows.  The verdict and sizes are broadcast: on return
 * every rank has the same rc, *M, *N, *K, *type and message.  Complex
 * inputs are reported, as by io_probe_gemm_cx. */
int io_probe_inputs(MPI_Comm comm, const char *path, const char *a, const char *b, int64_t *M,
                    int64_t *N, int64_t *K, dd_dtype *type, dd_err *err);

/* The same for GEMM, C = alpha·op(A)·op(B) + beta·C: the datasets hold A,
 * B (and C) as stored, each the transpose of what the program multiplies
 * where transa/transb is 'T' and, for all three, where col (--order col:
 * a column-major writer's M×K matrix is a K×M dataset).  M, N, K are those
 * of op(A) (M×K) and op(B) (K×N), derived from the stored shapes.  With
 * need_c the dataset c must exist, be M×N (N×M with col) and of A's type;
 * without it C is never opened.  One message on a mismatch, naming the
 * options that made the shapes.  Complex inputs are refused (exit 2), so
 * that a caller that multiplies real matrices only is never handed them;
 * io_probe_gemm_cx is the same for a caller that multiplies complex ones
 * too, and reports them (*type DD_C128, DD_C64). */
typedef struct {
    const char *a, *b, *c; /* dataset names */
    char transa, transb;   /* 'N', 'T' or 'C' (the conjugate transpose: stored as 'T') */
    int col;               /* --order col */
    int need_c;            /* beta != 0 */
    double beta, beta_im;  /* for messages (beta_im: complex data's imaginary part) */
} dd_probe_gemm;
int io_probe_gemm(MPI_Comm comm, const char *path, const dd_probe_gemm *g, int64_t *M, int64_t *N,
                  int64_t *K, dd_dtype *type, dd_err *err);
int io_probe_gemm_cx(MPI_Comm comm, const char *path, const dd_probe_gemm *g, int64_t *M,
                     int64_t *N, int64_t *K, dd_dtype *type, dd_err *err);

/* The output-file discipline (io_output.c: prepare, commit, abort;
 * io_output_checks.c: the side outputs' and the room checks;
 * io_output_signals.c: the signals, the launcher's watch, io_write_pieces).
 *
 * io_output_prepare(): rank 0 refuses an existing `path` without force, one
 * that is not a regular file (a link, FIFO, device) even with force, a path
 * in a missing or unwritable directory, and a path that names the input;
 * removes stale temporaries of earlier runs of this output whose owner is
 * gone; and creates a private temporary directory beside `path` (same
 * file system, so the final rename is atomic) in which out->tmp, the file
 * to write, will live.  SIGTERM, SIGINT and SIGHUP remove it from then on.
 * Agreed on all ranks.
 * io_output_commit(): rank 0 gives out->tmp the final name (without force
 * never replacing a file that appeared meanwhile); agreed.  With out->sync
 * (--sync, set after prepare) the commit is durable: the file is fsync'ed
 * before it takes its name and the output's directory after, so success
 * means the output survives a crash of the node (the writers' own
 * fdatasync is dd_io.durable's); a failing fsync fails the commit.
 * io_output_abort(): rank 0 removes the temporary; never fails, never
 * communicates.
 * io_output_check_side(): a side output such as --json (`option` names it
 * in messages) must not be the input or the output, and must be writable;
 * checked before anything is computed; agreed.
 * io_output_check_limit(): the output will be a file of about `bytes`:
 * every rank (each writes into it) checks that its file-size limit
 * (RLIMIT_FSIZE, `ulimit -f`) allows that; agreed, one message naming
 * `ulimit -f`.  The program ignores SIGXFSZ, so a write beyond the limit
 * fails with EFBIG rather than killing the rank.
 * io_output_check_side_room(): rank 0, which appends the side output,
 * checks that its file system has `bytes` free and that the file may grow
 * by that much (`ulimit -f`); agreed (exit 1 on a shortfall). */
typedef struct {
    char path[4096]; /* the final name */
    char dir[4096];  /* the private temporary directory beside it */
    char tmp[4200];  /* the file being written, inside dir */
    int force;
    int sync;   /* durable commit (--sync) */
    int active; /* a temporary exists */
} dd_output;

int io_output_prepare(MPI_Comm comm, const char *path, const char *input_path, int force,
                      dd_output *out, dd_err *err);
int io_output_commit(MPI_Comm comm, dd_output *out, dd_err *err);
void io_output_abort(MPI_Comm comm, dd_output *out);
int io_output_check_side(MPI_Comm comm, const char *side, const char *option,
                         const char *input_path, const char *output_path, dd_err *err);
int io_output_check_limit(MPI_Comm comm, const char *path, uint64_t bytes, dd_err *err);

/* A block (row-major, ncols wide) written through io->ops->write_block in
 * pieces of at most IO_PIECE_BYTES: whole rows where a row fits, else
 * parts of one row.  No single write then outlasts the time a launcher
 * gives a signal handler before SIGKILL (mpirun: 1 s), so SIGTERM and
 * SIGINT remove the temporary even when they arrive mid-write.  Collective
 * over io->comm: every rank makes the same number of calls (the most any
 * rank needs, empty pieces for the others), also after a failure, which
 * is the first one's. */
#define IO_PIECE_BYTES ((size_t)64 << 20)
int io_write_pieces(dd_io *io, const char *dset, dd_dtype type, int64_t row0, int64_t nrows,
                    int64_t col0, int64_t ncols, const void *buf, dd_err *err);
int io_output_check_side_room(MPI_Comm comm, const char *side, const char *option, uint64_t bytes,
                              dd_err *err);

/* Closes io whatever came before (close may be collective, so every rank
 * calls it): returns rc if that already failed, its message kept, else the
 * close's result and message.  Not agreed. */
int io_close_after(dd_io *io, int rc, dd_err *err);

/* "1.10.8 (parallel)" (io_select.c) */
const char *io_library_version(void);

/* "auto": collective where parallel HDF5 is built in, else independent. */
const dd_io_ops *io_select(const char *name);

#endif
