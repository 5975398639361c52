#!/usr/bin/env bash
# The suite's softmax (three loops) and cross-entropy as written, at 16 rows of 1M columns
# (fewer rows than SMs): does the loop chain online-softmax and split-rows on kernels that were
# not written for it? Run from the repository root: scripts/gpu/few_rows_optimize.sh OUT_DIR.
set -u
D=$1; R=$PWD; T=$(mktemp -d); mkdir -p $D
for k in softmax cross_entropy; do
  sed -e "s#^source = \"#source = \"$R/bench/kernels/$k/#" -e "s#^harness = \"#harness = \"$R/bench/kernels/$k/#" -e "s#^name = \"$k\"#name = \"${k}_few\"#" bench/kernels/$k/task.toml > $T/$k.toml
done
sed -i 's/^cases = .*/cases = [ { M = 16, N = 1048576 } ]/' $T/softmax.toml
sed -i 's/^cases = .*/cases = [ { M = 16, V = 1048576 } ]/' $T/cross_entropy.toml
for k in softmax cross_entropy; do
  timeout 200 build/tritonforge optimize $T/$k.toml --budget 60 --out $D/$k > $D/$k.log 2>&1; echo "$k exit $?"
  grep -E "^  #|Best|->" $D/$k.log | tail -12
done
