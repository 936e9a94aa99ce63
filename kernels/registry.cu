/* registry — kernel.h's list of kernels: the ladder in the order of the
 * seed article's story, cuBLAS last.  Adding a kernel: one file
 * kernels/NN_name.cu with its launchers, one line here, one line in
 * ladder.h and in CMakeLists.txt. */
#include <string.h>

#include "kernel.h"
#include "ladder.h"

namespace
{

const kernel_desc KERNELS[] = {
    {"01_naive", "one thread per C element, threads walk down columns (uncoalesced)", dd_k01_dgemm,
     dd_k01_sgemm, 1},
    {"02_coalesced", "one thread per C element, threads walk along rows (coalesced)", dd_k02_dgemm,
     dd_k02_sgemm, 1},
    {"03_smem_tiling", "32x32 tiles of A and B staged in shared memory", dd_k03_dgemm, dd_k03_sgemm,
     1},
    {"04_register_blocking", "64x64 block tile, 4x4 thread tiles in registers", dd_k04_dgemm,
     dd_k04_sgemm, 0},
    {"05_vectorized", "128x128 tile, 8x8 thread tiles, 16-byte loads, conflict-free smem",
     dd_k05_dgemm, dd_k05_sgemm, 0},
    {"06_double_buffer", "05 with two smem buffers, next tile loaded during compute", dd_k06_dgemm,
     dd_k06_sgemm, 0},
    {"07_warptile", "warp tiles, 3-stage cp.async pipeline, BK 16 (FP32 production)", dd_k07_dgemm,
     dd_k07_sgemm, 0},
    {"08_dmma", "FP64 tensor cores: mma.sync m16n8k8, 3-stage cp.async, BK 32 (FP64 production)",
     dd_k08_dgemm, NULL, 0},
    {"cublas", "cuBLAS reference (default math: no TF32, no emulation)", dd_cublas_dgemm,
     dd_cublas_sgemm, 0},
};

} // namespace

#ifdef DD_KERNEL_VARIANTS
namespace
{
const kernel_desc VARIANTS[] = {
    {"07_warptile@bk16s4", "BK 16, 4 stages", NULL, dd_k07v_sgemm_bk16s4, 0},
    {"07_warptile@bk8s4", "BK 8, 4 stages", NULL, dd_k07v_sgemm_bk8s4, 0},
    {"07_warptile@bk32s3", "BK 32, 3 stages", NULL, dd_k07v_sgemm_bk32s3, 0},
    {"08_dmma@bk16s4", "BK 16, 4 stages, fragments loaded before use", dd_k08v_dgemm_bk16s4, NULL,
     0},
    {"08_dmma@bk32s3", "BK 32, 3 stages, fragments loaded before use", dd_k08v_dgemm_bk32s3, NULL,
     0},
    {"08_dmma@pipe16", "BK 16, 4 stages, fragments double-buffered", dd_k08v_dgemm_pipe16, NULL, 0},
    {"08_dmma@128x64", "128x64 blocks of 4 warps, BK 16, 3 stages, 2 blocks per SM",
     dd_k08v_dgemm_128x64, NULL, 0},
};
} // namespace
#endif

extern "C" const kernel_desc *kernel_list(int *count)
{
    if (count)
        *count = (int)(sizeof KERNELS / sizeof KERNELS[0]);
    return KERNELS;
}

extern "C" const kernel_desc *kernel_variants(int *count)
{
#ifdef DD_KERNEL_VARIANTS
    if (count)
        *count = (int)(sizeof VARIANTS / sizeof VARIANTS[0]);
    return VARIANTS;
#else
    if (count)
        *count = 0;
    return NULL;
#endif
}

extern "C" const kernel_desc *kernel_find(const char *name)
{
    if (!name)
        return NULL;
    int n = 0;
    const kernel_desc *k = kernel_list(&n);
    for (int i = 0; i < n; ++i)
        if (strcmp(k[i].name, name) == 0)
            return &k[i];
    k = kernel_variants(&n);
    for (int i = 0; i < n; ++i)
        if (strcmp(k[i].name, name) == 0)
            return &k[i];
    return NULL;
}

extern "C" const char *kernel_default(int is_f64)
{
    return is_f64 ? "08_dmma" : "07_warptile";
}
