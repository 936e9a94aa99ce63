/* model_25d.c — a 2.5-D variant in the model (model.h): c layers of a
 * P×Q grid, each layer SUMMA over K/c, A and B replicated to every layer
 * first and the c partial C blocks reduced at the end.  Not implemented in
 * the program: the projection uses it to say whether it would win. */
#include <math.h>
#include <string.h>

#include "grid.h"
#include "model.h"

/* Reduce of `bytes` over c ranks (reduce-scatter then gather, ring). */
static double reduce_time(const dd_link *l, int c, double bytes)
{
    if (c <= 1 || !l)
        return 0;
    return (c - 1) * l->alpha + 2.0 * (c - 1) / c * bytes / l->beta;
}

int model_predict_25d(const dd_model_in *in, int c, dd_model_out *o, dd_err *err)
{
    if (c < 1)
        return dd_fail(err, DD_EUSAGE, "the 2.5-D model needs c >= 1 layers");
    dd_model_in layer = *in;
    layer.K = (in->K + c - 1) / c; /* each layer's share of K */
    int rc = model_predict(&layer, o, err);
    if (rc || c == 1)
        return rc;
    /* layers outermost: layer i holds ranks [i·PQ, (i+1)·PQ); a rank's peers
     * in other layers are PQ apart, so on another node once PQ >= rpn */
    int spans = in->ranks_per_node > 0 && in->P * in->Q >= in->ranks_per_node;
    const dd_link *l = spans && in->inter ? in->inter : in->intra;
    double es = (double)dd_elsize(in->type);
    double Mp = (double)grid_block(in->M, in->P, 0).len, Nq = (double)grid_block(in->N, in->Q, 0).len;
    double Kq = (double)grid_block(in->K, in->Q, 0).len, Kp = (double)grid_block(in->K, in->P, 0).len;
    double rep = model_bcast(l, c, (Mp * Kq + Kp * Nq) * es), red = reduce_time(l, c, Mp * Nq * es);
    o->multiply += rep + red;
    o->exposed += rep + red;
    o->comm += rep + red;
    o->tflops =
        model_flops(in->type) * (double)in->M * (double)in->N * (double)in->K / o->multiply / 1e12;
    int overflow = 0; /* the full K's blocks on every layer, and one more C to reduce into */
    o->work_bytes = model_work_bytes(in->P, in->Q, 0, 0, in->M, in->N, in->K, in->nb, in->L,
                                     in->type, &o->slot_bytes, &overflow);
    o->work_bytes = dd_add(o->work_bytes, (size_t)(Mp * Nq * es), &overflow);
    if (overflow)
        return dd_fail(err, DD_EUSAGE,
                       "the sizes are too large: M=%lld N=%lld K=%lld (%s) need more than 2^64 "
                       "bytes on a rank of the %dx%dx%d grid; give smaller sizes",
                       (long long)in->M, (long long)in->N, (long long)in->K,
                       dd_dtype_name(in->type), in->P, in->Q, c);
    return DD_OK;
}
