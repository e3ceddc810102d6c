#!/usr/bin/env bash
# Runs a command (mpirun ...) with a TMPDIR of its own. Open MPI keeps its
# session directory under TMPDIR, and two jobs at once in one TMPDIR (lit's
# workers share one) race to create and remove it: "A call to mkdir was
# unable to create the desired directory".
#
#   scripts/mpirun-own-tmp.sh mpirun -np 4 dt-run prog.mlir --backend=mpi
set -u
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
TMPDIR=$dir "$@"
