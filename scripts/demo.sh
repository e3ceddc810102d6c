#!/usr/bin/env bash
# `make demo`: what dt can do today, on an example from python-free-examples/.
# The runtime (dt-compile, dt-run) does not exist yet; until it does, the demo
# runs the example through the dt-opt passes that exist and prints the result.
set -euo pipefail
build=${1:-build}
opt="$build/bin/dt-opt"
examples="$(dirname "$0")/../python-free-examples"

step() { printf '\n==> %s\n' "$*"; }

step "A user's program: an MLP annotated for 4-way tensor parallelism"
sed -n '/^dt.mesh/,$p' "$examples/mlp_tp.mlir"

step "dt-opt parses and verifies it (placements, mesh, annotations)"
"$opt" "$examples/mlp_tp.mlir" -o /dev/null && echo "ok: the annotated program verifies"

step "The typed form, with every sharding in the types, after canonicalize and the encoding check"
"$opt" "$examples/mlp_tp_typed.mlir" --canonicalize --dt-verify-encodings

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
