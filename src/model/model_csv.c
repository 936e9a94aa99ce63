/* model_csv.c — the one reader of the model's CSV tables (model.h): the
 * build's generator of the compiled-in tables (tables/gen_tables.c) and
 * DD_MODEL_RATES (src/core/tune.c) both parse rows here, so a row means
 * the same wherever it is read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Splits the first `want` comma-separated fields of line into f (each at
 * most 63 bytes); what follows them (a source column, which may hold
 * commas) is not read.  The number of fields found, or -1 for one too
 * long. */
static int fields(const char *line, char f[][64], int want)
{
    const char *p = line;
    int n = 0;
    while (n < want) {
        size_t k = strcspn(p, ",\r\n");
        if (k >= 64)
            return -1;
        memcpy(f[n], p, k);
        f[n++][k] = '\0';
        if (p[k] != ',')
            break;
        p += k + 1;
    }
    return n;
}

static int number(const char *f, double *x)
{
    char *end;
    errno = 0;
    *x = strtod(f, &end);
    return *f && !*end && !errno ? 0 : -1;
}

/* 0 for a line that holds no row: blank, a '#' comment, or the header
 * (its first field is `header`). */
static int is_row(const char *line, const char *header)
{
    const char *p = line + strspn(line, " \t");
    size_t h = strlen(header);
    return !(*p == '\0' || *p == '\n' || *p == '\r' || *p == '#' ||
             (!strncmp(p, header, h) && p[h] == ','));
}

int model_parse_rate(const char *line, dd_rate_row *r, char *why, size_t len)
{
    if (!is_row(line, "device"))
        return 0;
    char f[8][64];
    int n = fields(line, f, 8);
    double th, v[4];
    if (n < 8) {
        snprintf(why, len, "not a rate row (device,kernel,dtype,threads,m,n,k,gflops[,source], "
                            "each field at most 63 bytes)");
        return -1;
    }
    int t = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(f[2], dd_dtype_name((dd_dtype)i)))
            t = i;
    if (!*f[0] || !*f[1] || t < 0) {
        snprintf(why, len, "device and kernel must be given, dtype f64, f32, c128 or c64");
        return -1;
    }
    if (number(f[3], &th) || th < 0 || th > 1 << 20 || th != (int)th) {
        snprintf(why, len, "threads '%s': must be a whole number >= 0", f[3]);
        return -1;
    }
    for (int i = 0; i < 4; i++)
        if (number(f[4 + i], &v[i]) || !(v[i] >= (i < 3 ? 1 : 0)) || (i == 3 && !(v[i] > 0))) {
            snprintf(why, len, "%s '%s': must be a number %s", i < 3 ? "m, n, k" : "gflops",
                     f[4 + i], i < 3 ? ">= 1" : "> 0");
            return -1;
        }
    snprintf(r->device, sizeof r->device, "%s", f[0]);
    snprintf(r->kernel, sizeof r->kernel, "%s", f[1]);
    r->type = (dd_dtype)t; /* a complex row's gflops are real flops (8 a multiply-add) */
    r->threads = (int)th;
    r->pt = (dd_rate_point){v[0], v[1], v[2], v[3]};
    return 1;
}

int model_parse_link(const char *line, dd_link_row *r, char *why, size_t len)
{
    if (!is_row(line, "name"))
        return 0;
    char f[4][64];
    int n = fields(line, f, 4);
    double a, b;
    if (n < 4 || !*f[0] || number(f[1], &a) || number(f[2], &b) || !(a >= 0) || !(b > 0) ||
        (strcmp(f[3], "ring") && strcmp(f[3], "tree"))) {
        snprintf(why, len, "not a link row (name,alpha_us >= 0,beta_gbs > 0,ring|tree[,source])");
        return -1;
    }
    snprintf(r->name, sizeof r->name, "%s", f[0]);
    r->alpha_us = a;
    r->beta_gbs = b;
    r->algo = strcmp(f[3], "tree") ? DD_BCAST_RING : DD_BCAST_TREE;
    return 1;
}

const char *model_intra_link(const char *backend, int host_memory)
{
    if (host_memory || !backend)
        return "mpi-shm";
    if (!strcmp(backend, "ce"))
        return "ce-nvlink";
    if (!strcmp(backend, "nccl")) {
        /* NCCL with peer-to-peer and shared memory both disabled goes over
         * sockets, even inside a node */
        const char *p2p = getenv("NCCL_P2P_DISABLE"), *shm = getenv("NCCL_SHM_DISABLE");
        int sockets = p2p && shm && !strcmp(p2p, "1") && !strcmp(shm, "1");
        return sockets ? "nccl-socket" : "nccl-nvlink";
    }
    return "mpi-staged";
}

const char *model_inter_link(int host_memory)
{
    return host_memory ? "mpi-tcp" : "nic-400g";
}
