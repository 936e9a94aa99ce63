/* dd_sysmem.h — the host memory a job may use: physical memory, or the
 * cgroup limit a batch system set when that is smaller; 0 if unknown.
 * (On hosts whose MemTotal grows as memory is touched this is a floor, so
 * only the CPU backend, which holds every block on the host, refuses by it.) */
#ifndef DD_SYSMEM_H
#define DD_SYSMEM_H

#include <stdint.h>

uint64_t dd_host_memory_bytes(void);

#endif
