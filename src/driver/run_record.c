/* run_record.c — what a run was, for people and programs: the dry-run
 * table, the record behind the report and the JSON line, and the
 * provenance attributes on the output (run_ctx.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_ctx.h"

static int gather_strings(run_ctx *c, const char *mine, size_t width, char sep, int dedupe,
                          char **out)
{
    char *all = c->rank == 0 ? calloc((size_t)c->size, width) : NULL;
    char *buf = calloc(1, width);
    if (buf)
        snprintf(buf, width, "%s", mine);
    MPI_Gather(buf ? buf : (char[1]){0}, buf ? (int)width : 0, MPI_CHAR, all, (int)width, MPI_CHAR,
               0, c->world);
    free(buf);
    if (c->rank != 0)
        return DD_OK;
    if (!all)
        return DD_ENOMEM;
    char *res = calloc((size_t)c->size, width + 1);
    if (!res) {
        free(all);
        return DD_ENOMEM;
    }
    for (int r = 0; r < c->size; r++) {
        const char *s = all + (size_t)r * width;
        int seen = 0;
        for (int q = 0; dedupe && q < r && !seen; q++)
            seen = !strncmp(s, all + (size_t)q * width, width);
        if (seen)
            continue;
        size_t used = strlen(res);
        if (used)
            res[used++] = sep;
        size_t len = strnlen(s, width);
        memcpy(res + used, s, len);
        res[used + len] = '\0';
    }
    free(all);
    *out = res;
    return DD_OK;
}

void run_print_dry_run(run_ctx *c)
{
    const dd_plan_info *pi = &c->pi;
    const dd_plan_tool_info *ti = &c->ti;
    struct {
        long long rows, cols, ak, bk;
        double work, slots, host;
    } mine = {(long long)pi->rows[2], (long long)pi->cols[2], (long long)pi->cols[0],
              (long long)pi->rows[1], (double)pi->work_bytes, (double)ti->slot_bytes,
              (double)ti->host_bytes},
      *all = NULL;
    if (c->rank == 0)
        all = calloc((size_t)c->size, sizeof *all);
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, c->world);
    if (c->rank != 0 || !all)
        return;
    char expr[96];
    const double alpha[2] = {c->o->alpha, c->o->alpha_im}, beta[2] = {c->o->beta, c->o->beta_im};
    report_expr(expr, sizeof expr, c->o->transa, c->o->transb, alpha, beta);
    printf("dry run: %s  %s  M=%lld N=%lld K=%lld on a %dx%d grid, panel %lld, "
           "lookahead %d, %lld panels\n",
           expr, dd_dtype_name(c->type), (long long)c->M, (long long)c->N, (long long)c->K, pi->P,
           pi->Q, (long long)pi->panel, pi->lookahead, (long long)pi->panels);
    if (c->tA || c->tB || c->tC || c->read_c)
        printf("gemm: blocks of op(A) = %s and op(B) = %s%s%s%s\n",
               c->o->transa == 'T'   ? "Aᵀ"
               : c->o->transa == 'C' ? "Aᴴ"
                                     : "A",
               c->o->transb == 'T'   ? "Bᵀ"
               : c->o->transb == 'C' ? "Bᴴ"
                                     : "B",
               c->o->col ? "; files column-major: each dataset turned as it is read and written"
               : c->o->in && (c->tA || c->tB) ? "; transposed datasets turned at load"
                                              : "",
               c->read_c ? "; C's input read" : "",
               pi->keeps_c ? ", beta·C kept for each repetition" : "");
    printf("backend %s (%s)\n", pi->backend, ti->backend_why);
    printf("%s\n", ti->tune_line);
    if (ti->model_line)
        printf("model: %s\n", ti->model_line);
    printf("%5s %7s %21s %21s %21s %12s %12s %12s\n", "rank", "(p,q)", "C block", "A block",
           "B block", "panels MiB", "total MiB", "host MiB");
    for (int r = 0; r < c->size; r++) {
        char cb[32], ab[32], bb[32];
        snprintf(cb, sizeof cb, "%lldx%lld", all[r].rows, all[r].cols);
        snprintf(ab, sizeof ab, "%lldx%lld", all[r].rows, all[r].ak);
        snprintf(bb, sizeof bb, "%lldx%lld", all[r].bk, all[r].cols);
        printf("%5d   (%d,%d) %21s %21s %21s %12.1f %12.1f %12.1f\n", r, r / pi->Q, r % pi->Q, cb,
               ab, bb, all[r].slots / 1048576.0, all[r].work / 1048576.0, all[r].host / 1048576.0);
    }
    free(all);
}

/* dst ← src, cut to fit. */
static void keep(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

void run_take_names(run_ctx *c)
{
    run_names *n = &c->names;
    dd_plan_get_info(c->plan, &c->pi);
    dd_plan_get_tool_info(c->plan, DGEMM_DIST_TOOL_VERSION, &c->ti);
    const dd_plan_info *pi = &c->pi;
    const dd_plan_tool_info *ti = &c->ti;
    keep(n->backend, sizeof n->backend, pi->backend);
    keep(n->why, sizeof n->why, ti->backend_why);
    keep(n->comm, sizeof n->comm, pi->comm);
    keep(n->comm_detail, sizeof n->comm_detail, ti->comm_detail);
    keep(n->kernel, sizeof n->kernel, pi->kernel);
    keep(n->device, sizeof n->device, ti->device);
    keep(n->versions, sizeof n->versions, ti->versions);
    keep(n->tune_line, sizeof n->tune_line, ti->tune_line);
    keep(n->model_line, sizeof n->model_line, ti->model_line);
    keep(n->model_json, sizeof n->model_json, ti->model_json);
}

void run_fill_record(run_ctx *c)
{
    const dd_run_opts *o = c->o;
    dd_record *r = &c->rec;
    r->cmdline = o->cmdline;
    r->output = o->out;
    r->generated = o->in == NULL;
    r->ranks = c->size;
    r->P = c->pi.P;
    r->Q = c->pi.Q;
    r->M = c->M;
    r->N = c->N;
    r->K = c->K;
    r->nb = c->pi.panel;
    r->lookahead = c->pi.lookahead;
    r->tune_line = c->names.tune_line[0] ? c->names.tune_line : NULL;
    r->model_line = c->ti.model_line ? c->names.model_line : NULL;
    r->model_json = c->ti.model_json ? c->names.model_json : NULL;
    r->repeat = o->repeat;
    r->warmup = o->warmup;
    r->type = c->type;
    r->transa = o->transa;
    r->transb = o->transb;
    r->alpha = o->alpha;
    r->beta = o->beta;
    r->alpha_im = o->alpha_im;
    r->beta_im = o->beta_im;
    r->order = o->col ? "col" : "row";
    r->input = c->input;
    r->backend = c->names.backend;
    r->backend_why = c->names.why;
    r->comm = c->names.comm;
    r->comm_detail = c->names.comm_detail;
    r->kernel = c->names.kernel;
    r->accuracy = o->accuracy == DD_ACC_FP64 ? "fp64" : "native";
    r->accuracy_why = c->names.accuracy_why[0] ? c->names.accuracy_why : NULL;
    r->kernel_note = c->names.kernel_note[0] ? c->names.kernel_note : NULL;
    r->io = o->in || o->out ? c->io->name : NULL;
    r->gpus = c->ti.device_index >= 0 ? c->size : 0;
    int len = 0;
    MPI_Get_library_version(c->mpi_version, &len);
    char *nl = strchr(c->mpi_version, '\n');
    if (nl)
        *nl = '\0';
    nl = strchr(c->mpi_version, ',');
    if (nl)
        *nl = '\0';
    r->v_mpi = c->mpi_version;
    r->v_hdf5 = io_library_version();
    r->v_blas = dd_blas_version();
    r->v_engine = c->names.versions;
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    gather_strings(c, host, 64, ',', 1, &r->hosts);
    gather_strings(c, c->names.device, 128, '\n', 0, &r->devices);
}

int run_output_attrs(const run_ctx *c, dd_attr *attrs, char *grid, size_t grid_len)
{
    const dd_record *r = &c->rec;
    snprintf(grid, grid_len, "%dx%d", c->pi.P, c->pi.Q);
    const dd_attr list[RUN_NATTRS] = {
        {"tool", DD_ATTR_STR, "dgemm-dist " DGEMM_DIST_VERSION_STRING, 0, 0},
        {"input", DD_ATTR_STR, c->input, 0, 0},
        {"grid", DD_ATTR_STR, grid, 0, 0},
        {"backend", DD_ATTR_STR, c->names.backend, 0, 0},
        {"device", DD_ATTR_STR, c->names.device, 0, 0},
        {"comm", DD_ATTR_STR, c->names.comm, 0, 0},
        {"kernel", DD_ATTR_STR, c->names.kernel, 0, 0},
        {"panel", DD_ATTR_I64, NULL, 0, c->pi.panel},
        {"multiply_seconds_median", DD_ATTR_F64, NULL, r->tmed, 0},
        {"tflops", DD_ATTR_F64, NULL, r->tflops, 0},
        {"read_seconds_max", DD_ATTR_F64, NULL, r->ph[PH_READ].max, 0},
        {"residual", DD_ATTR_F64, NULL, r->checked ? r->chk.residual : -1.0, 0},
        {"transa", DD_ATTR_STR, c->o->transa == 'T' ? "T" : c->o->transa == 'C' ? "C" : "N", 0, 0},
        {"transb", DD_ATTR_STR, c->o->transb == 'T' ? "T" : c->o->transb == 'C' ? "C" : "N", 0, 0},
        {"alpha", DD_ATTR_F64, NULL, c->o->alpha, 0},
        {"alpha_im", DD_ATTR_F64, NULL, c->o->alpha_im, 0},
        {"beta", DD_ATTR_F64, NULL, c->o->beta, 0},
        {"beta_im", DD_ATTR_F64, NULL, c->o->beta_im, 0},
        {"order", DD_ATTR_STR, c->o->col ? "col" : "row", 0, 0},
    };
    for (int i = 0; i < RUN_NATTRS; i++)
        attrs[i] = list[i];
    return RUN_NATTRS;
}
