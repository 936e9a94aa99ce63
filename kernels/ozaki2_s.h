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

/* The numbers of moduli the FP32 kernel takes: 6 (H = 22) to 12 (H = 46). */
#define OZ2S_MIN_MODULI 6
#define OZ2S_MAX_MODULI 12
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
 * H ≥ 22 + ceil(log2 k)/2: 8 (H = 30) for every k up to OZ2_KCHUNK.
 * Derivation: rounding the scaled row a·2^s to integers moves each
 * element by at most 1/2 while ||a·2^s||_2 ≥ 2^(H-1), so an entry errs by
 * Σ δa_l·b_l (and the same for B): at most 2^-H·sqrt(k)·||a||·||b|| when
 * the k roundings all push one way (||δa||_1 ≤ sqrt(k)·||δa||_2), about
 * 2^-H·||a||·||b|| when their signs are random.  SGEMM's own error on
 * random data is about 2^-24·||a||·||b|| (a sum of k products in FP32
 * loses about 2^-24 of its partial sums, which grow like ||a||·||b||),
 * and grows with k.  The worst case asks for
 * H ≥ 24 + ceil(log2 k)/2 (9 moduli past k = 4096); the host table
 * (tests/unit/test_ozaki2_s.c, docs/ozaki2.md) shows 8 moduli at 0.02-0.09×
 * the FP32 loop's componentwise error and at most 0.35× its relative
 * error for k = 256 to 16384, the ratio falling as k grows, so the rule
 * takes 2 of those bits as measured slack.  Fewer than 8 moduli are not
 * taken: at 7 (H = 26) the bulk of a uniform row keeps fewer than
 * OZ2S_KEEP_BITS bits, the range check falls back, and where forced the
 * relative error is up to 3.4× the FP32 loop's.  "ozaki2-s9" / "-s10"
 * (kernels.def) keep the worst-case margin. */
static inline int oz2s_auto_moduli(int64_t k)
{
    int lk = 0;
    while (lk < 40 && ((int64_t)1 << lk) < k)
        ++lk;
    const int need = OZ2S_TARGET_BITS - 2 + (lk + 1) / 2;
    for (int n = 8; n < OZ2S_MAX_MODULI; ++n)
        if ((oz2_log2_product(n) - 2) / 2 >= need)
            return n;
    return OZ2S_MAX_MODULI;
}

/* x·2^s rounded to an integer (an exact double: |x·2^s| ≤ 2^H ≤ 2^46),
 * and whether it is lossy: nonzero and below 2^OZ2S_KEEP_BITS after
 * scaling. */
OZ2_FN double oz2s_scaled(double x, int s, int *lossy)
{
    double y = ldexp(x, s);
    *lossy = x != 0 && fabs(y) < ldexp(1.0, OZ2S_KEEP_BITS);
    return rint(y);
}

#endif
