set -u
R=$OUT/r; mkdir -p $R/v $R/pergpu
cp COMMIT build-and-pergpu.sh $R/
OUT=$R/v DD_BUILD=/tmp/bgpu timeout 200 bash tests/gpu/run.sh build > $R/v/run.log 2>&1; tail -1 $R/v/build.log
timeout 200 bash tests/gpu/pergpu.sh /tmp/bgpu $R/pergpu 2>&1 | tail -14
cd $OUT && tar czf r.tgz r
