/* dd.h — types and error plumbing shared by every module of dgemm-dist.
 *
 * Errors are values: every function that can fail returns DD_OK (0) or a
 * positive code and writes one human sentence into a dd_err.  The caller
 * decides whether to add context; ranks agree on failure with dd_agree()
 * (src/base/agree.h) before anyone exits, so no rank is left in a collective.
 *
 * The codes are the public API's statuses (dd_status in
 * include/dgemm_dist.h) number for number, and dd_dtype is its dd_type:
 * base sees none of include/, so it names them itself, and
 * src/api/api_impl.h binds each pair with a static assertion. */
#ifndef DD_H
#define DD_H

#include <stddef.h>
#include <stdint.h>

enum {
    DD_OK = 0,
    DD_EUSAGE = 1, /* bad input or options: exit status 2 */
    DD_ENOMEM = 2,
    DD_EIO = 3,
    DD_ECOMM = 4,  /* communication broke mid-collective: peers cannot agree (dd_abort_all) */
    DD_ECHECK = 5, /* a verification found wrong data: exit status 3, like a FAILED check */
    DD_EUNSUP = 6,
    DD_EFAIL = 7,
    DD_EMPI = 8 /* MPI not initialized, or the communicator unusable */
};

/* The verdict of every check (the run's and the benches'): a scaled
 * residual below this passes, in the manner of HPL. */
#define DD_CHECK_THRESHOLD 16.0

/* Element types; the values are dd_type's (dgemm_dist.h).  The complex
 * types are pairs (real, imaginary) of the real type, as C99's _Complex,
 * numpy's complex128/complex64 and Fortran's COMPLEX*16/COMPLEX*8 store them. */
typedef enum { DD_F64 = 0, DD_F32 = 1, DD_C128 = 2, DD_C64 = 3 } dd_dtype;

static inline int dd_dtype_valid(int t)
{
    return t >= DD_F64 && t <= DD_C64;
}
static inline int dd_dtype_complex(dd_dtype t)
{
    return t == DD_C128 || t == DD_C64;
}
/* The type of one component: DD_F64 for DD_C128, DD_F32 for DD_C64. */
static inline dd_dtype dd_dtype_real(dd_dtype t)
{
    return t == DD_C128 ? DD_F64 : t == DD_C64 ? DD_F32 : t;
}
static inline size_t dd_elsize(dd_dtype t)
{
    return t == DD_F64 ? 8 : t == DD_F32 ? 4 : t == DD_C128 ? 16 : 8;
}
static inline const char *dd_dtype_name(dd_dtype t)
{
    return t == DD_F64 ? "f64" : t == DD_F32 ? "f32" : t == DD_C128 ? "c128" : "c64";
}

/* a·b·c as a byte count; on overflow of size_t sets *overflow and returns
 * SIZE_MAX, so every size product is checked before anything is allocated
 * (a crafted file can declare 2^31 × 2^31 elements). */
static inline size_t dd_mul3(uint64_t a, uint64_t b, uint64_t c, int *overflow)
{
    size_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) {
        *overflow = 1;
        return SIZE_MAX;
    }
    return abc;
}
/* a + b as a byte count, saturating with *overflow set. */
static inline size_t dd_add(size_t a, size_t b, int *overflow)
{
    size_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *overflow = 1;
        return SIZE_MAX;
    }
    return r;
}

/* One error sentence.  Kept in a fixed buffer so it can be broadcast. */
#define DD_ERRLEN 512
typedef struct {
    char msg[DD_ERRLEN];
} dd_err;

/* printf-style: set the message (first failure wins, later ones are context
 * the caller chose not to add).  Returns `code` so `return dd_fail(e, ...)`. */
int dd_fail(dd_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void dd_err_clear(dd_err *e);
/* A value that crossed the library's boundary (a status a caller's stream
 * returned, a status the library returned to the program) as a code, and a
 * code as a status: the same number where it is one of the codes above,
 * DD_EFAIL (internal) otherwise. */
static inline int dd_code_of(int status)
{
    return status >= DD_OK && status <= DD_EMPI ? status : DD_EFAIL;
}
static inline int dd_status_of(int rc)
{
    return dd_code_of(rc);
}

#endif
