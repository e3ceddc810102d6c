// Complex arithmetic inside linalg bodies (the tensors stay real: dt's
// shardings and the runtime carry real element types only; a complex tensor
// is refused, test/Transforms/propagate-invalid.mlir). The CPU
// lowering expands complex ops into arith and math (convert-complex-to-
// standard) and lowers what is left to LLVM structs; the sums over the
// sharded rows still meet in an all_reduce.
// The same numbers as upstream mlir-runner on the plain program:
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 2 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 2 --verify | FileCheck %s %}
// CHECK-COUNT-3: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%x: tensor<8x6xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %y: tensor<8x6xf32> {dt.name = "y", dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<6xf32>) {
  %e = tensor.empty() : tensor<8x6xf32>
  %one = complex.constant [1.0 : f32, 0.0 : f32] : complex<f32>
  %m, %p = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<8x6xf32>, tensor<8x6xf32>)
      outs(%e, %e : tensor<8x6xf32>, tensor<8x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32, %o2: f32):
    // w = z^2 + exp(z) / (conj(z) z + 1), a divisor never 0.
    %z = complex.create %a, %b : complex<f32>
    %zz = complex.mul %z, %z : complex<f32>
    %ez = complex.exp %z : complex<f32>
    %cz = complex.conj %z : complex<f32>
    %n = complex.mul %cz, %z : complex<f32>
    %d = complex.add %n, %one : complex<f32>
    %q = complex.div %ez, %d : complex<f32>
    %w = complex.add %zz, %q : complex<f32>
    // |w| and arg(sqrt(w)) + im(log(conj(z) z + 1)).
    %mag = complex.abs %w : complex<f32>
    %r = complex.sqrt %w : complex<f32>
    %ang = complex.angle %r : complex<f32>
    %l = complex.log %d : complex<f32>
    %li = complex.im %l : complex<f32>
    %lr = complex.re %l : complex<f32>
    %s = arith.addf %ang, %li : f32
    %t = arith.addf %s, %lr : f32
    linalg.yield %mag, %t : f32, f32
  } -> (tensor<8x6xf32>, tensor<8x6xf32>)
  // Column sums of |w| over the sharded rows: partial, then an all_reduce.
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<6xf32>) -> tensor<6xf32>
  %sum = linalg.reduce ins(%m : tensor<8x6xf32>) outs(%sz : tensor<6xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %u = arith.addf %in, %acc : f32
      linalg.yield %u : f32
    }
  return %m, %p, %sum : tensor<8x6xf32>, tensor<8x6xf32>, tensor<6xf32>
}
