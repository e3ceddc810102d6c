// The example MLP on 4 ranks computes what the single-device program does.
// RUN: dt-opt %dt_src_root/python-free-examples/mlp_tp.mlir %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: dt-opt %dt_src_root/python-free-examples/mlp_tp.mlir %spmd_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.spmd
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.spmd | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: FileCheck %s < %t.spmd
// CHECK: {{\[\[}}-12017, 1136, 8800, 40675,
