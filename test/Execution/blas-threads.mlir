// Each rank's CPU matmuls run on OpenBLAS threads: dt-run --blas-threads=N,
// by default the CPUs the process may use shared out among the ranks on
// this machine (at least one each). A 320x288 by 288x256 product (big
// enough for OpenBLAS to split it) on dp=2; @single, half of it on one rank.
// RUN: dt-compile %s -o %t.so
// RUN: dt-run %t.so --seed 3 --blas-threads=2 --verify --strict --output-dir %t.two | FileCheck %s --check-prefix=TWO
// TWO: dt-run: main on 2 ranks (threads backend), mesh dp=2; matmuls on 2 OpenBLAS threads a rank
// TWO: result #0 (y) 640x256 f32: {{.*}}: ok
// TWO: verify: PASS
// The same count of threads computes the same bits.
// RUN: dt-run %t.so --seed 3 --blas-threads=2 --output-dir %t.again
// RUN: cmp %t.two/result0.npy %t.again/result0.npy
// Against upstream mlir-runner's loops, on 3 threads a rank.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s --blas-threads=3 > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// By default, one CPU shared by two ranks: one thread each; two CPUs for
// one rank (the reference, under --verify, has them all): two.
// RUN: taskset -c %one_cpu dt-run %t.so --seed 3 | FileCheck %s --check-prefix=ONE
// ONE: matmuls on 1 OpenBLAS thread a rank
// RUN: %if cpus2 %{ taskset -c %two_cpus dt-run %t.so --seed 3 | FileCheck %s --check-prefix=ONE %}
// RUN: %if cpus2 %{ taskset -c %two_cpus dt-run %t.so --entry=single --seed 3 --verify | FileCheck %s --check-prefix=SINGLE %}
// SINGLE: dt-run: single on 1 rank (threads backend), mesh (no mesh); matmuls on 2 OpenBLAS threads a rank
// SINGLE: verify: PASS
// Under mpirun, the ranks on this machine share its CPUs the same way.
// RUN: %if cpus2 && mpi %{ taskset -c %two_cpus %mpirun -np 2 dt-run %t.so --backend=mpi --seed 3 --verify | FileCheck %s --check-prefix=MPI %}
// MPI: dt-run: main on 2 ranks (mpi backend), mesh dp=2; matmuls on 1 OpenBLAS thread a rank
// MPI: verify: PASS
// $OPENBLAS_NUM_THREADS, as OpenBLAS reads it, unless --blas-threads says.
// RUN: env OPENBLAS_NUM_THREADS=3 dt-run %t.so --seed 3 | FileCheck %s --check-prefix=ENV
// ENV: matmuls on 3 OpenBLAS threads a rank
// RUN: env OPENBLAS_NUM_THREADS=3 dt-run %t.so --seed 3 --blas-threads=2 | FileCheck %s --check-prefix=TWO-ONLY
// TWO-ONLY: matmuls on 2 OpenBLAS threads a rank
// RUN: not dt-run %t.so --seed 3 --blas-threads=0 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: dt-run: --blas-threads takes a positive integer, got '0'
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%x: tensor<640x288xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %w: tensor<288x256xf32> {dt.name = "w", dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<640x256xf32> {dt.name = "y", dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<640x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<640x256xf32>) -> tensor<640x256xf32>
  %y = linalg.matmul ins(%x, %w : tensor<640x288xf32>, tensor<288x256xf32>) outs(%z : tensor<640x256xf32>) -> tensor<640x256xf32>
  return %y : tensor<640x256xf32>
}
func.func @single(%x: tensor<320x288xf32>, %w: tensor<288x256xf32>) -> tensor<320x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<320x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<320x256xf32>) -> tensor<320x256xf32>
  %y = linalg.matmul ins(%x, %w : tensor<320x288xf32>, tensor<288x256xf32>) outs(%z : tensor<320x256xf32>) -> tensor<320x256xf32>
  return %y : tensor<320x256xf32>
}
