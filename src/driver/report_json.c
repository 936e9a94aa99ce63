/* report_json.c — the JSON record (report.h, docs/json-record.md): one
 * line per run, appended with one write(2). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dd_fault.h"
#include "dd_json.h"
#include "report.h"

static void json_setup_parts(FILE *f, const dd_record *r)
{
    if (!r->have[PH_SETUP] || r->setup_at[0] <= 0)
        return;
    fputs(",\"setup_parts\":{", f);
    for (int i = 0; i < SP_COUNT; i++) {
        fprintf(f, "%s\"%s\":", i ? "," : "", dd_setup_part_names[i]);
        dd_json_num(f, report_setup_part(r, i));
    }
    fputc('}', f);
}

/* a separated list as a JSON array of strings */
static void json_list(FILE *f, const char *s, char sep)
{
    fputc('[', f);
    for (int first = 1; s && *s; first = 0) {
        const char *e = strchr(s, sep);
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char item[256];
        if (len >= sizeof item)
            len = sizeof item - 1;
        memcpy(item, s, len);
        item[len] = '\0';
        if (!first)
            fputc(',', f);
        dd_json_str(f, item);
        s = e ? e + 1 : s + len;
    }
    fputc(']', f);
}

/* The problem's keys: input, type, and GEMM's expression and layout. */
static void json_problem(FILE *f, const dd_record *r)
{
    dd_json_kv_str(f, "input", r->input);
    dd_json_kv_str(f, "dtype", dd_dtype_name(r->type));
    dd_json_kv_str(f, "transa", r->transa == 'T' ? "T" : r->transa == 'C' ? "C" : "N");
    dd_json_kv_str(f, "transb", r->transb == 'T' ? "T" : r->transb == 'C' ? "C" : "N");
    dd_json_kv_num(f, "alpha", r->alpha);
    dd_json_kv_num(f, "alpha_im", r->alpha_im);
    dd_json_kv_num(f, "beta", r->beta);
    dd_json_kv_num(f, "beta_im", r->beta_im);
    dd_json_kv_str(f, "order", r->order ? r->order : "row");
}

/* "check": the residual, threshold and verdict, or null (not checked). */
static void json_check(FILE *f, const dd_record *r)
{
    fputs(",\"check\":", f);
    if (r->checked) {
        fputs("{\"residual\":", f);
        dd_json_num(f, r->chk.residual);
        fprintf(f, ",\"threshold\":%g,\"passed\":%s", DD_CHECK_THRESHOLD,
                r->chk.passed ? "true" : "false");
        dd_json_kv_str(f, "not_meaningful", r->chk.why_not);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
}

/* "panel_seconds": each panel's local multiply over ranks, or null. */
static void json_panels(FILE *f, const dd_record *r)
{
    fputs(",\"panel_seconds\":", f);
    if (r->npanel <= 0) {
        fputs("null", f);
        return;
    }
    const double *v[2] = {r->panel_min, r->panel_max};
    for (int m = 0; m < 2; m++) {
        fputs(m ? "],\"max\":[" : "{\"min\":[", f);
        for (int64_t i = 0; i < r->npanel; i++) {
            if (i)
                fputc(',', f);
            dd_json_num(f, v[m][i]);
        }
    }
    fputs("]}", f);
}

/* The record's line, written to f. */
static void json_record(FILE *f, const dd_record *r)
{
    char ts[32];
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    const char *job = getenv("SLURM_JOB_ID");
    fputs("{\"tool\":\"dgemm-dist\",\"version\":", f);
    dd_json_str(f, DGEMM_DIST_VERSION_STRING);
    dd_json_kv_str(f, "timestamp", ts);
    dd_json_kv_str(f, "command", r->cmdline);
    fputs(",\"hosts\":", f);
    json_list(f, r->hosts, ',');
    dd_json_kv_str(f, "slurm_job_id", job);
    fprintf(f, ",\"ranks\":%d,\"grid\":[%d,%d],\"backend\":", r->ranks, r->P, r->Q);
    dd_json_str(f, r->backend);
    fprintf(f, ",\"gpus\":%d,\"devices\":", r->gpus);
    json_list(f, r->devices, '\n');
    dd_json_kv_str(f, "comm", r->comm);
    dd_json_kv_str(f, "comm_detail", r->comm_detail);
    dd_json_kv_str(f, "kernel", r->kernel);
    dd_json_kv_str(f, "accuracy", r->accuracy);
    dd_json_kv_str(f, "accuracy_choice", r->accuracy_why);
    dd_json_kv_str(f, "kernel_note", r->kernel_note);
    dd_json_kv_str(f, "io", r->io);
    json_problem(f, r);
    fprintf(f,
            ",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"panel\":%lld,\"lookahead\":%d,\"repeat\":%d,"
            "\"warmup\":%d,\"phases\":{",
            (long long)r->M, (long long)r->N, (long long)r->K, (long long)r->nb, r->lookahead,
            r->nrep, r->warmup);
    for (int i = 0, first = 1; i < PH_COUNT; i++) {
        if (!r->have[i])
            continue;
        fprintf(f, "%s\"%s\":{\"min\":", first ? "" : ",", report_phase_name(r, i));
        dd_json_num(f, r->ph[i].min);
        dd_json_kv_num(f, "avg", r->ph[i].avg);
        dd_json_kv_num(f, "max", r->ph[i].max);
        fputc('}', f);
        first = 0;
    }
    fputc('}', f);
    json_setup_parts(f, r);
    fputs(",\"multiply_times\":[", f);
    for (int i = 0; i < r->nrep; i++) {
        if (i)
            fputc(',', f);
        dd_json_num(f, r->mult_times[i]);
    }
    fputc(']', f);
    dd_json_kv_num(f, "time_min", r->tmin);
    dd_json_kv_num(f, "time_median", r->tmed);
    dd_json_kv_num(f, "tflops", r->tflops);
    dd_json_kv_num(f, "tflops_per_gpu", r->tflops / r->ranks);
    dd_json_kv_num(f, "exposed_comm_fraction", r->exposed_fraction);
    json_panels(f, r);
    dd_json_kv_num(f, "host_to_host", r->host_to_host > 0 ? r->host_to_host : NAN); /* NaN: null */
    if (r->pipeline_bands) {
        fprintf(f, ",\"pipeline\":{\"bands\":%lld", (long long)r->pipeline_bands);
        dd_json_kv_num(f, "loop_seconds", r->pipeline_wall);
        fprintf(f, ",\"slots\":\"%s\"", r->pipeline_slots ? r->pipeline_slots : "in place");
        fprintf(f, ",\"band_bytes\":%llu", (unsigned long long)r->pipeline_band_bytes);
        dd_json_kv_num(f, "resident_seconds", r->pipeline_resident);
        dd_json_kv_num(f, "slots_seconds", r->pipeline_slots_alloc);
        fputs(",\"hidden\":{\"read\":", f);
        dd_json_num(f, r->hidden[PH_READ].max);
        dd_json_kv_num(f, "write", r->hidden[PH_WRITE].max);
        fputs("}}", f);
    } else {
        fputs(",\"pipeline\":null", f);
    }
    dd_json_kv_num(f, "multiply_all_seconds", r->multiply_all);
    dd_json_kv_num(f, "wall_seconds", r->wall);
    dd_json_kv_num(f, "unaccounted_seconds", report_unaccounted(r));
    dd_json_kv_str(f, "output", r->output);
    json_check(f, r);
    report_telemetry_json(f, r);
    fprintf(f, ",\"model\":%s", r->model_json ? r->model_json : "null");
    fputs(",\"versions\":{\"mpi\":", f);
    dd_json_str(f, r->v_mpi);
    dd_json_kv_str(f, "hdf5", r->v_hdf5);
    dd_json_kv_str(f, "blas", r->v_blas);
    if (r->gpus)
        dd_json_kv_str(f, "cuda", r->v_engine);
    if (r->comm_detail && *r->comm_detail)
        dd_json_kv_str(f, "comm", r->comm_detail);
    fprintf(f, "},\"status\":\"%s\"}\n", r->checked && !r->chk.passed ? "failed" : "ok");
}

/* The line is made in memory and appended with one write(2), so records of
 * runs appending to one file at once never interleave.  A write cut short
 * (a full disk) is taken back where nothing was appended after it, so the
 * file keeps whole lines.  DD_FAULT=json-short: tests get half a line
 * written, then "no space". */
int report_json(const char *path, const dd_record *r, dd_err *err)
{
    char *line = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&line, &len);
    if (!mem)
        return dd_fail(err, DD_ENOMEM, "out of memory making the JSON record");
    json_record(mem, r);
    if (fclose(mem) != 0 || !line) {
        free(line);
        return dd_fail(err, DD_ENOMEM, "out of memory making the JSON record");
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        free(line);
        return dd_fail(err, DD_EIO, "cannot append the JSON record to %s: %s", path, strerror(e));
    }
    int fault = dd_fault("json-short");
    size_t want = fault ? len / 2 : len, done = 0;
    int e = 0;
    while (done < want) {
        ssize_t k = write(fd, line + done, want - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            e = k < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)k;
    }
    if (fault && !e)
        e = ENOSPC;
    struct stat st;
    off_t end = lseek(fd, 0, SEEK_CUR); /* O_APPEND: where this write ended */
    if (e && done > 0 && end >= (off_t)done && fstat(fd, &st) == 0 && st.st_size == end &&
        ftruncate(fd, end - (off_t)done) == 0)
        done = 0;
    if (close(fd) != 0 && !e)
        e = errno;
    free(line);
    if (e)
        return dd_fail(err, DD_EIO, "the JSON record could not be appended to %s: %s%s%s", path,
                       strerror(e), e == EFBIG ? " (the file-size limit, ulimit -f)" : "",
                       done > 0 ? "; a partial line was left at its end" : "");
    return DD_OK;
}
