// scf.forall, as tiling writes it: dt-normalize-tensor-ops makes it a nest
// of scf.for carrying the shared outputs, each tensor.parallel_insert_slice
// a tensor.insert_slice (the iterations write disjoint tiles, so running
// them in order computes the same). The tiles slice rows and columns at
// offsets computed from the loop indices: those dims are replicated inside
// the loops, and the loops run on every rank.
// RUN: dt-opt %s -dt-normalize-tensor-ops | FileCheck %s --check-prefix=NORM
// NORM: %[[F:.*]] = linalg.fill
// NORM: %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[O:.*]] = %{{.*}}, %[[P:.*]] = %[[F]])
// NORM: %[[IN:.*]]:2 = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[O2:.*]] = %[[O]], %[[P2:.*]] = %[[P]])
// NORM: %[[ROW:.*]] = affine.apply #{{.*}}(%[[I]])
// NORM: tensor.extract_slice %[[O2]]
// NORM: %[[SQ:.*]] = linalg.mul
// NORM: %[[MM:.*]] = linalg.matmul
// NORM: %[[A:.*]] = tensor.insert_slice %[[SQ]] into %[[O2]][%[[ROW]], %{{.*}}] [2, 3] [1, 1]
// NORM: %[[B:.*]] = tensor.insert_slice %[[MM]] into %[[P2]][%[[ROW]], %{{.*}}] [2, 2] [1, 1]
// NORM: scf.yield %[[A]], %[[B]]
// NORM: scf.yield %[[IN]]#0, %[[IN]]#1
// NORM: return %[[R]]#0, %[[R]]#1
// NORM-NOT: scf.forall
// The oracle runs the forall itself (upstream bufferizes it and makes it an
// scf.parallel).
// RUN: dt-opt %s %oracle_passes | mlir-opt --convert-elementwise-to-linalg '--one-shot-bufferize=bufferize-function-boundaries allow-return-allocs-from-loops' --scf-forall-to-parallel | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 1 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 1 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 1 --verify | FileCheck %s
// CHECK-COUNT-2: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%x: tensor<8x6xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
                %w: tensor<6x4xf32> {dt.name = "w", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>})
    -> (tensor<8x6xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r:2 = scf.forall (%i, %j) in (4, 2) shared_outs(%o = %e, %p = %f2) -> (tensor<8x6xf32>, tensor<8x4xf32>) {
    %row = affine.apply affine_map<(d0) -> (d0 * 2)>(%i)
    %col = affine.apply affine_map<(d0) -> (d0 * 3)>(%j)
    %pcol = affine.apply affine_map<(d0) -> (d0 * 2)>(%j)
    %s = tensor.extract_slice %x[%row, %col] [2, 3] [1, 1] : tensor<8x6xf32> to tensor<2x3xf32>
    %os = tensor.extract_slice %o[%row, %col] [2, 3] [1, 1] : tensor<8x6xf32> to tensor<2x3xf32>
    %sq = linalg.mul ins(%s, %s : tensor<2x3xf32>, tensor<2x3xf32>) outs(%os : tensor<2x3xf32>) -> tensor<2x3xf32>
    %xs = tensor.extract_slice %x[%row, 0] [2, 6] [1, 1] : tensor<8x6xf32> to tensor<2x6xf32>
    %ws = tensor.extract_slice %w[0, %pcol] [6, 2] [1, 1] : tensor<6x4xf32> to tensor<6x2xf32>
    %ps = tensor.extract_slice %p[%row, %pcol] [2, 2] [1, 1] : tensor<8x4xf32> to tensor<2x2xf32>
    %mm = linalg.matmul ins(%xs, %ws : tensor<2x6xf32>, tensor<6x2xf32>) outs(%ps : tensor<2x2xf32>) -> tensor<2x2xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %sq into %o[%row, %col] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<8x6xf32>
      tensor.parallel_insert_slice %mm into %p[%row, %pcol] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<8x4xf32>
    }
  }
  return %r#0, %r#1 : tensor<8x6xf32>, tensor<8x4xf32>
}
