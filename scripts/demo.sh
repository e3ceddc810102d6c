#!/usr/bin/env bash
# `make demo`: compile a training step annotated for a 2x2 (data x tensor
# parallel) mesh, run it on 4 ranks of the CPU threads backend, and check it
# against the single-device program compiled the same way.
set -euo pipefail
build=${1:-build}
bin="$build/bin"
examples="$(cd "$(dirname "$0")/../python-free-examples" && pwd)"
example="$examples/train_step_dp_tp.mlir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { printf '\n==> %s\n' "$*"; }

step "The user's program: forward, loss, backward and SGD; only the inputs and weights are annotated"
grep -E '^dt.mesh|dt.sharding' "$example"

step "dt decides every other sharding and the collectives (dt-cost-report)"
"$bin/dt-opt" "$example" --dt-propagate --dt-insert-redistribute --dt-check \
  --dt-lower-redistribute --cse --dt-cost-report -o /dev/null

step "dt-compile: one shared object with the SPMD program, the reference program and their description"
"$bin/dt-compile" "$example" -o "$work/train_step.so"
"$bin/dt-run" "$work/train_step.so" --describe

step "dt-run: 4 ranks (threads backend), 10 timed steps, then --verify against the single-device reference"
"$bin/dt-run" "$work/train_step.so" --seed 0 --repeat 10 --verify --output-dir "$work/out"
ls "$work/out"
