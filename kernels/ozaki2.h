/* ozaki2.h — the Ozaki scheme II (Ozaki, Uchino, Imamura 2024-25): FP64
 * GEMM through exact INT8 products and the Chinese remainder theorem.
 * What the host reference (ozaki2_ref.c) and the GPU kernel (ozaki2.cu)
 * share: the moduli, the parameters derived from them, and the exact
 * per-element arithmetic (symmetric residues, Garner's mixed radix).
 * C11 and CUDA C++ alike.
 *
 * The scheme, for C = A·B (k ≤ OZ2_KCHUNK; longer k is done in chunks,
 * accumulated in C):
 *  1. Row i of A gets a power of two 2^s_i such that ||A_i·2^s_i||_2 ≤ 2^H
 *     and column j of B a 2^t_j such that ||B_j·2^t_j||_2 ≤ 2^H; the
 *     scaled values are rounded to integers A', B' (|rint x| ≤ |x| + 1/2,
 *     which the margin of H absorbs).  By Cauchy-Schwarz every entry of
 *     the integer product satisfies |A'B'| < 2^(2H+1) ≤ M/2.
 *  2. For N pairwise coprime moduli m_i ≤ 256 (M = Π m_i), the symmetric
 *     residues A' mod m_i, B' mod m_i lie in [-128, 127]: INT8 matrices.
 *  3. C_i = (A' mod m_i)·(B' mod m_i) in INT32 is exact while
 *     k·128² < 2^31; C_i mod m_i = A'B' mod m_i.
 *  4. Garner's algorithm turns the N residues of an entry into balanced
 *     mixed-radix digits (exact, small integers in FP32), Horner's rule
 *     in FP64 gives A'B' (relative error ≤ ~N·2^-53: every step that
 *     rounds multiplies a value ≥ 2^45 and adds a digit ≤ 128), and
 *     2^-(s_i+t_j) scales it back.
 * Accuracy: rounding A·2^s to integers loses up to 2^-(s+1) per element
 * (absolute): the error of C_ij is about 2^-H·||A_i||·||B_j||, so more
 * moduli (larger M, larger H) give more bits.  Elements far below their
 * row's norm keep few bits; where many do (a row spanning a wide range of
 * exponents), the scaling step reports the input as out of range and the
 * caller computes natively (oz2_lossy_row). */
#ifndef DD_OZAKI2_H
#define DD_OZAKI2_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define OZ2_FN __host__ __device__ static inline
#else
#define OZ2_FN static inline
#endif

#define OZ2_MIN_MODULI 8
#define OZ2_MAX_MODULI 20
/* Pairwise coprime, largest first: 2^8, 3·5·17, 11·23, 251, 13·19, then
 * primes.  Every modulus after the first is odd (oz2_symmodf_odd relies on
 * it for Garner's steps). */
#define OZ2_MODULI_INIT                                                                            \
    {                                                                                              \
        256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 211, 199, 197, 193, 191, 181, 179,  \
            173, 167                                                                               \
    }
/* k of one INT8 product: 65536·128² = 2^30 < 2^31, exact in INT32. */
#define OZ2_KCHUNK 65536
/* Range detection: a row (column) is out of range when more than
 * 1/OZ2_LOSSY_DEN of its nonzeros keep fewer than OZ2_KEEP_BITS bits after
 * scaling (|x·2^s| < 2^OZ2_KEEP_BITS).  A random tail of small values (a
 * uniform row) stays far below the fraction; a row whose values span a
 * wide range of exponents exceeds it.  The check sees rows and columns,
 * not how they pair: a product whose large terms all cancel or whose rows
 * meet columns at their small values (ranges below the limit) can still
 * lose bits beyond native FP64's. */
#define OZ2_KEEP_BITS 40
#define OZ2_LOSSY_DEN 64

/* Base-2^15 digits of a scaled integer (|x| ≤ 2^H ≤ 2^76 at 20 moduli),
 * for the GPU's residues (ozaki2_mod.cuh). */
#define OZ2_DIGITS 6

typedef struct {
    int n;                                     /* number of moduli */
    int log2m;                                 /* floor(log2 M) */
    int half_bits;                             /* H = floor((log2m - 2) / 2) */
    double m[OZ2_MAX_MODULI];                  /* the moduli */
    double rinv[OZ2_MAX_MODULI];               /* 1/m, rounded */
    float mf[OZ2_MAX_MODULI];                  /* the moduli, FP32 */
    float rinvf[OZ2_MAX_MODULI];               /* 1/m in FP32 */
    float inv[OZ2_MAX_MODULI][OZ2_MAX_MODULI]; /* inv[j][i] = m_j^-1 mod m_i, j < i */
    int digits;                                /* base-2^15 digits of |x| ≤ 2^H: ⌈(H + 2)/15⌉ */
    float pw15[OZ2_MAX_MODULI][OZ2_DIGITS];    /* 2^(15c) mod m_i, symmetric residues */
    float pre[OZ2_MAX_MODULI][OZ2_MAX_MODULI]; /* pre[j][i] = m_0·…·m_{j-1} mod m_i (symmetric), j < i */
    float pinv[OZ2_MAX_MODULI];                /* (m_0·…·m_{i-1})^-1 mod m_i, in [0, m_i) */
} oz2_params;

/* x^-1 mod m for coprime x, m (extended Euclid). */
static inline int oz2_inverse(int x, int m)
{
    int r0 = m, r1 = x % m, t0 = 0, t1 = 1;
    while (r1) {
        int q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
        r0 = r1, r1 = r, t0 = t1, t1 = t;
    }
    return t0 < 0 ? t0 + m : t0;
}

/* floor(log2(product of the first n moduli)), exactly (little-endian
 * 32-bit limbs). */
static inline int oz2_log2_product(int n)
{
    static const int mod[OZ2_MAX_MODULI] = OZ2_MODULI_INIT;
    uint32_t limb[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < n; ++i) {
        uint64_t carry = 0;
        for (int l = 0; l < 8; ++l) {
            uint64_t v = (uint64_t)limb[l] * (uint64_t)mod[i] + carry;
            limb[l] = (uint32_t)v;
            carry = v >> 32;
        }
    }
    for (int l = 7; l >= 0; --l)
        for (int b = 31; b >= 0; --b)
            if (limb[l] >> b & 1u)
                return 32 * l + b;
    return 0;
}

/* The base-2^15 digits a scaled integer |x| ≤ 2^H needs: ⌈(H + 2)/15⌉
 * (15·digits ≥ H + 2, so the top digit stays within ±2^14). */
static inline int oz2_digits_needed(int half_bits)
{
    return (half_bits + 16) / 15;
}

/* The parameters of n moduli (OZ2_MIN_MODULI ≤ n ≤ OZ2_MAX_MODULI). */
static inline void oz2_params_init(oz2_params *p, int n)
{
    static const int mod[OZ2_MAX_MODULI] = OZ2_MODULI_INIT;
    p->n = n;
    p->log2m = oz2_log2_product(n);
    p->half_bits = (p->log2m - 2) / 2;
    for (int i = 0; i < OZ2_MAX_MODULI; ++i) {
        p->m[i] = mod[i];
        p->rinv[i] = 1.0 / mod[i];
        p->mf[i] = (float)mod[i];
        p->rinvf[i] = 1.0f / (float)mod[i];
        for (int j = 0; j < OZ2_MAX_MODULI; ++j)
            p->inv[j][i] = j < i ? (float)oz2_inverse(mod[j] % mod[i], mod[i]) : 0.0f;
        int pw = 1 % mod[i];
        for (int c = 0; c < OZ2_DIGITS; ++c) {
            p->pw15[i][c] = (float)(2 * pw >= mod[i] ? pw - mod[i] : pw);
            pw = (int)((pw * 32768LL) % mod[i]);
        }
        int pre = 1 % mod[i];
        for (int j = 0; j < OZ2_MAX_MODULI; ++j) {
            p->pre[j][i] = j < i ? (float)(2 * pre >= mod[i] ? pre - mod[i] : pre) : 0.0f;
            if (j < i)
                pre = (int)(((int64_t)pre * mod[j]) % mod[i]);
            if (j + 1 == i)
                p->pinv[i] = (float)oz2_inverse(pre, mod[i]);
        }
        if (i == 0)
            p->pinv[0] = 1.0f;
    }
    p->digits = oz2_digits_needed(p->half_bits);
}

/* The fewest moduli whose H keeps native-FP64 accuracy for dot products of
 * length k: H ≥ 53 + log2(k)/2 (the error of the scaled operands,
 * ~2^-H·||a||·||b||, is then at the scale of native FP64's,
 * 2^-53·||a||·||b||/sqrt(k); measured: tests/unit/test_ozaki2.c); at most
 * OZ2_MAX_MODULI. */
static inline int oz2_auto_moduli(int64_t k)
{
    int lk = 0;
    while (lk < 40 && ((int64_t)1 << lk) < k)
        ++lk;
    int need = 53 + (lk + 1) / 2;
    for (int n = OZ2_MIN_MODULI; n < OZ2_MAX_MODULI; ++n)
        if ((oz2_log2_product(n) - 2) / 2 >= need)
            return n;
    return OZ2_MAX_MODULI;
}

/* The scale exponent of a row (column) from amax = max|x| and
 * sumsq = Σ (x·2^-e)² with e the exponent of amax (frexp: amax = f·2^e,
 * f in [0.5, 1)), so that ||x·2^s||_2 ≤ 2^H: s = H - oz2_shift_base (the
 * row's "norm exponent", e plus that of the normalised 2-norm, which the
 * guard below uses too).  An all-zero row gets 0. */
OZ2_FN int oz2_shift_base(double amax, double sumsq)
{
    if (!(amax > 0))
        return 0;
    int e = 0, e2 = 0;
    (void)frexp(amax, &e);
    /* sqrt and the sum are each within a few ulps (k ≤ 2^17 terms: far
     * below 2^-30 relative); the factor makes the bound safe. */
    (void)frexp(sqrt(sumsq) * (1.0 + 0x1p-30), &e2);
    return e + e2;
}
OZ2_FN int oz2_shift(double amax, double sumsq, int half_bits)
{
    return amax > 0 ? half_bits - oz2_shift_base(amax, sumsq) : 0;
}

/* ---- The accuracy guard (kernel ozaki2-auto) ------------------------------------
 *
 * The number of moduli chosen per multiply from the operands, so that the
 * emulation's error bound stays within one unit roundoff of the entry's
 * scale.  Derivation (row a = A_i, column b = B_j, s = s_i, t = t_j):
 * rounding a·2^s to integers errs by ≤ 1/2 per element, so a' = a + da
 * with |da_l| ≤ 2^-(s+1) (0 where a_l = 0), likewise |db_l| ≤ 2^-(t+1);
 * the integer product and the CRT are exact, hence
 *   |dC_ij| = |Σ da·b + a·db + da·db|
 *          ≤ 2^-(s+1)·||b||_1 + 2^-(t+1)·||a||_1 + k·2^-(s+t+2).
 * With s = H - E_a, t = H - E_b (E: oz2_shift_base), that is
 *   2^-(H+1)·(2^E_a·||b||_1 + 2^E_b·||a||_1) + 2^-(2H+2)·k·2^(E_a+E_b),
 * and the guard asks it to be ≤ OZ2_GUARD_TAU·u·(|A||B|)_ij, u = 2^-53,
 * for every entry: the emulation then errs by no more than u·Σ|a||b|
 * (native FP64's deterministic bound is k·u·Σ|a||b|, its typical error
 * 0.1-1 of u·Σ|a||b|; the emulation's typical error is ~1/sqrt(3k) of its
 * bound, the da being independent roundings).  Horner's rule in the CRT adds ≤ (N-1)·u·|C_ij| on top
 * (relative to the entry itself; each step rounds once), the same order as
 * native's own final roundings.
 *
 * (|A||B|)_ij needs a lower estimate that is sound and cheap.  The one
 * used: the rearrangement inequality, Σ_l |a_l||b_l| ≥ Σ_p a↑_p·b↓_p
 * (a sorted ascending against b descending: no pairing of the same values
 * is smaller), evaluated on power-of-two histograms: each |x| is rounded
 * down to 2^(e_max-1-d), d the bin (its exponent below the row's largest
 * exponent e_max, d < OZ2_HIST_BINS; values further down count as 0).
 * Rounding down is monotone, so the histograms' anti-sorted sum is ≤ the
 * true anti-sorted sum ≤ (|A||B|)_ij: a lower bound, never an estimate that
 * could be too high.  It costs one pass over A and B (the histograms,
 * beside the max and the norms that the scaling needs anyway) and
 * O(OZ2_HIST_BINS) per entry of C, against O(k) for a low-precision
 * product of |A| and |B|, whose rounding (BF16 inputs, FP32 sums) would
 * also have to be bounded.  It is tight where rows and columns have narrow
 * ranges (uniform: a↑·b↓ sums to 2/3 of the mean pairing) and where large
 * values meet small ones (the pairing is then the anti-sorted one); it is
 * pessimistic for heavy tails (lognormal magnitudes exp(φ·randn): about
 * e^(φ²) below the mean pairing, i.e. ~1.44·φ² bits, ~0.7·φ²/2 moduli),
 * and it is 0 where the nonzeros of a and b together number ≤ k (sparse
 * rows meeting sparse columns): such an entry cannot be guarded and the
 * multiply is done natively.
 *
 * Per entry the guard keeps r = (2^E_a·||b||_1 + 2^E_b·||a||_1)/L and
 * q = k·2^(E_a+E_b)/L (L the lower bound), the multiply their maxima over
 * all entries; the count is the fewest N with
 * 2^-(H+1)·max r + 2^-(2H+2)·max q ≤ τ·u (oz2_guard_moduli).  Everything
 * is computed normalised by each row's 2^e_max, so no value over- or
 * underflows whatever the inputs' exponents. */
#define OZ2_HIST_BINS 64
#define OZ2_GUARD_TAU 1.0

/* What the guard keeps of one row of A or column of B (besides its
 * histogram h[OZ2_HIST_BINS]): e_max (frexp exponent of max|x|), the norm
 * exponent E (oz2_shift_base), the 1-norm normalised by 2^-e_max (rounded
 * up), the count of values counted as 0 (zero, or below the last bin), and
 * the last nonempty bin (-1: none; the pair loop stops there: a uniform
 * row fills ~log2(k) bins, not OZ2_HIST_BINS). */
typedef struct {
    int emax, enorm;
    double n1;
    int zeros, last;
} oz2_vsum;

/* The last nonempty bin of h, -1 when all are empty. */
OZ2_FN int oz2_hist_last(const int *h)
{
    int last = -1;
    for (int d = 0; d < OZ2_HIST_BINS; ++d)
        last = h[d] ? d : last;
    return last;
}

/* The bin of x for a row of largest exponent emax: d ≥ 0, or -1 when x is
 * 0 or below 2^(emax-OZ2_HIST_BINS) (counted as 0). */
OZ2_FN int oz2_hist_bin(double x, int emax)
{
    if (x == 0)
        return -1;
    int ex = 0;
    (void)frexp(x, &ex);
    int d = emax - ex;
    return d < OZ2_HIST_BINS ? d : -1;
}

/* The anti-sorted sum of the rounded-down values, normalised:
 * Σ count·2^-(da+db) over the pairs of a ascending (za zeros first, then
 * bins from the smallest) with b descending (bins from the largest; b's
 * zeros come last and add nothing).  (|a||b|) ≥ 2^(emax_a-1+emax_b-1) ×
 * this.  la, lb: the last nonempty bins of ha, hb (oz2_hist_last). */
OZ2_FN double oz2_antisorted(const int *ha, int za, int la, const int *hb, int lb)
{
    const int nb = lb + 1; /* b's bins past lb are empty */
    int ib = 0, left = nb > 0 ? hb[0] : 0;
    if (nb <= 0)
        return 0;
    /* a's zeros take the first za positions of b's descending order */
    int skip = za;
    while (ib < nb) {
        if (left == 0) {
            if (++ib < nb)
                left = hb[ib];
            continue;
        }
        if (skip == 0)
            break;
        int t = skip < left ? skip : left;
        skip -= t, left -= t;
    }
    double s = 0;
    for (int da = la; da >= 0 && ib < nb; --da) {
        int ca = ha[da];
        while (ca > 0 && ib < nb) {
            if (left == 0) {
                if (++ib < nb)
                    left = hb[ib];
                continue;
            }
            int t = ca < left ? ca : left;
            s += (double)t * ldexp(1.0, -(da + ib));
            ca -= t, left -= t;
        }
    }
    return s;
}

/* r and q of one entry (see above); both 0 where a or b is all zero (the
 * entry is then exactly 0), INFINITY where the lower bound is 0.  The
 * factor (1 + 2^-30) covers the roundings of the anti-sorted sum (≤ 128
 * additions of positive terms) and of the 1-norms (≤ OZ2_KCHUNK positive
 * terms in any order: relative error ≤ 2^16·2^-53). */
OZ2_FN void oz2_guard_entry(const oz2_vsum *a, const int *ha, const oz2_vsum *b, const int *hb,
                            int64_t k, double *r, double *q)
{
    if (a->n1 == 0 || b->n1 == 0) {
        *r = 0, *q = 0;
        return;
    }
    double s = oz2_antisorted(ha, a->zeros, a->last, hb, b->last);
    if (!(s > 0)) {
        *r = INFINITY, *q = INFINITY;
        return;
    }
    /* L = 2^(emax_a + emax_b - 2)·s, ||b||_1 = 2^emax_b·n1_b, ... */
    const int da = a->enorm - a->emax, db = b->enorm - b->emax;
    *r = 4.0 * (ldexp(b->n1, da) + ldexp(a->n1, db)) / s * (1.0 + 0x1p-30);
    *q = 4.0 * (double)k * ldexp(1.0, da + db) / s * (1.0 + 0x1p-30);
}

/* The fewest moduli (OZ2_MIN_MODULI..OZ2_MAX_MODULI) whose H meets
 * 2^-(H+1)·rmax + 2^-(2H+2)·qmax ≤ τ·2^-53; 0 when none does. */
static inline int oz2_guard_moduli(double rmax, double qmax)
{
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; ++n) {
        int h = (oz2_log2_product(n) - 2) / 2;
        if (ldexp(rmax, -(h + 1)) + ldexp(qmax, -(2 * h + 2)) <= OZ2_GUARD_TAU * 0x1p-53)
            return n;
    }
    return 0;
}

/* Whether N moduli at inner dimension k are expected to beat native FP64
 * (the speed half of ozaki2-auto's choice): time relative to native
 * ≈ N·(1/24 + 117/k), fitted to the H200 figures in docs/ozaki2.md
 * (14 moduli: 0.685 of native at k = 16384, 1.39 at k = 2048); so
 * N·(k + 2816) < 24·k.  k = 4096: up to 14 moduli, 8192: 17, 16384: 20. */
static inline int oz2_emulation_pays(int n, int64_t k)
{
    return (double)n * ((double)k + 2816.0) < 24.0 * (double)k;
}

/* x·2^s rounded to an integer (an exact double), and whether it is lossy:
 * nonzero and below 2^OZ2_KEEP_BITS after scaling. */
OZ2_FN double oz2_scaled(double x, int s, int *lossy)
{
    double y = ldexp(x, s);
    *lossy = x != 0 && fabs(y) < ldexp(1.0, OZ2_KEEP_BITS);
    return rint(y);
}

/* The symmetric residue of an integer-valued double x (|x| < 2^100):
 * in [-(m-1)/2, (m-1)/2] for odd m, [-m/2, m/2 - 1] for even m.  Each
 * step r - q·m is exact (a small integer, one fma); the first quotient
 * may be off by a few units, the second is right within one. */
OZ2_FN double oz2_symmod(double x, double m, double rinv)
{
    double r = fma(-rint(x * rinv), m, x);
    r = fma(-rint(r * rinv), m, r);
    if (r > (m - 1) * 0.5)
        r -= m;
    else if (r < -m * 0.5)
        r += m;
    return r;
}

/* The FP32 symmetric residue for Garner's steps: an odd m and an integer
 * x with |x| < 2^16, one rounding and no corrections.  x/m is never within 1/(2m) of a half-integer
 * (2x − (2k+1)m is odd), and x·rinv errs from x/m by at most |x/m|·(2^-23 + 2^-48) < 2^-6/m (two
 * roundings of 2^-24 each, |x| < 2^16), far below 1/(2m): rint gives the nearest quotient, so x −
 * q·m (exact) is already the symmetric residue, |r| ≤ (m−1)/2. Garner's steps for digits i ≥ 1 (odd
 * moduli: OZ2_MODULI_INIT) are this case; half of each step's instructions are the corrections it
 * skips. */
OZ2_FN float oz2_symmodf_odd(float x, float m, float rinv)
{
    return fmaf(-rintf(x * rinv), m, x);
}

/* ---- Residues from base-2^15 digits (the GPU's slicing) ----------------------
 *
 * The GPU's rint and conversions run at a quarter of its FMA rate, and
 * oz2_symmod takes two rints per modulus.  The slicing kernels instead split
 * each scaled integer x (|x| ≤ 2^H, H ≤ 76) once into nd balanced digits,
 * x = Σ d_c·2^(15c) with |d_c| ≤ 2^14 (nd = oz2_params.digits, so that
 * 15·nd ≥ H + 2), and reduce per modulus in FP32:
 * y = Σ d_c·(2^(15c) mod m) has terms of magnitude ≤ 2^14·128 = 2^21 and
 * at most six of them, so |y| < 2^24 and every partial sum is exact; y's
 * quotient by m (below 2^17) is found by adding 1.5·2^23, off by at most one
 * (y·rinv errs by |y/m|·2^-23 < 2^-6), and one correction each way gives
 * oz2_symmod's residue, its convention for the even modulus included.
 * tests/unit/test_ozaki2.c checks both against oz2_symmod. */
#define OZ2_RND_BIAS 6755399441055744.0 /* 1.5·2^52: a double's ulp there is 1 */
#define OZ2_RND_BIASF 12582912.0f       /* 1.5·2^23, the same in FP32 */

/* The nd digits of an integer-valued x with |x| < 2^(15·nd - 1).  Digit c
 * is the nearest integer to the remainder over 2^(15c) (the power-of-two
 * scaling is exact, the addition of 1.5·2^52 rounds); the remainder less
 * that multiple of 2^(15c) is exact (a double minus its rounding to a
 * multiple of 2^(15c) is a multiple of its own ulp below 2^(15c-1)). */
OZ2_FN void oz2_digits15(double x, int nd, float *d)
{
    double p = 1.0, pinv = 1.0; /* 2^(15c) and its inverse, for c = nd - 1 down */
    for (int c = 1; c < nd; ++c)
        p *= 0x1p15, pinv *= 0x1p-15;
    for (int c = nd - 1; c >= 1; --c) {
        const double h = (x * pinv + OZ2_RND_BIAS) - OZ2_RND_BIAS;
        x = fma(-h, p, x);
        d[c] = (float)h;
        p *= 0x1p-15, pinv *= 0x1p15;
    }
    d[0] = (float)x;
}

/* The symmetric residue modulo m (rinv = 1/m in FP32) of Σ d_c·w_c, the
 * digits of oz2_digits15 and w_c = 2^(15c) mod m (oz2_params.pw15, w_0 = 1). */
OZ2_FN float oz2_digits_symmod(const float *d, int nd, const float *w, float m, float rinv)
{
    float y = d[0];
    for (int c = 1; c < nd; ++c)
        y = fmaf(d[c], w[c], y);
    const float q = (y * rinv + OZ2_RND_BIASF) - OZ2_RND_BIASF;
    float r = fmaf(-q, m, y);
    if (r > (m - 1) * 0.5f)
        r -= m;
    else if (r < -m * 0.5f)
        r += m;
    return r;
}

/* Garner's mixed-radix digits of the GPU's CRT (ozaki2_mod.cuh), the
 * same digits as oz2_garner's: digit i is the symmetric residue modulo m_i
 * of (c_i - S)·(m_0·…·m_{i-1})^-1 with S = Σ_{j<i} v_j·(m_0·…·m_{j-1})
 * (pre, pinv), which oz2_garner reaches one step per earlier digit.  Per
 * digit: i FMAs and two reductions instead of i reductions.  Exact in
 * FP32: |v_j·pre| ≤ 128·127 < 2^14, so |S| < 19·2^14 < 2^19; S's quotient
 * by the odd m_i (below 2^12) errs by less than 2^-10, below the 1/(2m_i)
 * that separates it from a half-integer, so one rounding gives S's
 * symmetric residue r; |c_i - r| ≤ 254 times pinv < 255 is below 2^16,
 * oz2_symmodf_odd's case.  c: the residues, overwritten by the digits. */
OZ2_FN void oz2_garner_digits(const oz2_params *p, int n, float *c)
{
    for (int i = 1; i < n; ++i) {
        float s = c[0];
        for (int j = 1; j < i; ++j)
            s = fmaf(c[j], p->pre[j][i], s);
        const float r = fmaf(-((s * p->rinvf[i] + OZ2_RND_BIASF) - OZ2_RND_BIASF), p->mf[i], s);
        const float y = (c[i] - r) * p->pinv[i];
        c[i] = fmaf(-((y * p->rinvf[i] + OZ2_RND_BIASF) - OZ2_RND_BIASF), p->mf[i], y);
    }
}

/* Garner + Horner: the integer X with |X| < M/2 and X ≡ c_i (mod m_i), as
 * a double, from the symmetric residues c[0..n-1] (FP32 integers).  Digit
 * i: t = c_i, then t = (t - v_j)·m_j^-1 mod m_i for j < i (|t - v_j| ≤ 256,
 * times an inverse < 255: below 2^16, exact in FP32; m_i odd for i ≥ 1:
 * oz2_symmodf_odd). */
OZ2_FN double oz2_garner(const oz2_params *p, const float *c)
{
    float v[OZ2_MAX_MODULI] = {0};
    for (int i = 0; i < p->n; ++i) {
        float t = c[i];
        for (int j = 0; j < i; ++j)
            t = oz2_symmodf_odd((t - v[j]) * p->inv[j][i], p->mf[i], p->rinvf[i]);
        v[i] = t;
    }
    double x = v[p->n - 1];
    for (int i = p->n - 2; i >= 0; --i)
        x = fma(p->m[i], x, (double)v[i]);
    return x;
}

#endif
