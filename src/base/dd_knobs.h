/* dd_knobs.h — the environment knobs: every DD_ variable that dgemm-dist,
 * libdgemm-dist and libdgemm-dist-scalapack read as a setting, in one
 * table (knobs.c) that says, for each, its name, type, default, range or
 * choices and what it does.  `dgemm-dist --help-env` prints that table
 * and docs/environment.md holds the same one (tests/cli/help_env.sh
 * compares them); no file of src/, comm/, io/ or kernels/ but knobs.c
 * reads a DD_ variable itself (tests/cli/knobs_only.sh).
 *
 * A knob is read where it is used, through the getters below; its value
 * is parsed once per distinct string (the first use parses, later uses
 * with the same string take the parsed value; a test that changes the
 * environment gets the new value parsed at the next use).  An empty value
 * counts as unset.  A value that is malformed or out of range is never
 * taken silently:
 *   - a knob marked DD_KNOB_STRICT is refused: the getters give the
 *     default, dd_knob_error gives the message, and the reader fails
 *     (agreed across ranks where it reads it);
 *   - any other knob gets one warning on stderr naming the knob, the value
 *     and what is used instead (the default), given once per process and
 *     value, by rank 0: MPI_COMM_WORLD's rank 0 at a getter, rank 0 of a
 *     context's communicator at dd_knobs_warn (dd_context_create calls it,
 *     so a library running on ranks without world rank 0 still warns), and
 *     every process when MPI is not running and no launcher names the rank.
 *
 * Self-contained (libc, pthreads and MPI): libdgemm-dist-scalapack, which
 * sees none of base but this header, compiles knobs.c and knobs_parse.c
 * into itself and reads only its own knobs (DD_KNOB_DROPIN) with them.
 * C and C++ (the kernels). */
#ifndef DD_KNOBS_H
#define DD_KNOBS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The knobs, in the table's order (--help-env's and docs/environment.md's:
 * by reader, then by name). */
typedef enum {
    DDK_IO_THREADS,  /* the program */
    DDK_PIPE_BAND_MIB,
    DDK_API_THREADS, /* the library */
    DDK_API_TIMING,
    DDK_MODEL_INTER_LINK,
    DDK_MODEL_LINK,
    DDK_MODEL_RATES,
    DDK_MPI_CUDA_AWARE,
    DDK_MPI_STAGE_PIECES,
    DDK_OZAKI2_INT8,
    DDK_OZAKI2_PANELS,
    DDK_OZAKI2_TILE_MB,
    DDK_RING_MIB,
    DDK_SGEMM_WORKSPACE_MIB,
    DDK_SCALAPACK_BACKEND, /* the drop-in */
    DDK_SCALAPACK_ERRORS,
    DDK_SCALAPACK_SUMMARY,
    DDK_SCALAPACK_VERBOSE,
    DDK_FAULT, /* test hooks */
    DDK_REDIST_LIMIT,
    DDK_COUNT
} dd_knob;

typedef enum {
    DD_KNOB_INT,    /* a whole number, optionally signed */
    DD_KNOB_SIZE,   /* a whole number of units (MiB, elements), digits only */
    DD_KNOB_BOOL,   /* 1|0, also yes|no, true|false, on|off (any case) */
    DD_KNOB_STRING, /* any text; its reader may still reject it (dd_knob_reject) */
    DD_KNOB_CHOICE  /* one of a list of words */
} dd_knob_type;

/* Who reads a knob (one or more of the first three), whether it is a
 * test hook, and how a bad value is met (the flags after). */
enum {
    DD_KNOB_PROGRAM = 1u << 0, /* dgemm-dist (the file I/O is the program's alone) */
    DD_KNOB_LIBRARY = 1u << 1, /* libdgemm-dist, so also the program and the drop-in */
    DD_KNOB_DROPIN = 1u << 2,  /* libdgemm-dist-scalapack */
    DD_KNOB_READERS = 0x7u,
    DD_KNOB_TEST = 1u << 3,   /* a test hook: not for production runs */
    DD_KNOB_STRICT = 1u << 4, /* a bad value is refused, not warned about */
    DD_KNOB_AUTO = 1u << 5    /* "auto" also means the default (a number's) */
};

typedef struct {
    const char *name; /* "DD_RING_MIB" */
    dd_knob_type type;
    unsigned flags;             /* a reader, DD_KNOB_STRICT, DD_KNOB_AUTO */
    long long dflt;             /* int, size, bool, choice (its index): unset or bad */
    long long lo, hi;           /* int, size: the range */
    const char *unit;           /* size: the unit ("MiB"); string: what it is */
    const char *const *choices; /* choice: the words, NULL-terminated */
    const char *dflt_text;      /* the default as the table and warnings name it */
    const char *what;           /* what it does, one paragraph */
} dd_knob_spec;

/* The table's entry of k; NULL for k out of range. */
const dd_knob_spec *dd_knob_spec_of(dd_knob k);

/* int, size, bool: the value; choice: its index; the spec's default when
 * unset or bad (string: 0). */
long long dd_knob_int(dd_knob k);
/* The value as given when it is set and valid (any type), else NULL.  The
 * pointer stays valid for the process's life. */
const char *dd_knob_str(dd_knob k);
/* 1 when k is set to a valid value other than "auto". */
int dd_knob_is_set(dd_knob k);
/* 1 when k's value is malformed or out of range, with a message for the
 * reader's refusal in msg ("DD_IO_THREADS=\"four\" is not a whole number;
 * set it to 1..256 or auto, or unset it"); 0 otherwise (msg untouched). */
int dd_knob_error(dd_knob k, char *msg, size_t len);
/* A reader's own verdict on a value the table accepts (a link name the
 * model does not know, a file that cannot be opened): the warning "K=\"v\"
 * <why>; using <instead>", once per process and value, from the process
 * whose rank (in the reader's communicator) is 0, or, rank < 0, by the
 * getters' rule. */
void dd_knob_reject(dd_knob k, int rank, const char *why, const char *instead);
/* Parses every knob of these readers (DD_KNOB_LIBRARY ...) and gives the
 * warnings not yet given for their bad values where speak is true; marks
 * them given.  Not collective; every rank of a communicator calls it with
 * speak = (rank == 0). */
void dd_knobs_warn(unsigned readers, int speak);

/* The parse on its own (no environment, no state): 0 and *v for a valid
 * raw value, -1 with why ("is out of range") when it is not, 1 for "auto"
 * (DD_KNOB_AUTO: the default).  String: always 0. */
int dd_knob_parse(const dd_knob_spec *s, const char *raw, long long *v, char *why, size_t len);
/* The range column: "1..4096 MiB", "1..256 or auto", "0|1", "auto|cpu|cuda". */
void dd_knob_range(const dd_knob_spec *s, char *buf, size_t len);
/* The type column: "int", "size", "bool", "string", "choice". */
const char *dd_knob_type_name(dd_knob_type t);

#ifdef __cplusplus
}
#endif

#endif
