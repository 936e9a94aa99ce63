/* grid.c — distribution arithmetic (grid.h).  Pure functions. */
#include "grid.h"

dd_range grid_block(int64_t n, int parts, int i)
{
    int64_t base = n / parts, extra = n % parts;
    dd_range r;
    r.len = base + (i < extra ? 1 : 0);
    r.start = (int64_t)i * base + (i < extra ? i : extra);
    return r;
}

int grid_owner(int64_t n, int parts, int64_t k)
{
    int64_t base = n / parts, extra = n % parts;
    int64_t big = extra * (base + 1); /* indices covered by the larger blocks */
    if (k < big)
        return (int)(k / (base + 1));
    return (int)(extra + (k - big) / base);
}

dd_grid grid_make(int P, int Q, int rank)
{
    dd_grid g = {P, Q, rank / Q, rank % Q, rank};
    return g;
}

void grid_default(int nranks, int *P, int *Q)
{
    int p = 1;
    for (int d = 1; (int64_t)d * d <= nranks; d++)
        if (nranks % d == 0)
            p = d;
    *P = p;
    *Q = nranks / p;
}

dd_panel grid_panel_at(int64_t K, int P, int Q, int64_t nb, int64_t k0)
{
    dd_panel pn;
    pn.k0 = k0;
    pn.qa = grid_owner(K, Q, k0);
    pn.pb = grid_owner(K, P, k0);
    dd_range ra = grid_block(K, Q, pn.qa), rb = grid_block(K, P, pn.pb);
    /* the end is the nearest of k0 + nb and the two block ends, computed
     * without forming k0 + nb, which overflows for huge nb */
    int64_t end = ra.start + ra.len;
    if (rb.start + rb.len < end)
        end = rb.start + rb.len;
    if (nb < end - k0)
        end = k0 + nb;
    pn.w = end - k0;
    pn.a_off = k0 - ra.start;
    pn.b_off = k0 - rb.start;
    return pn;
}

int64_t grid_first_width(int P, int Q, int64_t nb)
{
    if ((int64_t)P * Q > 1 && nb >= 256)
        return nb / 8 > 128 ? nb / 8 : 128;
    return nb;
}

int64_t grid_panels(int64_t K, int P, int Q, int64_t nb, dd_panel *out)
{
    if (nb < 1 || K < 0 || P < 1 || Q < 1)
        return -1;
    int64_t first = grid_first_width(P, Q, nb), n = 0;
    /* every panel is at least 1 wide, so at most K of them: the loop ends */
    for (int64_t k0 = 0; k0 < K; n++) {
        dd_panel pn = grid_panel_at(K, P, Q, n == 0 ? first : nb, k0);
        if (pn.w < 1 || n >= K)
            return -1;
        if (out)
            out[n] = pn;
        k0 += pn.w;
    }
    return n;
}
