/* sysmem.c — how much memory this host lets the job use (dd_sysmem.h). */
#include <stdio.h>
#include <unistd.h>

#include "dd_sysmem.h"

/* A cgroup limit in bytes, or 0 where none is set ("max") or readable. */
static uint64_t cgroup_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long v = 0;
    int ok = fscanf(f, "%llu", &v) == 1;
    fclose(f);
    return ok ? (uint64_t)v : 0;
}

uint64_t dd_host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
    /* a batch system (Slurm's cgroups) may allow less than the host has */
    const char *limits[] = {"/sys/fs/cgroup/memory.max",
                            "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        uint64_t l = cgroup_limit(limits[i]);
        if (l && (!phys || l < phys))
            phys = l;
    }
    return phys;
}
