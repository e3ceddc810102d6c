// scf.if on values the program computes, and a loop whose trip count is
// data: every rank takes the same branch and the same number of trips,
// because dt's scalars are read from replicated tensors. A branch may hold
// collectives, may yield its operand unchanged, and may yield another
// sharding than the branch the result's sharding comes from (it then moves
// its value there). On the CUDA target, the condition and the trip count
// are read back to the host (dt_rt_gpu_read_scalar), the one place a step
// waits for its stream. The plans checked are propagation's rules alone
// (search=0); both they and the plan search's run and verify.
// RUN: dt-opt %s -dt-shard=search=0 | FileCheck %s
// RUN: dt-opt %s -dt-propagate=search=0 -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: all_gather {{.*}} us{{$}}
// REPORT: all_to_all {{.*}} us  (in a branch: counted as taken)
// Explanations say why each result of a branch or loop got its sharding.
// RUN: dt-opt %s -dt-propagate="explain search=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: scf.if, result #0: [S(0), R] as the branches yield it
// EXPLAIN: remark: scf.for, result #0: [S(0), S(1)] as its init
// EXPLAIN: remark: scf.if, result #0: [S(1), S(0)] as the then branch yields it: 6.0 us either way, and a tie goes to the then branch
// EXPLAIN: remark: scf.if, result #0: [S(0), S(1)] as the else branch yields it: 0.0 us to reach from both branches and give its users what they ask, against 6.0 us
// RUN: dt-opt %s -dt-shard -dt-lower-to-cuda=format=isa | FileCheck %s --check-prefix=CUDA
// CUDA-COUNT-3: llvm.call @dt_rt_gpu_read_scalar
// CUDA-NOT: llvm.call @dt_rt_gpu_read_scalar
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 2 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-compile --plan-search=0 %s -o %t.rules.so
// RUN: dt-run %t.rules.so --seed 2 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-run %s --seed 5 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 2 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 2 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-run %t.emu.so --seed 5 --verify | FileCheck %s --check-prefix=VERIFY
// Which branch the data picks: the pattern's entries sum to 0, so one set
// to 5 tips the sum positive (tanh), one set to -15 negative (negation).
// RUN: %npy pattern %t.pos.npy 8,6 0=5.0
// RUN: %npy pattern %t.neg.npy 8,6 0=-15.0
// RUN: dt-run %s --input 0=%t.pos.npy --seed 3 --verify --output-dir %t.pos | FileCheck %s --check-prefix=VERIFY
// RUN: dt-run %t.emu.so --input 0=%t.neg.npy --seed 3 --verify --output-dir %t.neg | FileCheck %s --check-prefix=VERIFY
// RUN: %npy print %t.pos/result2.npy | FileCheck %s --check-prefix=THEN
// RUN: %npy print %t.neg/result2.npy | FileCheck %s --check-prefix=ELSE
// RUN: %npy print %t.pos/result3.npy | FileCheck %s --check-prefix=TRIPS
// THEN: 0.9999
// ELSE: 15
// The pattern has 22 positive entries of 48, and 5 replaces its first -5.
// TRIPS: {{^}}0.0{{$}}
// TRIPS-NEXT: {{^}}23.0{{$}}
// TRIPS-NEXT: {{^}}0.0{{$}}
// VERIFY-COUNT-5: : ok
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>

#sq = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
                %w: tensor<6x4xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
                %z: tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>})
    -> (tensor<8x4xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<4xf32>,
        tensor<8x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sumsq = linalg.generic {indexing_maps = [#sq, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<8x6xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%v: f32, %a: f32):
    %s = arith.mulf %v, %v : f32
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  // CHECK: tensor.extract
  %n = tensor.extract %sumsq[] : tensor<f32>
  // Always taken: a matmul, whose weight is gathered inside the branch.
  %some = arith.cmpf oge, %n, %zero : f32
  // CHECK: scf.if
  // CHECK: dt.all_gather %arg1
  // CHECK: linalg.matmul
  // CHECK: scf.yield
  // CHECK: } else {
  %y = scf.if %some -> tensor<8x4xf32> {
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %m = linalg.matmul ins(%x, %w : tensor<8x6xf32>, tensor<6x4xf32>)
                       outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    scf.yield %m : tensor<8x4xf32>
  } else {
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    scf.yield %f : tensor<8x4xf32>
  }
  // Never taken: the else branch yields the argument itself, so the
  // result may be the argument's buffer or one the branch allocated.
  %none = arith.cmpf olt, %n, %zero : f32
  %kept = scf.if %none -> tensor<8x6xf32> {
    %t = math.tanh %x : tensor<8x6xf32>
    scf.yield %t : tensor<8x6xf32>
  } else {
    scf.yield %x : tensor<8x6xf32>
  }
  // As many trips as x has positive entries.
  %ei = tensor.empty() : tensor<i32>
  %c0i = arith.constant 0 : i32
  %cnt0 = linalg.fill ins(%c0i : i32) outs(%ei : tensor<i32>) -> tensor<i32>
  %count = linalg.generic {indexing_maps = [#sq, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<8x6xf32>) outs(%cnt0 : tensor<i32>) {
  ^bb0(%v: f32, %a: i32):
    %pos = arith.cmpf ogt, %v, %zero : f32
    %one = arith.extui %pos : i1 to i32
    %r = arith.addi %a, %one : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %trips32 = tensor.extract %count[] : tensor<i32>
  %trips = arith.index_cast %trips32 : i32 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for
  %decayed = scf.for %i = %c0 to %trips step %c1 iter_args(%h = %kept) -> (tensor<8x6xf32>) {
    %m = linalg.generic {indexing_maps = [#sq, #sq], iterator_types = ["parallel", "parallel"]}
        ins(%h : tensor<8x6xf32>) outs(%h : tensor<8x6xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.mulf %v, %half : f32
      %s = arith.addf %r, %half : f32
      linalg.yield %s : f32
    } -> tensor<8x6xf32>
    scf.yield %m : tensor<8x6xf32>
  }
  // The branch the data picks: the then branch fixes its result's
  // sharding (swapped placements), so the else branch moves its value
  // there too: swapping the axes of a 2x2 mesh is one point-to-point
  // exchange (ranks (0, 1) and (1, 0) trade pieces).
  // CHECK: tensor.extract
  // CHECK: scf.if
  // CHECK: math.tanh
  // CHECK: dt.exchange
  // CHECK: } else {
  // CHECK: arith.negf
  // CHECK: dt.exchange
  // CHECK: scf.yield
  %e1 = tensor.empty() : tensor<f32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#sq, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<8x6xf32>) outs(%acc1 : tensor<f32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %s = tensor.extract %sum[] : tensor<f32>
  %positive = arith.cmpf ogt, %s, %zero : f32
  %picked = scf.if %positive -> tensor<8x6xf32> {
    %t = math.tanh %x : tensor<8x6xf32>
    %c = dt.constrain %t to #dt.sharding<@mesh, [S(1), S(0)]> : tensor<8x6xf32>
    scf.yield %c : tensor<8x6xf32>
  } else {
    %g = arith.negf %x : tensor<8x6xf32>
    scf.yield %g : tensor<8x6xf32>
  }
  // One branch yields a replicated value, the other a split one: slicing
  // the replicated one is local, gathering the split one is not, so the
  // result is split (the cheaper of the two yielded shardings, not the
  // then branch's), and only the then branch moves, by a local slice.
  // CHECK: scf.if
  // CHECK: math.tanh %{{.*}} : tensor<8x6xf32>
  // CHECK: dt.local_slice
  // CHECK: } else {
  // CHECK-NEXT: arith.negf %arg2 : tensor<4x3xf32>
  // CHECK-NEXT: scf.yield
  %whole = scf.if %positive -> tensor<8x6xf32> {
    %t = math.tanh %z : tensor<8x6xf32>
    %r = dt.constrain %t to #dt.sharding<@mesh, [R, R]> : tensor<8x6xf32>
    scf.yield %r : tensor<8x6xf32>
  } else {
    %g = arith.negf %z : tensor<8x6xf32>
    scf.yield %g : tensor<8x6xf32>
  }
  // The trip count written back into a tensor: a host scalar stored into
  // device memory on the CUDA target (a one-thread kernel).
  %tripsf = arith.sitofp %trips32 : i32 to f32
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %counted = tensor.insert %tripsf into %z4[%c1] : tensor<4xf32>
  return %y, %decayed, %picked, %counted, %whole
      : tensor<8x4xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<4xf32>, tensor<8x6xf32>
}
