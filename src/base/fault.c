/* fault.c — faults that tests inject on purpose (dd_fault.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_fault.h"
#include "dd_knobs.h"

int dd_fault(const char *point)
{
    const char *spec = dd_knob_str(DDK_FAULT);
    if (!spec)
        return 0;
    /* the world rank, kept for points reached after MPI_Finalize (the
     * record is written then), when MPI may no longer be asked */
    static int known = 0;
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &known);
    int rank = known;
    size_t n = strlen(point);
    for (const char *p = spec; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        if (strncmp(p, point, n) || p[n] != ':')
            continue;
        const char *r = p + n + 1;
        if (*r == '*' || strtol(r, NULL, 10) == rank)
            return 1;
    }
    return 0;
}
