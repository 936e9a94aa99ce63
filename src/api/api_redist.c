/* api_redist.c — one (sub)matrix from one layout to another (api_redist.h):
 * each dimension cut into segments owned by one process of each layout,
 * the tiles they make packed per destination rank, exchanged, unpacked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "api_redist.h"
#include "grid.h"

/* RD_CYCLIC_FIRST: index gi >= imb lies in block b = (gi - imb) / nb + 1
 * (the first block is block 0), on process (src + b) mod np. */
int rd_owner(const rd_dist *d, int64_t g)
{
    int64_t gi = d->off + g;
    if (d->kind == RD_CYCLIC)
        return (int)((d->src + gi / d->nb) % d->np);
    if (d->kind == RD_CYCLIC_FIRST)
        return gi < d->imb ? d->src : (int)((d->src + ((gi - d->imb) / d->nb + 1) % d->np) % d->np);
    return grid_owner(d->glen, d->np, gi);
}

int64_t rd_local(const rd_dist *d, int64_t g)
{
    int64_t gi = d->off + g;
    if (d->kind == RD_CYCLIC)
        return gi / d->nb / d->np * d->nb + gi % d->nb;
    if (d->kind == RD_CYCLIC_FIRST) {
        if (gi < d->imb)
            return gi;
        int64_t b = (gi - d->imb) / d->nb + 1, in = (gi - d->imb) % d->nb, before = b / d->np;
        /* before: the blocks of this process ahead of b; on src the first is block 0 */
        return b % d->np == 0 ? d->imb + (before - 1) * d->nb + in : before * d->nb + in;
    }
    return gi - grid_block(d->glen, d->np, grid_owner(d->glen, d->np, gi)).start;
}

int64_t rd_run(const rd_dist *d, int64_t g)
{
    int64_t gi = d->off + g, left; /* gi < off + n <= glen: no overflow */
    if (d->kind == RD_CYCLIC) {
        left = d->nb - gi % d->nb; /* to the block's end, without forming it (it may pass 2^63) */
    } else if (d->kind == RD_CYCLIC_FIRST) {
        left = gi < d->imb ? d->imb - gi : d->nb - (gi - d->imb) % d->nb;
    } else {
        dd_range r = grid_block(d->glen, d->np, grid_owner(d->glen, d->np, gi));
        left = r.start + r.len - gi;
    }
    return left < d->n - g ? left : d->n - g;
}

int64_t rd_held(const rd_dist *d, int me, int64_t x)
{
    if (x <= 0 || me < 0 || me >= d->np)
        return 0;
    /* RD_CYCLIC is RD_CYCLIC_FIRST with a first block of nb */
    int64_t imb = d->kind == RD_CYCLIC_FIRST ? d->imb : d->nb;
    int64_t dist = ((int64_t)me - d->src + d->np) % d->np;
    if (x <= imb)
        return dist == 0 ? x : 0;
    /* blocks 1..full whole, then part of block full + 1; block b on dist b mod np */
    int64_t rest = x - imb, full = rest / d->nb, part = rest % d->nb;
    int64_t count = dist == 0 ? imb + full / d->np * d->nb
                              : (full >= dist ? (full - dist) / d->np + 1 : 0) * d->nb;
    if (part && (full + 1) % d->np == dist)
        count += part;
    return count;
}

int rd_rank(const rd_layout *l, int pr, int pc)
{
    return l->order == 'C' ? pc * l->row.np + pr : pr * l->col.np + pc;
}

void rd_coords(const rd_layout *l, int rank, int *pr, int *pc)
{
    int P = l->row.np, Q = l->col.np;
    if (rank < 0 || rank >= P * Q) {
        *pr = *pc = -1;
    } else if (l->order == 'C') {
        *pr = rank % P;
        *pc = rank / P;
    } else {
        *pr = rank / Q;
        *pc = rank % Q;
    }
}

/* Segments end at multiples of RD_TILE too, so that a tile (a row segment
 * × a column segment) stays in cache whichever side is strided. */
enum { RD_TILE = 64 };

/* The part of one dimension a rank holds in its layout (`mine`, coordinate
 * me), cut where the other layout's owner changes: segments of indices
 * g..g+len-1 at local indices loc.., grouped by the other layout's owner
 * (first[k]..first[k+1]), in index order within a group. */
typedef struct {
    int64_t g, len, loc;
} rd_seg;

typedef struct {
    rd_seg *seg;
    int64_t *first; /* np + 1 */
    int64_t *elems; /* np: elements per owner in the other layout */
    int np;
    int64_t tile; /* segments end at multiples of it too */
} rd_segs;

static void segs_free(rd_segs *s)
{
    free(s->seg);
    free(s->first);
    free(s->elems);
    memset(s, 0, sizeof *s);
}

/* Walk my indices, cut at the other layout's runs; fill == 0 counts (into
 * first[k + 1] and elems), fill == 1 writes the segments at pos[k]++. */
static void segs_walk(rd_segs *s, const rd_dist *mine, int me, const rd_dist *other, int64_t *pos,
                      int fill)
{
    for (int64_t g = 0; g < mine->n;) {
        int64_t end = g + rd_run(mine, g);
        if (rd_owner(mine, g) != me) {
            g = end;
            continue;
        }
        int64_t loc = rd_local(mine, g);
        for (int64_t h = g; h < end;) {
            /* to the tile's end, without forming it (the tile may be near 2^63) */
            int64_t len = rd_run(other, h), tile_left = s->tile - h % s->tile;
            len = len < end - h ? len : end - h;
            len = len < tile_left ? len : tile_left;
            int k = rd_owner(other, h);
            if (fill) {
                s->seg[pos[k]++] = (rd_seg){h, len, loc + (h - g)};
            } else {
                s->first[k + 1]++;
                s->elems[k] += len;
            }
            h += len;
        }
        g = end;
    }
}

static int segs_build(rd_segs *s, const rd_dist *mine, int me, const rd_dist *other, int64_t tile,
                      dd_err *err)
{
    int np = other->np;
    memset(s, 0, sizeof *s);
    s->np = np;
    s->tile = tile;
    s->first = calloc((size_t)np + 1, sizeof *s->first);
    s->elems = calloc((size_t)np, sizeof *s->elems);
    int64_t *pos = calloc((size_t)np, sizeof *pos);
    if (!s->first || !s->elems || !pos) {
        free(pos);
        return dd_fail(err, DD_ENOMEM, "out of host memory for a redistribution's index");
    }
    segs_walk(s, mine, me, other, NULL, 0);
    for (int k = 0; k < np; k++)
        s->first[k + 1] += s->first[k];
    s->seg = malloc(sizeof *s->seg * (size_t)(s->first[np] ? s->first[np] : 1));
    if (!s->seg) {
        free(pos);
        return dd_fail(err, DD_ENOMEM, "out of host memory for %lld segments of a redistribution",
                       (long long)s->first[np]);
    }
    memcpy(pos, s->first, sizeof *pos * (size_t)np);
    segs_walk(s, mine, me, other, pos, 1);
    free(pos);
    return DD_OK;
}

/* n elements between a packed buffer and a strided run (stride in elements). */
static void run_copy(char *buf, char *p, int64_t n, int64_t stride, size_t es, int pack)
{
    if (stride == 1) {
        if (pack)
            memcpy(buf, p, (size_t)n * es);
        else
            memcpy(p, buf, (size_t)n * es);
    } else if (es == 16) { /* complex double: two words an element */
        uint64_t *b = (uint64_t *)buf, *q = (uint64_t *)p;
        for (int64_t i = 0; i < n; i++)
            if (pack)
                b[2 * i] = q[2 * i * stride], b[2 * i + 1] = q[2 * i * stride + 1];
            else
                q[2 * i * stride] = b[2 * i], q[2 * i * stride + 1] = b[2 * i + 1];
    } else if (es == 8) {
        uint64_t *b = (uint64_t *)buf, *q = (uint64_t *)p;
        for (int64_t i = 0; i < n; i++)
            if (pack)
                b[i] = q[i * stride];
            else
                q[i * stride] = b[i];
    } else {
        uint32_t *b = (uint32_t *)buf, *q = (uint32_t *)p;
        for (int64_t i = 0; i < n; i++)
            if (pack)
                b[i] = q[i * stride];
            else
                q[i * stride] = b[i];
    }
}

/* The rows R[kr] × columns C[kc] of the local array at base (strides rs,
 * cs) to (pack) or from the buffer: tile by tile (column segments outer,
 * row segments inner), each tile column by column, rows inner.  Both sides
 * cut the same segments (at both layouts' boundaries and at the tiles), so
 * they enumerate the same elements in the same order.  The column segments
 * are shared among threads, each starting at its first segment's place. */
typedef struct {
    char *buf, *base;
    const rd_segs *R, *C;
    int kr, kc;
    int64_t rs, cs;
    size_t es;
    int pack;
} tile_job;

static void tile_part(void *arg, int64_t lo, int64_t hi)
{
    const tile_job *j = arg;
    const rd_segs *R = j->R, *C = j->C;
    int64_t a0 = C->first[j->kc], skip = 0, es = (int64_t)j->es;
    for (int64_t a = a0; a < a0 + lo; a++)
        skip += C->seg[a].len;
    char *buf = j->buf + skip * R->elems[j->kr] * es;
    for (int64_t a = a0 + lo; a < a0 + hi; a++) {
        const rd_seg *cg = &C->seg[a];
        for (int64_t b = R->first[j->kr]; b < R->first[j->kr + 1]; b++) {
            const rd_seg *r = &R->seg[b];
            for (int64_t c = 0; c < cg->len; c++) {
                char *p = j->base + ((cg->loc + c) * j->cs + r->loc * j->rs) * es;
                run_copy(buf, p, r->len, j->rs, j->es, j->pack);
                buf += r->len * es;
            }
        }
    }
}

static void tile(int threads, char *buf, char *base, const rd_segs *R, int kr, const rd_segs *C,
                 int kc, int64_t rs, int64_t cs, size_t es, int pack)
{
    tile_job j = {buf, base, R, C, kr, kc, rs, cs, es, pack};
    rd_parallel(threads, C->first[kc + 1] - C->first[kc], tile_part, &j);
}

/* One side of a move as this rank sees it, in the source matrix's
 * coordinates: my segments of rows and columns grouped by the partner
 * layout's processes, my array's strides, and the partner's rank of each
 * pair of partner coordinates. */
typedef struct {
    rd_segs R, C;
    int64_t rs, cs;
    const rd_layout *partner;
    int partner_swapped;   /* partner coordinates (along rows, along cols) are its (pc, pr) */
    int64_t *count, *disp; /* per rank of comm (my own part counted in `self`, not here) */
    int64_t self;
    char *buf;
    int kept; /* buf is the caller's (rd_keep) */
} rd_side;

static int side_rank(const rd_side *s, int kr, int kc)
{
    return s->partner_swapped ? rd_rank(s->partner, kc, kr) : rd_rank(s->partner, kr, kc);
}

static void side_free(rd_side *s)
{
    segs_free(&s->R);
    segs_free(&s->C);
    free(s->count);
    free(s->disp);
    if (!s->kept)
        free(s->buf);
}

/* n bytes of buffer: the kept one (grown) or a fresh one. */
static void *side_buf(rd_side *s, rd_keep *keep, int i, size_t n)
{
    if (!keep)
        return malloc(n);
    if (keep->cap[i] < n) {
        free(keep->p[i]);
        keep->p[i] = malloc(n);
        keep->cap[i] = keep->p[i] ? n : 0;
    }
    s->kept = keep->p[i] != NULL;
    return keep->p[i];
}

/* Segments, counts, displacements and the buffer of one side.  mine_r and
 * mine_c are my dimensions' distributions (source coordinates), me_r and
 * me_c my coordinates along them; other_r, other_c the partner's; rtile
 * the rows' tile (columns are always cut at RD_TILE); self my rank. */
typedef struct {
    int size, self, which;
    size_t es;
    int64_t rtile;
    rd_keep *keep;
} side_arg;

static int side_plan(rd_side *s, const side_arg *x, const rd_dist *mine_r, int me_r,
                     const rd_dist *mine_c, int me_c, const rd_dist *other_r,
                     const rd_dist *other_c, dd_err *err)
{
    s->count = calloc((size_t)x->size, sizeof *s->count);
    s->disp = calloc((size_t)x->size, sizeof *s->disp);
    if (!s->count || !s->disp)
        return dd_fail(err, DD_ENOMEM, "out of host memory for a redistribution's counts");
    int rc = DD_OK;
    if (me_r >= 0 && me_c >= 0) {
        rc = segs_build(&s->R, mine_r, me_r, other_r, x->rtile, err);
        if (!rc)
            rc = segs_build(&s->C, mine_c, me_c, other_c, RD_TILE, err);
        for (int kr = 0; !rc && kr < other_r->np; kr++)
            for (int kc = 0; kc < other_c->np; kc++)
                s->count[side_rank(s, kr, kc)] = s->R.elems[kr] * s->C.elems[kc];
    }
    if (rc)
        return rc;
    s->self = s->count[x->self]; /* moves directly, not through MPI */
    s->count[x->self] = 0;
    int64_t total = 0;
    for (int r = 0; r < x->size; r++) {
        s->disp[r] = total;
        total += s->count[r];
    }
    s->buf = side_buf(s, x->keep, x->which, total ? (size_t)total * x->es : 1);
    if (!s->buf)
        return dd_fail(err, DD_ENOMEM,
                       "out of host memory for a redistribution's buffer (%lld elements)",
                       (long long)total);
    return DD_OK;
}

/* Pack (send side) or unpack (receive side) every pair's tile but this
 * rank's own (`self`), which self_copy moves directly. */
static void side_copy(rd_side *s, char *base, size_t es, int pack, int self, int threads)
{
    if (!s->R.first || !s->C.first)
        return;
    for (int kr = 0; kr < s->R.np; kr++)
        for (int kc = 0; kc < s->C.np; kc++) {
            int r = side_rank(s, kr, kc);
            if (s->count[r] && r != self)
                tile(threads, s->buf + s->disp[r] * (int64_t)es, base, &s->R, kr, &s->C, kc, s->rs,
                     s->cs, es, pack);
        }
}

/* What this rank keeps: from its send side's tile for itself straight to
 * its receive side's (the two enumerate the same segments, in order),
 * column segments shared among threads. */
typedef struct {
    const rd_side *snd, *rcv;
    int sr, sc, rr, rc;
    const char *src;
    char *dst;
    size_t es;
} self_job;

static void self_run(const self_job *j, const char *p, char *q, int64_t n)
{
    int64_t srs = j->snd->rs, drs = j->rcv->rs;
    if (srs == 1 && drs == 1)
        memcpy(q, p, (size_t)n * j->es);
    else if (j->es == 16)
        for (int64_t i = 0; i < n; i++) {
            ((uint64_t *)q)[2 * i * drs] = ((const uint64_t *)p)[2 * i * srs];
            ((uint64_t *)q)[2 * i * drs + 1] = ((const uint64_t *)p)[2 * i * srs + 1];
        }
    else if (j->es == 8)
        for (int64_t i = 0; i < n; i++)
            ((uint64_t *)q)[i * drs] = ((const uint64_t *)p)[i * srs];
    else
        for (int64_t i = 0; i < n; i++)
            ((uint32_t *)q)[i * drs] = ((const uint32_t *)p)[i * srs];
}

static void self_part(void *arg, int64_t lo, int64_t hi)
{
    const self_job *j = arg;
    const rd_segs *SR = &j->snd->R, *SC = &j->snd->C, *RR = &j->rcv->R, *RC = &j->rcv->C;
    int64_t es = (int64_t)j->es;
    for (int64_t i = lo; i < hi; i++) {
        const rd_seg *cs = &SC->seg[SC->first[j->sc] + i], *cd = &RC->seg[RC->first[j->rc] + i];
        for (int64_t b = SR->first[j->sr], b2 = RR->first[j->rr]; b < SR->first[j->sr + 1];
             b++, b2++) {
            const rd_seg *r = &SR->seg[b], *rd = &RR->seg[b2];
            for (int64_t c = 0; c < cs->len; c++)
                self_run(j, j->src + ((cs->loc + c) * j->snd->cs + r->loc * j->snd->rs) * es,
                         j->dst + ((cd->loc + c) * j->rcv->cs + rd->loc * j->rcv->rs) * es, r->len);
        }
    }
}

/* Row runs contiguous on both sides of every rank: no tile cut along rows
 * (each run one memcpy); else RD_TILE, for the strided side's cache. */
static int64_t row_tile(MPI_Comm comm, int64_t srs, int64_t drs, dd_err *err)
{
    int mine = srs == 1 && drs == 1, all = 0;
    int rc = dd_mpi_check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm),
                          "MPI_Allreduce (a redistribution's runs)", err);
    return rc ? -1 : all ? INT64_MAX / 4 : RD_TILE;
}

MPI_Datatype rd_mpi_type(dd_dtype t)
{
    return t == DD_F64    ? MPI_DOUBLE
           : t == DD_F32  ? MPI_FLOAT
           : t == DD_C128 ? MPI_C_DOUBLE_COMPLEX
                          : MPI_C_FLOAT_COMPLEX;
}

int rd_move(MPI_Comm comm, dd_dtype t, const rd_layout *from, const void *src, const rd_layout *to,
            void *dst, int trans, int threads, rd_keep *keep, dd_err *err)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t es = dd_elsize(t);
    int fr, fc, tr, tc;
    rd_coords(from, rank, &fr, &fc);
    rd_coords(to, rank, &tr, &tc);
    /* the destination in the source's coordinates */
    const rd_dist *to_r = trans ? &to->col : &to->row, *to_c = trans ? &to->row : &to->col;
    rd_side snd = {.rs = from->rs, .cs = from->cs, .partner = to, .partner_swapped = trans};
    rd_side rcv = {.rs = trans ? to->cs : to->rs,
                   .cs = trans ? to->rs : to->cs,
                   .partner = from,
                   .partner_swapped = 0};
    side_arg x = {size, rank, 0, es, row_tile(comm, snd.rs, rcv.rs, err), keep};
    int rc = x.rtile < 0 ? DD_EFAIL : DD_OK;
    if (!rc)
        rc = side_plan(&snd, &x, &from->row, fr, &from->col, fc, to_r, to_c, err);
    x.which = 1;
    if (!rc)
        rc = side_plan(&rcv, &x, to_r, trans ? tc : tr, to_c, trans ? tr : tc, &from->row,
                       &from->col, err);
    if (!(rc = dd_agree(comm, rc, err))) {
        side_copy(&snd, (char *)src, es, 1, rank, threads);
        rc = rd_exchange(comm, rd_mpi_type(t), es, snd.buf, snd.count,
                         snd.disp, rcv.buf, rcv.count, rcv.disp, err);
        if (!(rc = dd_agree(comm, rc, err))) {
            side_copy(&rcv, (char *)dst, es, 0, rank, threads);
            self_job j = {&snd, &rcv, trans ? tc : tr, trans ? tr : tc, fr, fc, src, dst, es};
            if (snd.self)
                rd_parallel(threads, snd.C.first[j.sc + 1] - snd.C.first[j.sc], self_part, &j);
        }
    }
    side_free(&snd);
    side_free(&rcv);
    return rc;
}
