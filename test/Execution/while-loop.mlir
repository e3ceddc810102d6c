// scf.while: halve a sharded tensor until its sum of squares is at most a
// tolerance, counting the trips. Every rank runs as many trips: the
// condition reads a replicated scalar (the sum of what the ranks gather). The carried
// tensor keeps its sharding through the loop; the counter (an f32, which the oracle
// prints) is replicated.
// On the CUDA target the condition is read back to the host each trip.
// RUN: dt-opt %s -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: scf.while, result #0: [S(0), S(1)] as the condition region forwards it
// RUN: dt-opt %s -dt-shard | FileCheck %s
// CHECK: scf.while ({{.*}}) : (tensor<4x3xf32>, tensor<f32>) -> (tensor<4x3xf32>, tensor<f32>)
// CHECK: tensor.extract
// CHECK: scf.condition
// CHECK: } do {
// CHECK-NOT: dt.all_gather
// CHECK: scf.yield
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: all_gather {{.*}}x? (a loop's trip count is not constant: counted once)
// RUN: dt-opt %s -dt-shard -dt-lower-to-cuda=format=isa | FileCheck %s --check-prefix=CUDA
// CUDA: llvm.call @dt_rt_gpu_read_scalar
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// The pattern's squares sum to 490 (a cycle of 11 sums 110, 48 entries
// hold four cycles and -5, 2, -2, 5); each trip divides it by 4, so the
// sum drops to 1 or less after 5 trips.
// RUN: %npy pattern-run %dt_run %s | FileCheck %s --check-prefix=TRIPS
// TRIPS: {{^}}5.0{{$}}
// RUN: dt-run %s --seed 2 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 2 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 2 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %npy pattern-run %dt_run %t.emu.so > %t.emu
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.emu | FileCheck %s --check-prefix=COMPARE
// VERIFY-COUNT-2: : ok
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

func.func @main(%x: tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>})
    -> (tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>}, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %tol = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %none = arith.constant dense<0.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %r:2 = scf.while (%h = %x, %n = %none) : (tensor<8x6xf32>, tensor<f32>) -> (tensor<8x6xf32>, tensor<f32>) {
    %e = tensor.empty() : tensor<f32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
        ins(%h : tensor<8x6xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%v: f32, %a: f32):
      %sq = arith.mulf %v, %v : f32
      %r = arith.addf %a, %sq : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %v = tensor.extract %s[] : tensor<f32>
    %go = arith.cmpf ogt, %v, %tol : f32
    scf.condition(%go) %h, %n : tensor<8x6xf32>, tensor<f32>
  } do {
  ^bb0(%h2: tensor<8x6xf32>, %n2: tensor<f32>):
    %e2 = tensor.empty() : tensor<8x6xf32>
    %halved = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%h2 : tensor<8x6xf32>) outs(%e2 : tensor<8x6xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.mulf %v, %half : f32
      linalg.yield %r : f32
    } -> tensor<8x6xf32>
    %n3 = arith.addf %n2, %one : tensor<f32>
    scf.yield %halved, %n3 : tensor<8x6xf32>, tensor<f32>
  }
  return %r#0, %r#1 : tensor<8x6xf32>, tensor<f32>
}
