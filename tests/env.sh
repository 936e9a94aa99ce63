# Sourced by the project's scripts: a build environment that works as root
# and finds the CUDA toolkit where it is installed but not on PATH.
if [ -d /usr/local/cuda/bin ] && ! command -v nvcc >/dev/null 2>&1; then
    export PATH="/usr/local/cuda/bin:$PATH"
fi
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
DD_JOBS="${DD_JOBS:-$(nproc)}"
