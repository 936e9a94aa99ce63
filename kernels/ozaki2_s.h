/* ozaki2_s.h — the Ozaki scheme II for FP32 operands (ozaki2.h's scheme:
 * the same moduli, residues, Garner and Horner, fewer moduli).  What the
 * host reference (ozaki2_s_ref.c) and the GPU kernel (ozaki2_s.cu) share:
 * the range of moduli, the automatic choice, and the lossy test of the
 * range check.  C11 and CUDA C++ alike.
 *
 * FP32 operands are exact doubles, so the scaling and the residues are
 * ozaki2.h's (oz2_shift, oz2_symmod) on the widened values; what changes
 * is how many bits the products must keep: SGEMM's, 24, not 53. */
#ifndef DD_OZAKI2_S_H
#define DD_OZAKI2_S_H

#include "ozaki2.h"

/* The numbers of moduli the FP32 kernel takes: 6 (H = 22) to 10 (H = 38;
 * the scaled integers stay below 2^38, where oz2s_symmodf is exact). */
#define OZ2S_MIN_MODULI 6
#define OZ2S_MAX_MODULI 10
/* The bits an FP32 product keeps: the emulation's error of an entry is
 * about 2^-H·||A_i||·||B_j|| (ozaki2.h), SGEMM's unit roundoff is 2^-24. */
#define OZ2S_TARGET_BITS 24
/* Range detection as ozaki2.h's (OZ2_LOSSY_DEN), with the FP32 threshold:
 * an element is lossy when it keeps fewer than 16 of its 24 bits after
 * scaling (|x·2^s| < 2^16: error above 2^-16 of itself, 2^8 FP32 ulps). */
#define OZ2S_KEEP_BITS 16

/* Whether a row (column) with nnz nonzeros, lossy of them lossy, is out of
 * range: more than 1/OZ2_LOSSY_DEN of its nonzeros, and more than one.  A
 * single element below 2^OZ2S_KEEP_BITS errs by no more than any other
 * (2^-(s+1), absolute) and is no sign of a wide exponent range; without
 * the "more than one", a short row (k ≤ 64, a chunk's tail) with one
 * small value would fall back (H − OZ2S_KEEP_BITS = 14 bits at 8 moduli:
 * a uniform row has a value below 2^-12 of its norm about once in 4096). */
OZ2_FN int oz2s_out_of_range(int64_t lossy, int64_t nnz)
{
    return lossy > 1 && lossy * OZ2_LOSSY_DEN > nnz;
}

/* The automatic number of moduli: the fewest, at least 8, with
 * H ≥ 23 + ceil(log2 k)/2: 8 (H = 30) up to k = 16384, 9 (H = 34) up to
 * OZ2_KCHUNK.  Derivation: rounding the scaled row a·2^s to integers moves
 * each element by at most 1/2 while ||a·2^s||_2 ≥ 2^(H-1), so an entry
 * errs by Σ δa_l·b_l (and the same for B): at most 2^-H·sqrt(k)·||a||·||b||
 * when the k roundings all push one way (||δa||_1 ≤ sqrt(k)·||δa||_2),
 * about 2^-H·||a||·||b|| when their signs are random.  SGEMM's own error
 * on random data is about 2^-24·||a||·||b|| (a sum of k products in FP32
 * loses about 2^-24 of its partial sums, which grow like ||a||·||b||) and
 * grows with k.  The worst case asks for H ≥ 24 + ceil(log2 k)/2; the host
 * table (tests/unit/test_ozaki2_s.c, docs/ozaki2.md) shows 8 moduli at
 * 0.02-0.08× the FP32 loop's componentwise error and at most 0.10× its
 * relative error for k = 256 to 16384 (the ratio falling as k grows), so
 * the rule takes one bit of that as measured slack.  Past k = 16384 the
 * range check decides: at 8 moduli the bulk of a uniform row of 65536
 * keeps 16 bits or fewer often enough (1.6% of its values) to fall back,
 * at 9 it does not.  Fewer than 8 are not taken: at 7 (H = 26) uniform
 * rows fall back, and where forced the relative error is up to 3.4× the
 * FP32 loop's.  "ozaki2-s9" / "-s10" (kernels.def) fix 9 or 10. */
static inline int oz2s_auto_moduli(int64_t k)
{
    int lk = 0;
    while (lk < 40 && ((int64_t)1 << lk) < k)
        ++lk;
    const int need = OZ2S_TARGET_BITS - 1 + (lk + 1) / 2;
    for (int n = 8; n < OZ2S_MAX_MODULI; ++n)
        if ((oz2_log2_product(n) - 2) / 2 >= need)
            return n;
    return OZ2S_MAX_MODULI;
}

/* x·2^s rounded to an integer (an exact double: |x·2^s| ≤ 2^H ≤ 2^38),
 * and whether it is lossy: nonzero and below 2^OZ2S_KEEP_BITS after
 * scaling. */
OZ2_FN double oz2s_scaled(double x, int s, int *lossy)
{
    double y = ldexp(x, s);
    *lossy = x != 0 && fabs(y) < ldexp(1.0, OZ2S_KEEP_BITS);
    return rint(y);
}

/* The same from the FP32 value x and pw = 2^s, as an FP32 value: exact.
 * y = x·pw is exact in FP64 (a 24-bit significand shifted); where
 * |y| ≥ 2^23 its ulp is ≥ 1, so y is already an integer of at most 24
 * significant bits, and where |y| < 2^23 rint(y) is an integer below
 * 2^23: an FP32 value either way.  Lossy as oz2s_scaled. */
OZ2_FN float oz2s_scaled_f(float x, double pw, int *lossy)
{
    const double y = (double)x * pw;
    *lossy = x != 0 && fabs(y) < (double)(1 << OZ2S_KEEP_BITS);
    return (float)rint(y);
}

/* The symmetric residue of an integer-valued FP32 x with |x| ≤ 2^38 (the
 * scaled operands at ≤ 10 moduli) modulo m (OZ2_MODULI_INIT's: 256 or odd,
 * 129..255), rinv = 1/m in FP32: the value of oz2_symmod (ozaki2.h) in
 * FP32 arithmetic, which the GPU runs at twice the FP64 rate.  Exactness:
 * x·rinv errs from x/m by at most |x/m|·2^-22.9 (two roundings) <
 * 2^38/129·2^-22.9 < 2^8.2, so the first r = x − q·m (one fma: exact
 * product, one rounding) has |r| < (2^8.2 + 1/2)·256 < 2^17 and is exact;
 * then |r·rinv − r/m| < 2^9.1·2^-22.9 < 2^-13, below the distance 1/(2m)
 * ≥ 2^-9 from r/m to a half-integer for odd m, so the second quotient is
 * the nearest and r − q·m lies in [−(m−1)/2, (m−1)/2]; for m = 256 rinv
 * and every product are exact, and the one tie case (r = +128 after
 * round-to-even) is corrected to −128 as oz2_symmod's range has it.
 * tests/unit/test_ozaki2_s.c compares it with oz2_symmod. */
OZ2_FN float oz2s_symmodf(float x, float m, float rinv)
{
    float r = fmaf(-rintf(x * rinv), m, x);
    r = fmaf(-rintf(r * rinv), m, r);
    if (r > (m - 1) * 0.5f)
        r -= m;
    else if (r < -m * 0.5f)
        r += m;
    return r;
}

#endif
