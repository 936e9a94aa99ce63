#!/bin/bash
# The model's CSV tables are read by one parser (src/model/model_csv.c):
# the build's generator (dd-model-tables) stops on every row that the
# run-time reader (DD_MODEL_RATES, src/core/tune.c) would pass over, naming
# the file and line, so a table never means one thing compiled in and
# another at run time; the tables in the tree generate what the build
# compiled.
#
#   tests/docs/model_tables.sh DD_MODEL_TABLES BUILD_MODEL_TABLES_C REPO_ROOT
set -euo pipefail
gen=${1:?usage: $0 DD_MODEL_TABLES BUILD_MODEL_TABLES_C REPO_ROOT}
built=${2:?}
repo=${3:?}
t=$repo/src/model/tables
work=$(mktemp -d "${TMPDIR:-/tmp}/model-tables.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0

# the tree's tables give the build's file
timeout 20 "$gen" "$work/tables.c" "$t/links.csv" $(ls "$t"/rates-*.csv | LC_ALL=C sort)
cmp -s "$work/tables.c" "$built" || { echo "FAIL: the tables in the tree do not generate $built"; fails=$((fails + 1)); }

head='device,kernel,dtype,threads,m,n,k,gflops,source'
good='H200,dgemm_dmma,f64,0,1024,1024,1024,36148,test'
# rows a reader could take two ways: each must stop the generator
while IFS='|' read -r what row; do
  printf '%s\n%s\n%s\n' "$head" "$good" "$row" >"$work/rates-bad.csv"
  if out=$(timeout 20 "$gen" "$work/out.c" "$t/links.csv" "$work/rates-bad.csv" 2>&1); then
    echo "FAIL: $what ($row) accepted"
    fails=$((fails + 1))
  elif [[ $out != *"rates-bad.csv:3:"* ]]; then
    echo "FAIL: $what: the message does not name the file and line: $out"
    fails=$((fails + 1))
  elif [[ -e $work/out.c ]]; then
    echo "FAIL: $what: an output was left"
    fails=$((fails + 1))
  fi
done <<'ROWS'
an unknown dtype (was taken as f64)|H200,dgemm_dmma,f16,0,512,512,512,100,test
an upper-case dtype|H200,dgemm_dmma,F32,0,512,512,512,100,test
a rate with trailing text|H200,dgemm_dmma,f64,0,512,512,512,52.9abc,test
a rate of zero|H200,dgemm_dmma,f64,0,512,512,512,0,test
a size below 1|H200,dgemm_dmma,f64,0,0,512,512,100,test
a fractional thread count|cpu,openblas,f64,1.5,512,512,512,100,test
an empty device|,dgemm_dmma,f64,0,512,512,512,100,test
a quote in a name|H200,dgemm"x,f64,0,512,512,512,100,test
too few fields|H200,dgemm_dmma,f64,0,512,512,512
ROWS
printf 'name,alpha_us,beta_gbs,algo,source\nx,1,2,star,test\n' >"$work/links-bad.csv"
if timeout 20 "$gen" "$work/out.c" "$work/links-bad.csv" >/dev/null 2>&1; then
  echo "FAIL: a link with algo 'star' accepted (was taken as ring)"
  fails=$((fails + 1))
fi
[[ $fails == 0 ]] || exit 1
echo "PASS (model tables): the tree's tables give the build's; 10 malformed rows stop the generator, each named"
