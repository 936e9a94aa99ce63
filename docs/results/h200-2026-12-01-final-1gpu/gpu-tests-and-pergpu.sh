set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R/v $R/pergpu
cp COMMIT gpu-tests-and-pergpu.sh $R/
OUT=$R/v DD_BUILD=/tmp/bgpu timeout 400 bash tests/gpu/run.sh build test > $R/v/run.log 2>&1
grep -E "tests passed|tests failed|\*\*\*Failed" $R/v/tests.log | tail -8
timeout 180 bash tests/gpu/pergpu.sh /tmp/bgpu $R/pergpu 2>&1 | tail -12
cd $OUT && tar czf r.tgz r
