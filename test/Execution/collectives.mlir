// Every redistribution kind, compiled and run on a 2x2 mesh: each result is
// one transition of the same inputs, and dt-run gathers each from its own
// sharding (partial results are summed), so every collective's meaning is
// checked against the single-device reference.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=LOCAL
// LOCAL-DAG: dt.all_gather {{.*}} ["dp"] dim 0
// LOCAL-DAG: dt.all_to_all {{.*}} ["dp"] split 1 concat 0
// LOCAL-DAG: dt.local_slice {{.*}} ["tp"] dim 1
// LOCAL-DAG: dt.reduce_scatter {{.*}} ["tp"] sum dim 0
// LOCAL-DAG: dt.all_reduce {{.*}} ["tp"] sum
// LOCAL-DAG: dt.axis_index @mesh "tp"
// The same numbers as upstream mlir-runner on the plain program:
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 7 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 7 --verify | FileCheck %s --check-prefix=VERIFY %}
// VERIFY-COUNT-7: : ok
// VERIFY: verify: PASS
#s0 = #dt.sharding<@mesh, [S(0), R]>
#rr = #dt.sharding<@mesh, [R, R]>
#s1 = #dt.sharding<@mesh, [S(1), R]>
#s01 = #dt.sharding<@mesh, [S(0), S(1)]>
#rs1 = #dt.sharding<@mesh, [R, S(1)]>
#rs0 = #dt.sharding<@mesh, [R, S(0)]>
#rp = #dt.sharding<@mesh, [R, P(sum)]>
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%x: tensor<8x8xf32, #s0>, %y: tensor<8x8xf32, #s0>,
                %a: tensor<8x8xf32, #rs1>, %b: tensor<8x8xf32, #rs0>, %c: tensor<8x8xf32, #rs0>)
    -> (tensor<8x8xf32, #rr>, tensor<8x8xf32, #s1>, tensor<8x8xf32, #s01>,
        tensor<8x8xf32, #rs0>, tensor<8x8xf32, #rr>, tensor<8x8xf32, #rp>,
        tensor<8x8xf32, #rp>) {
  // all_gather, all_to_all, local_slice. (The all_to_all gets a value of its
  // own: after the all_gather of %x, slicing that would be cheaper.)
  %gathered = dt.redistribute %x : tensor<8x8xf32, #s0> -> tensor<8x8xf32, #rr>
  %moved = dt.redistribute %y : tensor<8x8xf32, #s0> -> tensor<8x8xf32, #s1>
  %sliced = dt.redistribute %x : tensor<8x8xf32, #s0> -> tensor<8x8xf32, #s01>
  // A contraction over a tp-sharded dim is a partial sum over tp.
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32, #rp>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32, #rp>) -> tensor<8x8xf32, #rp>
  %p = linalg.matmul ins(%a, %b : tensor<8x8xf32, #rs1>, tensor<8x8xf32, #rs0>)
                     outs(%z : tensor<8x8xf32, #rp>) -> tensor<8x8xf32, #rp>
  %q = linalg.matmul ins(%a, %c : tensor<8x8xf32, #rs1>, tensor<8x8xf32, #rs0>)
                     outs(%z : tensor<8x8xf32, #rp>) -> tensor<8x8xf32, #rp>
  // reduce_scatter, all_reduce (of another partial sum: after the
  // reduce_scatter of %p, an all_gather would finish the job); the partial
  // value also leaves as it is.
  %scattered = dt.redistribute %p : tensor<8x8xf32, #rp> -> tensor<8x8xf32, #rs0>
  %reduced = dt.redistribute %q : tensor<8x8xf32, #rp> -> tensor<8x8xf32, #rr>
  // to_partial: a replicated value made partial (first rank of tp keeps it).
  %partial = dt.redistribute %gathered : tensor<8x8xf32, #rr> -> tensor<8x8xf32, #rp>
  return %gathered, %moved, %sliced, %scattered, %reduced, %p, %partial
      : tensor<8x8xf32, #rr>, tensor<8x8xf32, #s1>, tensor<8x8xf32, #s01>,
        tensor<8x8xf32, #rs0>, tensor<8x8xf32, #rr>, tensor<8x8xf32, #rp>,
        tensor<8x8xf32, #rp>
}
