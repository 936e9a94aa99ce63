/* api_pipe.c — one rank's host operands moved while the GPU multiplies.
 *
 * The path of api_gemm.c moves one operand after the other: A and B up,
 * then the multiply, then C down, each waiting for the one before.  With a
 * GPU and the caller's pageable arrays the copies through pinned memory
 * take as long as the multiply itself.  Here, on one rank (nothing moves
 * between ranks), without the check (it reads the work blocks of the 2-D
 * block layout), they run at once:
 *
 *   C' = A'·B' is cut in bands of columns.  A' goes up whole once, in
 *   pieces, during the first band (each piece multiplied as soon as it is
 *   up); every band brings its columns of B' (and of beta·C_in) up and takes
 *   its columns of C' down.  While band b multiplies, band b+2 is packed and
 *   uploaded and band b-1 is downloaded and unpacked.
 *
 *   Split schedule (beta = 0, two bands or more, the whole C' fits in work
 *   memory): the first band cannot finish before all of A' is up, and the
 *   host packs A' three times slower than the GPU multiplies one band of it,
 *   so the GPU would wait.  Instead the first half of K (K1) is done for
 *   every column at once: pieces of A' and of B''s rows go up and each pair
 *   is multiplied into the whole C' as soon as it is up, while the pieces
 *   of A' past K1 go up between them.  Then the bands run as above over the
 *   rest of K, each adding into C''s columns and going down once its K is
 *   done.  The host packs each element once in both schedules; the split
 *   one keeps the GPU busy from the first piece on.  In both the bands run
 *   three deep: band b+2 is packed and queued before band b is unpacked,
 *   so that the host, the busier of the two, does not wait for one band's
 *   upload, multiply and download in a row.
 *
 *   The copies between the caller's arrays and pinned memory (two upload
 *   slots, three download slots: slot_bytes() each, kept by the context) are
 *   the host's, over the context's copy threads; the uploads, the
 *   multiplies and the downloads are three engine queues ordered by marks
 *   (engine.h: mark, after, reached), each copy direction on its own copy
 *   engine.  Host memory is read and written once per element.
 *
 *   The arrays stay where the caller has them: when C's columns are
 *   contiguous (ScaLAPACK's column-major arrays), the product is computed as
 *   its transpose, Cᵀ = op(B)ᵀ·op(A)ᵀ, all three row-major as they lie; so
 *   C' always has contiguous rows and nothing is turned on the way down.  An
 *   operand whose columns are contiguous in its primed form goes up turned
 *   (upload_t_async).
 *
 *   alpha and beta are applied as the host packs (alpha on op(A)'s
 *   elements, beta on C_in's, in the element type, as engine.h's scale
 *   and cscale do; op 'C''s conjugation likewise): no pass of their own.
 *   beta = 0: C is never read; alpha = 0 and K = 0 take api_gemm.c's path
 *   (nothing is multiplied).
 *
 * On a failure (an engine call, DD_FAULT=phase or multiply) nothing more is
 * queued, every queue is drained before the return, and each band of C
 * holds either the product or what the caller had there.  The copy threads
 * are joined by every copy (rd_parallel).  On the CPU engine (work memory
 * is host memory) the path is taken only for tests (DD_FAULT=host-pipe:*):
 * it costs a copy there; its uploads are then copies and its marks do
 * nothing.  DD_FAULT=no-host-pipe:* sends every call the other way
 * (bench/gpu/hostdata.sh measures both in one run). */
#include <string.h>

#include "agree.h"
#include "api_impl.h"
#include "dd_fault.h"

/* Element (r, c) at p + (r·rs + c·cs) elements, times f (complex types:
 * f[0] + i·f[1]) as it is packed, conjugated first where conj is set. */
typedef struct {
    const char *p;
    int64_t rs, cs;
    int who;     /* the caller's operand: 0 A, 1 B, 2 C (DD_API_TIMING's step) */
    double f[2]; /* alpha on op(A)'s elements, beta on C_in's, 1 elsewhere */
    int conj;    /* op 'C' (complex types): the conjugate transpose */
} view;

/* Bands in flight: band b + 2 is queued before band b is unpacked, so the
 * GPU does not wait for the host's unpack. */
#define PIPE_DEPTH 3

typedef struct {
    gemm_call *g;
    dd_engine *e;
    size_t es;
    int64_t M, N, K; /* C' (M×N) = A' (M×K) · B' (K×N) */
    view a, b, c;    /* c.cs == 1 */
    int cin;         /* beta ≠ 0: beta·C_in goes up with each band */
    int64_t bw;      /* band width (columns of C'), the work bands' leading dimension */
    int64_t aw;      /* columns of A' per piece */
    int64_t kw;      /* K per multiply of the later bands */
    int64_t nbands;
    int split;             /* the split schedule: K1 for every column first */
    int64_t K1, kp;        /* its first part of K, in pieces of kp */
    int64_t ldc;           /* C's work ld: bw (bands), N (split: C' whole) */
    char *A, *B[PIPE_DEPTH], *C[PIPE_DEPTH]; /* work: A' whole (ld K), bands of B', C' (ld bw) */
    char *B1, *Cw;         /* split: B''s first K1 rows (ld N), C' whole (ld N) */
    char *up[2], *down[PIPE_DEPTH]; /* pinned slots: two up, PIPE_DEPTH down */
    int64_t pieces;        /* pieces put up so far: piece i in slot i % 2 */
} pipe_t;

enum { MK_UP = 0, MK_COMP = 2, MK_DOWN = 3 }; /* the engine's marks: 2 + 1 + PIPE_DEPTH */

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The slots' bytes: room for bands of PIPE_BAND_COLS columns (the band is
 * the width of each multiply: 16384 x 512 bands ran the GPU below its rate,
 * docs/results/h200-2026-12-02-call-a), at most PIPE_SLOT_MAX, at least
 * DD_RING_MIB; with DD_FAULT=pipe-narrow a few lines (bands and pieces of
 * 1 to 7 columns: the odd edges of the bands). */
#define PIPE_BAND_COLS 2048
#define PIPE_SLOT_MAX ((size_t)256 << 20)
static size_t slot_bytes(int64_t lines, size_t es)
{
    if (dd_fault("pipe-narrow"))
        return (size_t)(7 * lines) * es;
    size_t ring = api_ring_bytes(), want = PIPE_SLOT_MAX;
    if ((size_t)lines < PIPE_SLOT_MAX / (es * PIPE_BAND_COLS)) /* no product overflows */
        want = (size_t)lines * es * PIPE_BAND_COLS;
    return want > ring ? want : ring;
}

typedef struct {
    char *dst;
    const char *src;
    size_t dstride, sstride;
    int64_t len;
    double f, fi;
    dd_dtype t;
    int conj;
} scaled_job;

/* One complex run: d = w·(fr + i·fi), w = conj(s) where conj is set, in
 * the element type T (engine.h's cscale: where fi = 0 each part is scaled
 * alone). */
#define CX_RUN(T, d, s, len, fr, fi, conj)                                                         \
    for (int64_t k = 0; k < (len); k++) {                                                          \
        T wr = (s)[2 * k], wi = (conj) ? -(s)[2 * k + 1] : (s)[2 * k + 1];                         \
        (d)[2 * k] = (fi) == 0 ? wr * (fr) : wr * (fr)-wi * (fi);                                  \
        (d)[2 * k + 1] = (fi) == 0 ? wi * (fr) : wr * (fi) + wi * (fr);                            \
    }

/* Runs [lo, hi) of j, each element times f in the element type. */
static void scaled_runs(void *arg, int64_t lo, int64_t hi)
{
    const scaled_job *j = arg;
    for (int64_t i = lo; i < hi; i++) {
        if (j->t == DD_C128) {
            double *d = (double *)(void *)(j->dst + (size_t)i * j->dstride);
            const double *s = (const double *)(const void *)(j->src + (size_t)i * j->sstride);
            CX_RUN(double, d, s, j->len, j->f, j->fi, j->conj)
        } else if (j->t == DD_C64) {
            float *d = (float *)(void *)(j->dst + (size_t)i * j->dstride), fr = (float)j->f,
                  fi = (float)j->fi;
            const float *s = (const float *)(const void *)(j->src + (size_t)i * j->sstride);
            CX_RUN(float, d, s, j->len, fr, fi, j->conj)
        } else if (j->t == DD_F64) {
            double *d = (double *)(void *)(j->dst + (size_t)i * j->dstride);
            const double *s = (const double *)(const void *)(j->src + (size_t)i * j->sstride);
            for (int64_t k = 0; k < j->len; k++)
                d[k] = s[k] * j->f;
        } else {
            float *d = (float *)(void *)(j->dst + (size_t)i * j->dstride), f = (float)j->f;
            const float *s = (const float *)(const void *)(j->src + (size_t)i * j->sstride);
            for (int64_t k = 0; k < j->len; k++)
                d[k] = s[k] * f;
        }
    }
}

/* n runs of len elements, dst + i·dstride ← f · (src + i·sstride), f and
 * the conjugation those of view v (none: C's way down). */
static void pack_runs(const pipe_t *pp, void *dst, size_t dstride, const void *src, size_t sstride,
                      int64_t len, int64_t n, const view *v)
{
    int threads = api_move_threads(pp->g->ctx, n, len);
    if (!v || (v->f[0] == 1 && v->f[1] == 0 && !v->conj)) {
        api_copy_runs(dst, dstride, src, sstride, (size_t)len * pp->es, n, threads);
        return;
    }
    scaled_job j = {dst, src, dstride, sstride, len, v->f[0], v->f[1], pp->g->t, v->conj};
    rd_parallel(threads, n, scaled_runs, &j);
}

/* Columns [c0, c0+nc) of view v's rows [0, nr), times its factor, up into
 * work memory W (ld ldw, at its (0, 0)) through the next upload slot. */
static int put(pipe_t *pp, const view *v, int64_t nr, int64_t c0, int64_t nc, char *W, int64_t ldw,
               dd_err *err)
{
    dd_engine *e = pp->e;
    size_t es = pp->es;
    int slot = (int)(pp->pieces++ % 2);
    int rc = e->ops->reached(e, MK_UP + slot, err); /* the slot's last upload is done */
    api_tick(pp->g, API_T_MULT);
    if (rc || nr == 0 || nc == 0)
        return rc;
    if (v->cs == 1) { /* rows: runs of nc */
        pack_runs(pp, pp->up[slot], (size_t)nc * es, v->p + (size_t)c0 * es, (size_t)v->rs * es, nc,
                  nr, v);
        rc = e->ops->upload_async(e, W, (size_t)ldw * es, pp->up[slot], (size_t)nc * es,
                                  (size_t)nc * es, nr, err);
    } else { /* columns: runs of nr, turned on the way */
        pack_runs(pp, pp->up[slot], (size_t)nr * es, v->p + (size_t)(c0 * v->cs) * es,
                  (size_t)v->cs * es, nr, nc, v);
        rc = e->ops->upload_t_async(e, W, ldw, pp->up[slot], nc, nr, es, err);
    }
    api_tick(pp->g, API_T_LOAD + v->who);
    if (!rc)
        rc = e->ops->mark(e, DD_Q_UP, MK_UP + slot, err);
    /* the multiplies queued next wait for this piece (and, the queue being
     * in order, for every piece before it) */
    return rc ? rc : e->ops->after(e, DD_Q_COMPUTE, MK_UP + slot, err);
}

/* C (h columns, ld ldc) (+)= A'[:, k0..k1) · Bk, Bk's first row that of
 * k0 (ld ldb), multiplies of at most w; acc: C already holds a sum. */
static int multiply(pipe_t *pp, char *C, int64_t ldc, int64_t h, const char *Bk, int64_t ldb,
                    int64_t k0, int64_t k1, int64_t w, int acc, dd_err *err)
{
    dd_engine *e = pp->e;
    size_t es = pp->es;
    int rc = DD_OK;
    for (int64_t k = k0; k < k1 && !rc; k += w) {
        int64_t kk = min64(w, k1 - k);
        rc = e->ops->gemm(e, pp->g->t, pp->M, h, kk, pp->A + (size_t)k * es, pp->K,
                          Bk + (size_t)((k - k0) * ldb) * es, ldb, acc || k > k0, C, ldc, NULL,
                          NULL, err);
    }
    return rc;
}

/* View v from its row r0 on. */
static view rows_from(const pipe_t *pp, const view *v, int64_t r0)
{
    view w = *v;
    w.p += (size_t)(r0 * v->rs) * pp->es;
    return w;
}

/* Split schedule, its first part: K1 of K for every column of C' at once,
 * in pieces of kp (A''s columns and B''s rows), each multiplied into the
 * whole C' once it is up; between them A''s pieces past K1, spread evenly,
 * so that A' is up when the bands begin. */
static int first_part(pipe_t *pp, dd_err *err)
{
    size_t es = pp->es;
    int64_t steps = (pp->K1 + pp->kp - 1) / pp->kp;
    int64_t later = (pp->K - pp->K1 + pp->aw - 1) / pp->aw, done = 0;
    int rc = DD_OK;
    for (int64_t s = 0; s < steps && !rc; s++) {
        int64_t k0 = s * pp->kp, w = min64(pp->kp, pp->K1 - k0);
        view bk = rows_from(pp, &pp->b, k0);
        char *Bk = pp->B1 + (size_t)(k0 * pp->N) * es;
        rc = put(pp, &pp->a, pp->M, k0, w, pp->A + (size_t)k0 * es, pp->K, err);
        if (!rc)
            rc = put(pp, &bk, w, 0, pp->N, Bk, pp->N, err);
        if (!rc)
            rc = multiply(pp, pp->Cw, pp->N, pp->N, Bk, pp->N, k0, k0 + w, w, k0 > 0, err);
        for (; !rc && done < later && done * steps < (s + 1) * later; done++) {
            int64_t c0 = pp->K1 + done * pp->aw;
            rc = put(pp, &pp->a, pp->M, c0, min64(pp->aw, pp->K - c0), pp->A + (size_t)c0 * es,
                     pp->K, err);
        }
    }
    return rc;
}

/* Band b: its B' (and beta·C_in) up, A' too in the first, the multiply,
 * its C' down into download slot b % PIPE_DEPTH (queued; unpack takes it out).
 * The B' and C' bands and the download slot b % PIPE_DEPTH were last used by
 * band b - PIPE_DEPTH, whose download the host has waited for (unpack) before
 * this is queued. */
static int band(pipe_t *pp, int64_t b, dd_err *err)
{
    dd_engine *e = pp->e;
    int j = (int)(b % PIPE_DEPTH);
    int64_t n0 = b * pp->bw, h = min64(pp->bw, pp->N - n0), k1 = pp->split ? pp->K1 : 0;
    /* the band's columns of C' (split: in C' whole) and its rows of B' from k1 */
    char *C = pp->split ? pp->Cw + (size_t)n0 * pp->es : pp->C[j];
    view bk = rows_from(pp, &pp->b, k1);
    int rc = DD_OK;
    if (pp->cin)
        rc = put(pp, &pp->c, pp->M, n0, h, pp->C[j], pp->bw, err);
    if (!rc)
        rc = put(pp, &bk, pp->K - k1, n0, h, pp->B[j], pp->bw, err);
    if (b == 0 && !pp->split) /* A' piece by piece, each multiplied once it is up */
        for (int64_t k0 = 0; k0 < pp->K && !rc; k0 += pp->aw) {
            int64_t w = min64(pp->aw, pp->K - k0);
            rc = put(pp, &pp->a, pp->M, k0, w, pp->A + (size_t)k0 * pp->es, pp->K, err);
            if (!rc)
                rc = multiply(pp, C, pp->ldc, h, pp->B[j] + (size_t)(k0 * pp->bw) * pp->es, pp->bw,
                              k0, k0 + w, w, k0 > 0 || pp->cin, err);
        }
    else if (!rc)
        rc = multiply(pp, C, pp->ldc, h, pp->B[j], pp->bw, k1, pp->K, pp->kw, pp->split || pp->cin,
                      err);
    if (!rc && b == pp->nbands / 2 && dd_fault("multiply"))
        rc = dd_fail(err, DD_EFAIL, "injected fault in the multiply of band %lld", (long long)b);
    if (!rc)
        rc = e->ops->mark(e, DD_Q_COMPUTE, MK_COMP, err);
    if (!rc)
        rc = e->ops->after(e, DD_Q_DOWN, MK_COMP, err);
    if (!rc)
        rc = e->ops->download_side_async(e, pp->down[j], (size_t)h * pp->es, C,
                                         (size_t)pp->ldc * pp->es, (size_t)h * pp->es, pp->M, err);
    return rc ? rc : e->ops->mark(e, DD_Q_DOWN, MK_DOWN + j, err);
}

/* Band b's C' from its download slot into the caller's C. */
static int unpack(pipe_t *pp, int64_t b, dd_err *err)
{
    int j = (int)(b % PIPE_DEPTH);
    int64_t n0 = b * pp->bw, h = min64(pp->bw, pp->N - n0);
    int rc = pp->e->ops->reached(pp->e, MK_DOWN + j, err);
    api_tick(pp->g, API_T_MULT);
    if (!rc)
        pack_runs(pp, (char *)pp->c.p + (size_t)n0 * pp->es, (size_t)pp->c.rs * pp->es, pp->down[j],
                  (size_t)h * pp->es, h, pp->M, NULL);
    api_tick(pp->g, API_T_STORE);
    return rc;
}

/* The caller's operands as views of C' = A'·B' (transposed when C's
 * columns are contiguous); 0 when one is not a view with contiguous rows
 * or columns. */
static int views(const gemm_call *g, pipe_t *pp)
{
    view a, b, c;
    if (!api_local_view(g, &g->a, &a.p, &a.rs, &a.cs) ||
        !api_local_view(g, &g->b, &b.p, &b.rs, &b.cs) ||
        !api_local_view(g, &g->c, &c.p, &c.rs, &c.cs))
        return 0;
    a.who = 0, b.who = 1, c.who = 2;
    a.f[0] = g->alpha, a.f[1] = g->alpha_im, a.conj = g->ta == 'C';
    b.f[0] = 1, b.f[1] = 0, b.conj = g->tb == 'C';
    c.f[0] = g->beta, c.f[1] = g->beta_im, c.conj = 0;
    if (c.cs == 1) {
        pp->M = g->M, pp->N = g->N;
        pp->a = a, pp->b = b, pp->c = c;
    } else { /* Cᵀ = op(B)ᵀ·op(A)ᵀ: each view's strides swapped, alpha on op(A)ᵀ */
        pp->M = g->N, pp->N = g->M;
        pp->a = (view){b.p, b.cs, b.rs, 1, {1, 0}, b.conj};
        pp->b = (view){a.p, a.cs, a.rs, 0, {a.f[0], a.f[1]}, a.conj};
        pp->c = (view){c.p, c.cs, c.rs, 2, {c.f[0], c.f[1]}, 0};
    }
    pp->K = g->K;
    return pp->c.cs == 1;
}

int api_pipe_fits(const gemm_call *g)
{
    const dd_context *ctx = g->ctx;
    pipe_t pp;
    if (ctx->size != 1 || g->device || g->check || api_alpha0(g) || g->K == 0 || g->M == 0 ||
        g->N == 0 || (ctx->eng.ops->work_is_host && !dd_fault("host-pipe")) ||
        dd_fault("no-host-pipe") || !views(g, &pp))
        return 0;
    /* a band's column of B' or C', and a piece's column of A', fit in a slot */
    int64_t lines = pp.K > pp.M ? pp.K : pp.M;
    size_t es = dd_elsize(g->t);
    return (size_t)lines <= slot_bytes(lines, es) / es;
}

/* Widths from the slot: a multiple of 64 columns where more than 64 fit
 * (aligned work bands), at least 1, at most n. */
static int64_t fit_width(size_t slot, int64_t lines, size_t es, int64_t n)
{
    int64_t w = (int64_t)(slot / ((size_t)lines * es));
    w = w > 64 ? w / 64 * 64 : w < 1 ? 1 : w;
    return w < n ? w : n;
}

/* Whether the split schedule is taken (1), with its K1 and kp set: beta = 0
 * (beta·C_in goes up with each band), two bands or more, K more than one
 * piece, a row of B' fits a slot, and A', C', B''s first K1 rows and three
 * bands of the rest within half of the work memory free at open (where
 * the engine knows it; the context keeps the buffers).  K1: half of K in
 * whole pieces.  DD_FAULT=no-pipe-split: never (tests, benches). */
static int split_plan(pipe_t *pp, size_t slot)
{
    size_t es = pp->es, free_b = pp->e->info.mem_free;
    pp->K1 = 0;
    if (pp->cin || pp->nbands < 2 || (size_t)pp->N > slot / es || dd_fault("no-pipe-split"))
        return 0;
    pp->kp = fit_width(slot, pp->M > pp->N ? pp->M : pp->N, es, pp->K);
    int64_t k1 = pp->K / 2 / pp->kp * pp->kp;
    if (k1 == 0 || k1 >= pp->K)
        return 0;
    double need =
        (double)es * ((double)pp->M * (double)pp->K + (double)pp->M * (double)pp->N +
                      (double)k1 * (double)pp->N + 3.0 * (double)(pp->K - k1) * (double)pp->bw);
    if (free_b && need > 0.5 * (double)free_b)
        return 0;
    pp->K1 = k1;
    return 1;
}

int api_pipe_gemm(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    pipe_t pp;
    memset(&pp, 0, sizeof pp);
    views(g, &pp);
    pp.g = g;
    pp.e = &ctx->eng;
    pp.es = dd_elsize(g->t);
    pp.cin = !api_beta0(g);
    int64_t lines = pp.K > pp.M ? pp.K : pp.M;
    size_t slot = slot_bytes(lines, pp.es), es = pp.es;
    pp.bw = fit_width(slot, lines, es, pp.N);
    pp.aw = fit_width(slot, pp.M, es, pp.K);
    /* K in one multiply per band unless a width is asked for (api_gemm.c:
     * one rank broadcasts nothing) */
    pp.kw = ctx->panel ? ctx->panel : pp.e->info.panel ? pp.e->info.panel : pp.K;
    pp.nbands = (pp.N + pp.bw - 1) / pp.bw;
    pp.split = split_plan(&pp, slot);
    pp.ldc = pp.split ? pp.N : pp.bw;
    void *p[3] = {NULL, NULL, NULL}, *h;
    /* the second band of each 256-byte aligned, whatever the band's size */
    int64_t q = 256 / (int64_t)es, bb = ((pp.K - pp.K1) * pp.bw + q - 1) / q * q,
            cb = (pp.M * pp.bw + q - 1) / q * q, b1 = (pp.K1 * pp.N + q - 1) / q * q;
    int64_t cw = pp.split ? pp.M * pp.N : PIPE_DEPTH * cb; /* split: C' whole */
    int rc = api_dev_get(ctx, API_DEV_A, (size_t)(pp.M * pp.K) * es, &p[0], err);
    if (!rc)
        rc = api_dev_get(ctx, API_DEV_B, (size_t)(b1 + PIPE_DEPTH * bb) * es, &p[1], err);
    if (!rc)
        rc = api_dev_get(ctx, API_DEV_C, (size_t)cw * es, &p[2], err);
    for (int i = 0; i < 2 && !rc; i++)
        if (!(rc = api_host_get(ctx, API_HOST_RING + i, slot, &h, err)))
            pp.up[i] = h;
    for (int i = 0; i < PIPE_DEPTH && !rc; i++)
        if (!(rc = api_host_get(ctx, API_HOST_DOWN + i, slot, &h, err)))
            pp.down[i] = h;
    pp.A = p[0];
    pp.B1 = p[1];
    pp.Cw = p[2];
    for (int j = 0; j < PIPE_DEPTH && !rc; j++)
        pp.B[j] = (char *)p[1] + (size_t)(b1 + j * bb) * es;
    for (int j = 0; j < PIPE_DEPTH && !rc && !pp.split; j++)
        pp.C[j] = (char *)p[2] + (size_t)(j * cb) * es;
    api_tick(g, API_T_ALLOC);
    if ((rc = dd_agree(ctx->world, rc, err)))
        return rc;
    dd_engine *e = pp.e;
    e->ops->reset_timers(e); /* the multiplies' timing events, reused */
    double t0 = MPI_Wtime();
    if (dd_fault("phase"))
        rc = dd_fail(err, DD_EFAIL, "injected fault in the multiply's clock");
    if (!rc && pp.split)
        rc = first_part(&pp, err);
    for (int64_t b = 0; b < PIPE_DEPTH - 1 && b < pp.nbands && !rc; b++)
        rc = band(&pp, b, err);
    for (int64_t b = 0; b < pp.nbands && !rc; b++) {
        if (b + PIPE_DEPTH - 1 < pp.nbands) /* queued behind band b's multiply */
            rc = band(&pp, b + PIPE_DEPTH - 1, err);
        if (!rc)
            rc = unpack(&pp, b, err);
    }
    /* every queue drained, also after a failure: no copy lands later */
    dd_err later = {{0}};
    int rc2 = e->ops->wait_copies(e, rc ? &later : err);
    api_tick(g, API_T_MULT);
    g->sec = g->gemm = MPI_Wtime() - t0;
    return dd_agree(ctx->world, rc ? rc : rc2, err);
}
