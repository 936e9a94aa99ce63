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

typedef struct {
    int n;                                     /* number of moduli */
    int log2m;                                 /* floor(log2 M) */
    int half_bits;                             /* H = floor((log2m - 2) / 2) */
    double m[OZ2_MAX_MODULI];                  /* the moduli */
    double rinv[OZ2_MAX_MODULI];               /* 1/m, rounded */
    float mf[OZ2_MAX_MODULI];                  /* the moduli, FP32 */
    float rinvf[OZ2_MAX_MODULI];               /* 1/m in FP32 */
    float inv[OZ2_MAX_MODULI][OZ2_MAX_MODULI]; /* inv[j][i] = m_j^-1 mod m_i, j < i */
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
    }
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
 * f in [0.5, 1)), so that ||x·2^s||_2 ≤ 2^H.  An all-zero row gets 0. */
OZ2_FN int oz2_shift(double amax, double sumsq, int half_bits)
{
    if (!(amax > 0))
        return 0;
    int e = 0, e2 = 0;
    (void)frexp(amax, &e);
    /* sqrt and the sum are each within a few ulps (k ≤ 2^17 terms: far
     * below 2^-30 relative); the factor makes the bound safe. */
    (void)frexp(sqrt(sumsq) * (1.0 + 0x1p-30), &e2);
    return half_bits - (e + e2);
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
