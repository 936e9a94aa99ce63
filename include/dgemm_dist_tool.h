/* dgemm_dist_tool.h — the dgemm-dist program's instrumentation of a plan:
 * NOT A STABLE INTERFACE.
 *
 * What the program's report and JSON record show beyond the plan itself:
 * why a backend was chosen, the device and toolkit versions, the memory
 * split, what the performance model chose and predicted, the allocation's
 * phases, a host-to-host pass, each panel's time, and the GPU's clock,
 * power and energy.  These calls, structs and fields change whenever the
 * report does, in any release, without a deprecation: an application
 * should use dgemm_dist.h and dgemm_dist_plan.h only.
 *
 * DGEMM_DIST_TOOL_VERSION names this interface's layout.  The calls that
 * fill a struct of this header take it as their `version` argument (pass
 * DGEMM_DIST_TOOL_VERSION) and refuse any other with DD_ERROR_UNSUPPORTED,
 * so a program built against another layout than the library's gets an
 * error, never a struct filled in another layout.
 *
 * Every call here is local (no other rank takes part), but dd_plan_host_pass,
 * which is collective and agreed like dd_plan_multiply. */
#ifndef DGEMM_DIST_TOOL_H
#define DGEMM_DIST_TOOL_H

#include "dgemm_dist_plan.h"
#include "dgemm_dist_telemetry.h" /* dd_telemetry, the DD_TELE_* reason bits */

#ifdef __cplusplus
extern "C" {
#endif

#define DGEMM_DIST_TOOL_VERSION 1

/* The report's account of a plan, beyond dd_plan_info. */
typedef struct {
    const char *backend_why;    /* why that backend (auto's choice) */
    const char *comm_detail;    /* the comm backend's transport, where it says ("" otherwise) */
    const char *device;         /* "NVIDIA H200", "CPU (OpenBLAS ..., 2 threads)" */
    const char *versions;       /* "CUDA 13.0, cuBLAS 13.1", ... */
    int device_index;           /* GPU ordinal, -1 without one */
    int host_memory;            /* 1: work memory is host memory (the CPU backend) */
    size_t slot_bytes;          /* of dd_plan_info.work_bytes, the panel slots */
    size_t host_bytes;          /* host memory of this rank: blocks on the CPU, stream buffers */
    const char *tune_line;      /* what the model chose and why, or why no model */
    const char *model_line;     /* the model's prediction of the settings in use; NULL: none */
    const char *model_json;     /* the same as a JSON object; NULL: none */
    double allocate_seconds[3]; /* dd_plan_allocate on this rank: comm, memory, warm */
} dd_plan_tool_info;

/* Local; the strings live as long as the plan. */
dd_status dd_plan_get_tool_info(const dd_plan *plan, int version, dd_plan_tool_info *info);

/* The local multiply kernel's note on this rank's multiplies so far, "" when
 * it has none (ozaki2: how many multiplies fell back to native FP64 and why;
 * ozaki2-auto: how many were emulated and with how many moduli, min/max/last).
 * Local; synchronises the device.  The string lives until the next call or
 * the plan's end. */
const char *dd_plan_kernel_note(dd_plan *plan);

/* What a caller holding its data in host memory waits for: op(A) and op(B)
 * streamed up from host copies panel by panel behind the multiply, C down
 * after it (the plan's host_pass; GPU backends: on the CPU backend there is
 * no such pass and this returns DD_ERROR_UNSUPPORTED).  The blocks are
 * zeroed before, so what the pass misses, the check finds.  Collective;
 * times may be NULL. */
dd_status dd_plan_host_pass(dd_plan *plan, dd_plan_times *times);

/* One band of the multiply: rows [r0, r0 + rows) of this rank's block of
 * C become alpha·op(A)·op(B) (+ beta·C_in, when the plan reads C) for those
 * rows, over the whole K, from what the blocks of op(A) (the same rows) and
 * op(B) hold now.  Each band is final when the call returns, so a caller
 * can store it (dd_plan_read) while the next band multiplies, and fill the
 * next band of op(A) (dd_plan_write) ahead of its use: dgemm-dist's
 * file-to-file pipeline (src/driver/run_pipe.c).  Bands that cover the
 * block once, in any order, give the result dd_plan_multiply gives;
 * dd_plan_check checks it after the last.  The plan must be prepared with
 * alpha not 0 and made with passes = 1.  Collective: every rank makes the
 * same number of calls, each with its own r0 and rows (0 is allowed);
 * times may be NULL. */
dd_status dd_plan_multiply_rows(dd_plan *plan, int64_t r0, int64_t rows, dd_plan_times *times);

/* The band pipeline's moves through pinned staging (the context's two
 * upload and two download slots, DD_RING_MIB each), for the GPU backend
 * where dd_plan_write and dd_plan_read copy pageable memory on the calling
 * thread.  Each is local; a failure drains every copy in flight first.
 *
 * dd_plan_put_rows: rows [r0, r0 + rows) of op(A)'s block from host (row
 * pitch ld, the block's columns) packed into the upload slots by the
 * context's copy threads, piece by piece, and queued up; it returns once
 * host may be reused, the last pieces still on the way.  At most two puts
 * ahead of the multiply: each dd_plan_multiply_rows waits (on the GPU,
 * not the host) for the oldest put it has not waited for yet, so the put
 * of band b+1 made before band b's multiply goes up during it.
 *
 * dd_plan_take_rows: rows [r0, r0 + rows) of C's block queued down behind
 * the multiplies so far (on their own queue, so the next band's multiply
 * runs meanwhile); dd_plan_take_rows_end waits for them and unpacks them
 * into host (row pitch ld) with the copy threads.  One take at a time.
 *
 * dd_plan_rows_drain: waits for every put and take in flight and forgets
 * them (a take not ended is dropped); for the caller's error paths. */
dd_status dd_plan_put_rows(dd_plan *plan, int64_t r0, int64_t rows, const void *host, int64_t ld);
dd_status dd_plan_take_rows(dd_plan *plan, int64_t r0, int64_t rows);
dd_status dd_plan_take_rows_end(dd_plan *plan, void *host, int64_t ld);
dd_status dd_plan_rows_drain(dd_plan *plan);

/* The same moves without the staging slots, where the host rows lie in
 * memory of dd_plan_host_alloc (pinned on a GPU backend, plain on the
 * CPU): the copy engines move them straight between that memory and work
 * memory and no host thread copies them.
 *
 * dd_plan_host_alloc: `bytes` (> 0) of such memory into *host, kept by the
 * plan (at most DD_PLAN_HOST_BUFS at once) until dd_plan_host_release or
 * dd_plan_destroy, which first waits for every copy in flight; the plan
 * must be allocated.  Local, and the one call that may run on another
 * thread while the plan's other calls run (pinning is slow: a caller
 * allocates while it reads); it sets no message: DD_ERROR_USAGE for a
 * bad argument or a full table, else the allocation's status.
 *
 * dd_plan_put_rows with host inside such memory queues the rows' upload
 * and returns at once: host must stay unchanged until the
 * dd_plan_multiply_rows that uses the band returns (it waits for the
 * upload first).  dd_plan_take_rows_to queues rows [r0, r0 + rows) of C's
 * block straight down into host (row pitch ld, inside such memory) behind
 * the multiplies so far; dd_plan_take_rows_end with the same host and ld
 * then waits for it, and host may be read after it returns. */
#define DD_PLAN_HOST_BUFS 8
dd_status dd_plan_host_alloc(dd_plan *plan, size_t bytes, void **host);
void dd_plan_host_release(dd_plan *plan, void *host);
dd_status dd_plan_take_rows_to(dd_plan *plan, int64_t r0, int64_t rows, void *host, int64_t ld);

/* Where work memory is host memory (the CPU backend), the address of block
 * `which` of an allocated plan (row-major, dd_plan_info's rows × cols, its
 * row pitch cols), so a caller can fill and drain bands in place instead of
 * through dd_plan_write and dd_plan_read; NULL on a GPU backend, before
 * dd_plan_allocate, or for an operand that is none of A, B, C.  Local. */
void *dd_plan_host_block(const dd_plan *plan, dd_operand which);

/* This rank's time in each panel's local multiply during the last
 * dd_plan_multiply or dd_plan_host_pass, in panel order (K's panels as the
 * multiply takes them): the number of panels into *count, the first n times
 * (seconds) into seconds (NULL with n = 0 asks for the count alone).  0 for
 * a panel not multiplied: before the first multiply, with alpha = 0, or
 * where this rank's block of C is empty.  Local: ranks may call it or not. */
dd_status dd_plan_panel_seconds(dd_plan *plan, double *seconds, int64_t n, int64_t *count);

/* The GPU's clock, power and energy between start and stop
 * (dgemm_dist_telemetry.h); *t says "not available" on the CPU backend or
 * without NVML.  Local. */
dd_status dd_plan_telemetry_start(dd_plan *plan);
dd_status dd_plan_telemetry_stop(dd_plan *plan, int version, dd_telemetry *t);

/* libdgemm-dist-scalapack's way to PBLAS's first blocks (DTYPE_ 2's IMB_,
 * INB_), which dd_matrix_desc does not hold: until the next call, dd_pgemm
 * and dd_psgemm on the calling thread take the descriptor at desc[k] (that
 * address) as having a first block of first[k][0] rows and first[k][1]
 * columns, then blocks of its mb x nb; desc NULL forgets them.  The caller
 * agrees the sizes over the grid (the library's comparison of the
 * descriptors across ranks does not see them), and the call's check
 * (info->check) does not know them. */
void dd_internal_first_blocks(const dd_matrix_desc *const desc[3], const int64_t first[3][2]);

#ifdef __cplusplus
}
#endif

#endif
