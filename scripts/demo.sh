#!/usr/bin/env bash
# `make demo`: what dt can do today, on an example from python-free-examples/.
# The runtime (dt-compile, dt-run) does not exist yet; until it does, the demo
# runs the example through the dt-opt passes (propagation to partitioning)
# and prints the results.
set -euo pipefail
build=${1:-build}
opt="$build/bin/dt-opt"
examples="$(dirname "$0")/../python-free-examples"

step() { printf '\n==> %s\n' "$*"; }

step "A user's program: an MLP annotated for 4-way tensor parallelism"
sed -n '/^dt.mesh/,$p' "$examples/mlp_tp.mlir"

step "dt-propagate + dt-insert-redistribute + dt-check: every sharding decided, every change explicit, proven sound"
"$opt" "$examples/mlp_tp.mlir" --dt-propagate --dt-insert-redistribute --dt-check \
  --dt-cost-report

step "dt-shard: the program every rank runs (local shapes, one all_reduce)"
"$opt" "$examples/mlp_tp.mlir" --dt-shard

step "A mistake is a diagnostic, never a silent wrong program"
bad=$(mktemp --suffix=.mlir)
trap 'rm -f "$bad"' EXIT
sed "s/\"w1\", dt.sharding = #dt.sharding<@mesh, \[S(1)\]>/\"w1\", dt.sharding = #dt.sharding<@mesh, [S(2)]>/" \
  "$examples/mlp_tp.mlir" > "$bad"
echo "(w1 annotated S(2), but it has rank 2)"
if "$opt" "$bad" -o /dev/null --mlir-print-op-on-diagnostic=false 2>&1; then
  echo "error: the damaged program was accepted" >&2
  exit 1
fi
cat > "$bad" <<'MLIR'
dt.mesh @mesh = <["tp" = 4]>
func.func @f(%y: tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>> {
  %e = math.exp %y : tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>
  return %e : tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>
}
MLIR
echo "(exp applied to a partial sum, written by hand in the typed form)"
if "$opt" "$bad" --dt-check -o /dev/null --mlir-print-op-on-diagnostic=false 2>&1; then
  echo "error: the unsound program was accepted" >&2
  exit 1
fi
