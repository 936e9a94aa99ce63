/* run_head.c — the GPU's head start (run.h's run_head_start and
 * run_head_end), apart from the run: before MPI_Init, main() has the GPU's
 * context made on a thread of its own (dd_prestart_device), so that its
 * ~0.12 s on an H200 runs beside MPI's start-up instead of after it
 * (docs/results/h200-2026-12-03-call-f).  The command line is read
 * loosely, before cli_parse: a wrong guess costs a context made in vain
 * (destroyed again: dgemm_dist.h) or a run without the head start. */
#include <string.h>

#include "dd_fault.h"
#include "run.h"

/* Whether the command line is a run that opens the GPU (run.h); a wrong
 * guess costs a context made in vain. */
static int opens_gpu(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "gen"))
        return 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "--help-env") ||
            !strcmp(a, "--version") || !strcmp(a, "--dry-run") || !strcmp(a, "--backend=cpu") ||
            (!strcmp(a, "--backend") && i + 1 < argc && !strcmp(argv[i + 1], "cpu")))
            return 0;
    }
    return 1;
}

void run_head_start(int argc, char **argv)
{
    if (opens_gpu(argc, argv) && !dd_fault("no-prestart"))
        dd_prestart_device();
}

void run_head_end(void)
{
    dd_release_devices();
}
