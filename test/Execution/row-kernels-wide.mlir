// Row kernels and split reductions over 64-bit and unsigned values: an f64
// row sum and the rows scaled by it (a warp per row; on a GPU, shuffles of
// 64-bit values become two 32-bit ones), an i64 signed max over rows of 300
// (a block per row), an i32 unsigned max and an i64 column sum (split into
// chunks). The emulated CUDA artifact (the GPU's kernels, race-checked)
// against the CPU build (the upstream oracle's driver takes f32 only) and
// the single-device reference; the GPU lowering's PTX assembles (ptxas).
// RUN: dt-run %s --seed 3 --output-dir %t.cpu > /dev/null
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --verify --output-dir %t.emu | FileCheck %s --check-prefix=VERIFY
// RUN: %npy compare %t.emu %t.cpu 1e-12 1e-14 | FileCheck %s --check-prefix=SAME
// RUN: %if cuda-toolkit %{ dt-compile --target=cuda %s -o %t.gpu.so %}
// VERIFY: verify: PASS
// SAME-COUNT-4: max abs err {{.*}}: ok
// SAME: compare: PASS
dt.mesh @mesh = <["tp" = 2]>
#row = affine_map<(i, j) -> (i, j)>
#total = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<40x24xf64> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %n: tensor<12x300xi64> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %u: tensor<12x300xi32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %c: tensor<96x10xi64> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<40x24xf64> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<12xi64> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<12xi32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<10xi64> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f64
  %izero = arith.constant 0 : i64
  %imin = arith.constant -9223372036854775808 : i64
  %uzero = arith.constant 0 : i32
  %sums = tensor.empty() : tensor<40xf64>
  %full = tensor.empty() : tensor<40x24xf64>
  %maxes = tensor.empty() : tensor<12xi64>
  %umaxes = tensor.empty() : tensor<12xi32>
  %cols = tensor.empty() : tensor<10xi64>

  // y = x / sum(x * x) over each row, in f64.
  %s0 = linalg.fill ins(%zero : f64) outs(%sums : tensor<40xf64>) -> tensor<40xf64>
  %s = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<40x24xf64>) outs(%s0 : tensor<40xf64>) {
  ^bb0(%in: f64, %acc: f64):
    %sq = arith.mulf %in, %in : f64
    %a = arith.addf %acc, %sq : f64
    linalg.yield %a : f64
  } -> tensor<40xf64>
  %y = linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<40x24xf64>, tensor<40xf64>) outs(%full : tensor<40x24xf64>) {
  ^bb0(%in: f64, %t: f64, %out: f64):
    %o = arith.divf %in, %t : f64
    linalg.yield %o : f64
  } -> tensor<40x24xf64>

  // The signed max of each row of n.
  %m0 = linalg.fill ins(%imin : i64) outs(%maxes : tensor<12xi64>) -> tensor<12xi64>
  %m = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%n : tensor<12x300xi64>) outs(%m0 : tensor<12xi64>) {
  ^bb0(%in: i64, %acc: i64):
    %a = arith.maxsi %acc, %in : i64
    linalg.yield %a : i64
  } -> tensor<12xi64>

  // The unsigned max of each row of u (negative values are the largest).
  %v0 = linalg.fill ins(%uzero : i32) outs(%umaxes : tensor<12xi32>) -> tensor<12xi32>
  %v = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%u : tensor<12x300xi32>) outs(%v0 : tensor<12xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %a = arith.maxui %acc, %in : i32
    linalg.yield %a : i32
  } -> tensor<12xi32>

  // Column sums of c in i64.
  %k0 = linalg.fill ins(%izero : i64) outs(%cols : tensor<10xi64>) -> tensor<10xi64>
  %k = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["reduction", "parallel"]}
      ins(%c : tensor<96x10xi64>) outs(%k0 : tensor<10xi64>) {
  ^bb0(%in: i64, %acc: i64):
    %a = arith.addi %acc, %in : i64
    linalg.yield %a : i64
  } -> tensor<10xi64>
  return %y, %m, %v, %k : tensor<40x24xf64>, tensor<12xi64>, tensor<12xi32>, tensor<10xi64>
}
