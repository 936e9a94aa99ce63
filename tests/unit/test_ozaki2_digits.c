/* test_ozaki2_digits — the residues the GPU's slicing computes from base-2^15
 * digits (ozaki2.h: oz2_digits15, oz2_digits_symmod, the parameters'
 * digits and pw15), against oz2_symmod and exact 128-bit arithmetic, for
 * every number of moduli (8..20) and every modulus:
 *  - the parameters: 15·digits ≥ H + 2, digits ≤ OZ2_DIGITS, pw15 the
 *    symmetric residues of 2^(15c);
 *  - the digits: within ±2^14 and summing to x exactly;
 *  - the residue: oz2_symmod's, which is ≡ x (mod m) and in its range,
 *    on random integers of every magnitude up to 2^H and on the edges
 *    (0, ±1, ±2^H, digit boundaries, the quotient's half-way points);
 *  - Garner's digits from prefix sums (oz2_garner_digits, the GPU CRT's)
 *    equal to oz2_garner's step by step, and reconstructing X exactly, on
 *    random X and on X near 0 and ±(M/2 - 1) (|X| < 2^125 past 15 moduli). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "dd_check.h"
#include "ozaki2.h"

#define OZ_RNG_SEED 0x2545F4914F6CDD1Dull
#include "oz_rng.h"

typedef __int128 i128;

/* x mod m in oz2_symmod's convention, exactly. */
static int sym_exact(i128 x, int m)
{
    int r = (int)(x % m);
    if (r < 0)
        r += m;
    if (2 * r > m - 1)
        r -= m;
    return r;
}

static int check_one(const oz2_params *p, double x)
{
    float d[OZ2_DIGITS];
    oz2_digits15(x, p->digits, d);
    i128 sum = 0, pw = 1;
    for (int c = 0; c < p->digits; ++c) {
        if (!(fabsf(d[c]) <= 16384.0f) || d[c] != rintf(d[c])) {
            CHECK(0, "moduli %d, x %.17g: digit %d = %g", p->n, x, c, (double)d[c]);
            return 1;
        }
        sum += (i128)d[c] * pw;
        pw *= 32768;
    }
    if (sum != (i128)x) {
        CHECK(0, "moduli %d, x %.17g: the digits do not sum to x", p->n, x);
        return 1;
    }
    for (int i = 0; i < p->n; ++i) {
        const int m = (int)p->m[i];
        const float got = oz2_digits_symmod(d, p->digits, p->pw15[i], p->mf[i], p->rinvf[i]);
        const double ref = oz2_symmod(x, p->m[i], p->rinv[i]);
        const int ex = sym_exact((i128)x, m);
        if (got != (float)ex || ref != (double)ex) {
            CHECK(0, "moduli %d, m %d, x %.17g: digits %g, oz2_symmod %g, exact %d", p->n, m, x,
                  (double)got, ref, ex);
            return 1;
        }
    }
    return 0;
}

/* oz2_garner's digits, step by step (its loop, kept here as the reference). */
static void garner_steps(const oz2_params *p, const float *c, float *v)
{
    for (int i = 0; i < p->n; ++i) {
        float t = c[i];
        for (int j = 0; j < i; ++j)
            t = oz2_symmodf_odd((t - v[j]) * p->inv[j][i], p->mf[i], p->rinvf[i]);
        v[i] = t;
    }
}

/* The residues of X, the digits both ways, and X back from the digits. */
static int check_garner(const oz2_params *p, i128 X)
{
    float c[OZ2_MAX_MODULI], v[OZ2_MAX_MODULI];
    for (int i = 0; i < p->n; ++i)
        c[i] = (float)sym_exact(X, (int)p->m[i]);
    garner_steps(p, c, v);
    oz2_garner_digits(p, p->n, c);
    i128 back = 0;
    for (int i = p->n - 1; i >= 0; --i)
        back = back * (i128)p->m[i] + (i128)v[i];
    for (int i = 0; i < p->n; ++i)
        if (c[i] != v[i] || back != X) {
            CHECK(0, "moduli %d, X %.17g: digit %d %g (prefix) vs %g (steps), back %s", p->n,
                  (double)X, i, (double)c[i], (double)v[i], back == X ? "ok" : "wrong");
            return 1;
        }
    return 0;
}

int main(void)
{
    long cases = 0;
    for (int nm = OZ2_MIN_MODULI; nm <= OZ2_MAX_MODULI; ++nm) {
        oz2_params p;
        oz2_params_init(&p, nm);
        const int H = p.half_bits;
        CHECK(p.digits <= OZ2_DIGITS && 15 * p.digits >= H + 2, "moduli %d: %d digits for H = %d",
              nm, p.digits, H);
        for (int i = 0; i < nm; ++i) {
            i128 pw = 1;
            for (int c = 0; c < OZ2_DIGITS; ++c, pw *= 32768)
                CHECK(p.pw15[i][c] == (float)sym_exact(pw, (int)p.m[i]), "moduli %d: pw15[%d][%d]",
                      nm, i, c);
        }
        int bad = 0;
        const double top = ldexp(1.0, H);
        const double edges[] = {0, 1, -1, top, -top, top - ldexp(1.0, H - 53 > 0 ? H - 53 : 0),
                                16384, -16384, 16383, 32767, 32768, -32768, 32769,
                                ldexp(1.0, 30) - 1, ldexp(1.0, 45) + 1, ldexp(1.0, 52) - 1,
                                ldexp(1.0, 53) - 2};
        for (unsigned q = 0; q < sizeof edges / sizeof edges[0]; ++q)
            if (fabs(edges[q]) <= top)
                bad += check_one(&p, edges[q]), ++cases;
        /* the quotient's half-way points and their neighbours, m·t + (m ± 1)/2 */
        for (int i = 0; i < nm && !bad; ++i)
            for (int t = -40; t <= 40; ++t) {
                const double base = p.m[i] * (double)t * 1021.0;
                for (int o = -1; o <= 1; ++o)
                    bad += check_one(&p, base + floor(p.m[i] / 2) + o), ++cases;
            }
        /* random integers, magnitudes 2^0 .. 2^H, random signs and bits */
        for (int q = 0; q < 20000 && !bad; ++q) {
            const int e = (int)(next_u64() % (uint64_t)(H + 1));
            double x = rint(ldexp(fabs(uni()), e));
            if (next_u64() & 1)
                x = -x;
            bad += check_one(&p, x), ++cases;
        }
    }
    long vectors = 0;
    for (int nm = OZ2_MIN_MODULI; nm <= OZ2_MAX_MODULI; ++nm) {
        oz2_params p;
        oz2_params_init(&p, nm);
        /* M/2 - 1, or 2^125 where M passes 2^126 (128-bit arithmetic; the
         * residue vectors of |X| < 2^125 still have every digit to find) */
        i128 half = (i128)1 << 125;
        if (p.log2m < 126) {
            i128 M = 1;
            for (int i = 0; i < nm; ++i)
                M *= (i128)p.m[i];
            half = M / 2 - 1;
        }
        int bad = 0;
        for (int o = 0; o < 50 && !bad; ++o) {
            bad += check_garner(&p, (i128)o) + check_garner(&p, -(i128)o);
            bad += check_garner(&p, half - o) + check_garner(&p, -half + o);
            vectors += 4;
        }
        for (int q = 0; q < 20000 && !bad; ++q) { /* X uniform over (-M/2, M/2) */
            typedef unsigned __int128 u128; /* shifted unsigned: no signed overflow */
            const i128 r = (i128)((((u128)next_u64() << 64) | next_u64()) & (((u128)1 << 126) - 1));
            bad += check_garner(&p, r % (2 * half + 1) - half), ++vectors;
        }
    }
    printf("test_ozaki2_digits: %ld values over 8..20 moduli, %ld residue vectors\n", cases, vectors);
    if (g_fail)
        fprintf(stderr, "test_ozaki2_digits: %d failure(s)\n", g_fail);
    else
        printf("test_ozaki2_digits: all passed\n");
    return g_fail ? 1 : 0;
}
