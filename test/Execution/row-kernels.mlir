// Row kernels: a residual add and its RMS norm, a softmax, an RMS norm and
// a softmax's backward, each reductions over a row and pointwise ops over
// it, which the CUDA lowering fuses into one kernel per row
// (dt-gpu-reduction-kernels), and a softmax
// over a sharded row, gathered first. Split reductions: column sums (a
// bias's gradient; one over an unevenly sharded dim) and a max over a
// middle dim, each in chunks whose partials a second kernel combines, and
// a sum of squares to a scalar (a loss), in chunks of the row; and two
// over a prime length, whose last chunk is shorter than the others. The CPU
// artifact and the emulated CUDA one (the GPU's kernels: warp shuffles for
// these short rows, gpu.all_reduce for the split ones) against the upstream
// oracle and against the single-device reference. For a GPU the same
// kernels come with --gpu-kernels-any-size (test/GPU runs them): 16
// launches instead of the 27 of the size-aware default, which keeps one
// thread per output at these sizes.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: %npy pattern-run %dt_run %t.emu.so > %t.emu
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.emu | FileCheck %s --check-prefix=COMPARE
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %t.emu.so --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: %if cuda-toolkit %{ dt-compile --target=cuda --gpu-kernels-any-size --emit=spmd-mlir %s -o - | grep -c gpu.launch_func | FileCheck %s --check-prefix=ANY-SIZE %}
// RUN: %if cuda-toolkit %{ dt-compile --target=cuda --emit=spmd-mlir %s -o - | grep -c gpu.launch_func | FileCheck %s --check-prefix=SIZED %}
// VERIFY: verify: PASS
// ANY-SIZE: {{^}}16{{$}}
// SIZED: {{^}}27{{$}}
dt.mesh @mesh = <["tp" = 4]>
#row = affine_map<(i, j) -> (i, j)>
#total = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<32x40xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %g: tensor<40xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %dy: tensor<32x40xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %w: tensor<6x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %cols: tensor<64x40xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %tall: tensor<70x12xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %cube: tensor<4x48x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %prime: tensor<97x12xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<32x40xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<32x40xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<32x40xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<6x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
        tensor<40xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<12xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<4x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<f32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<32x40xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<32x40xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<12xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<f32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %eps = arith.constant 1.0e-5 : f32
  %width = arith.constant 40.0 : f32
  %rows = tensor.empty() : tensor<32xf32>
  %full = tensor.empty() : tensor<32x40xf32>

  // h = x + dy and its RMS norm: the residual add leads the norm's row
  // kernel.
  %h = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy : tensor<32x40xf32>, tensor<32x40xf32>) outs(%full : tensor<32x40xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<32x40xf32>
  %hs0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<32xf32>) -> tensor<32xf32>
  %hss = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<32x40xf32>) outs(%hs0 : tensor<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  %hn = linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%h, %hss : tensor<32x40xf32>, tensor<32xf32>) outs(%full : tensor<32x40xf32>) {
  ^bb0(%in: f32, %ss: f32, %out: f32):
    %mean = arith.divf %ss, %width : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %o = arith.mulf %in, %r : f32
    linalg.yield %o : f32
  } -> tensor<32x40xf32>

  // y = softmax(x) along the rows.
  %m0 = linalg.fill ins(%ninf : f32) outs(%rows : tensor<32xf32>) -> tensor<32xf32>
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<32x40xf32>) outs(%m0 : tensor<32xf32>) dimensions = [1]
  %s0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [#row, #total, #total], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<32x40xf32>, tensor<32xf32>) outs(%s0 : tensor<32xf32>) {
  ^bb0(%in: f32, %max: f32, %acc: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %a = arith.addf %acc, %e : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  %y = linalg.generic {indexing_maps = [#row, #total, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %s : tensor<32x40xf32>, tensor<32xf32>, tensor<32xf32>) outs(%full : tensor<32x40xf32>) {
  ^bb0(%in: f32, %max: f32, %sum: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %sum : f32
    linalg.yield %q : f32
  } -> tensor<32x40xf32>

  // n = x * g / sqrt(mean(x^2) + eps).
  %ss0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<32xf32>) -> tensor<32xf32>
  %ssq = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x40xf32>) outs(%ss0 : tensor<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  %n = linalg.generic {indexing_maps = [#row, #total, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ssq, %g : tensor<32x40xf32>, tensor<32xf32>, tensor<40xf32>) outs(%full : tensor<32x40xf32>) {
  ^bb0(%in: f32, %ss: f32, %gain: f32, %out: f32):
    %mean = arith.divf %ss, %width : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %t = arith.mulf %in, %r : f32
    %o = arith.mulf %t, %gain : f32
    linalg.yield %o : f32
  } -> tensor<32x40xf32>

  // dx = y * (dy - sum(y * dy)), the softmax's backward.
  %p0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<32xf32>) -> tensor<32xf32>
  %p = linalg.generic {indexing_maps = [#row, #row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%y, %dy : tensor<32x40xf32>, tensor<32x40xf32>) outs(%p0 : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %t = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %dx = linalg.generic {indexing_maps = [#row, #row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%y, %dy, %p : tensor<32x40xf32>, tensor<32x40xf32>, tensor<32xf32>) outs(%full : tensor<32x40xf32>) {
  ^bb0(%a: f32, %b: f32, %dot: f32, %out: f32):
    %d = arith.subf %b, %dot : f32
    %r = arith.mulf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<32x40xf32>

  // The softmax of rows sharded along their length: the max and the sum
  // are partial on each rank, all_reduced before the ops that read them.
  %wrows = tensor.empty() : tensor<6xf32>
  %wfull = tensor.empty() : tensor<6x64xf32>
  %wm0 = linalg.fill ins(%ninf : f32) outs(%wrows : tensor<6xf32>) -> tensor<6xf32>
  %wm = linalg.reduce { arith.maximumf } ins(%w : tensor<6x64xf32>) outs(%wm0 : tensor<6xf32>) dimensions = [1]
  %ws0 = linalg.fill ins(%zero : f32) outs(%wrows : tensor<6xf32>) -> tensor<6xf32>
  %ws = linalg.generic {indexing_maps = [#row, #total, #total], iterator_types = ["parallel", "reduction"]}
      ins(%w, %wm : tensor<6x64xf32>, tensor<6xf32>) outs(%ws0 : tensor<6xf32>) {
  ^bb0(%in: f32, %max: f32, %acc: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %a = arith.addf %acc, %e : f32
    linalg.yield %a : f32
  } -> tensor<6xf32>
  %wy = linalg.generic {indexing_maps = [#row, #total, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%w, %wm, %ws : tensor<6x64xf32>, tensor<6xf32>, tensor<6xf32>) outs(%wfull : tensor<6x64xf32>) {
  ^bb0(%in: f32, %max: f32, %sum: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %sum : f32
    linalg.yield %q : f32
  } -> tensor<6x64xf32>

  // Column sums: of each rank's columns (64 rows: 8 chunks of 8), and over
  // an unevenly sharded dim (18 rows a rank, 16 on the last: masked), then
  // all_reduced; and a max over the middle dim (48: 6 chunks of 8).
  %c0 = tensor.empty() : tensor<40xf32>
  %cf = linalg.fill ins(%zero : f32) outs(%c0 : tensor<40xf32>) -> tensor<40xf32>
  %csum = linalg.reduce { arith.addf } ins(%cols : tensor<64x40xf32>) outs(%cf : tensor<40xf32>) dimensions = [0]
  %t0 = tensor.empty() : tensor<12xf32>
  %tf = linalg.fill ins(%zero : f32) outs(%t0 : tensor<12xf32>) -> tensor<12xf32>
  %tsum = linalg.reduce { arith.addf } ins(%tall : tensor<70x12xf32>) outs(%tf : tensor<12xf32>) dimensions = [0]
  %k0 = tensor.empty() : tensor<4x8xf32>
  %kf = linalg.fill ins(%ninf : f32) outs(%k0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %kmax = linalg.reduce { arith.maximumf } ins(%cube : tensor<4x48x8xf32>) outs(%kf : tensor<4x8xf32>) dimensions = [1]

  // The sum of squares of x: each rank's 320 elements in 40 chunks of 8,
  // then all_reduced.
  %l0 = tensor.empty() : tensor<f32>
  %lf = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#row, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<32x40xf32>) outs(%lf : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<f32>

  // Lengths that no chunk count divides: a column sum over 97 rows (11
  // chunks of 9, the last of 7) and the sum of all 1164 elements (130
  // chunks of 9, the last of 3).
  %q0 = tensor.empty() : tensor<12xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%q0 : tensor<12xf32>) -> tensor<12xf32>
  %psum = linalg.reduce { arith.addf } ins(%prime : tensor<97x12xf32>) outs(%pf : tensor<12xf32>) dimensions = [0]
  %a0 = tensor.empty() : tensor<f32>
  %af = linalg.fill ins(%zero : f32) outs(%a0 : tensor<f32>) -> tensor<f32>
  %ptotal = linalg.reduce { arith.addf } ins(%prime : tensor<97x12xf32>) outs(%af : tensor<f32>) dimensions = [0, 1]
  return %y, %n, %dx, %wy, %csum, %tsum, %kmax, %loss, %h, %hn, %psum, %ptotal : tensor<32x40xf32>, tensor<32x40xf32>, tensor<32x40xf32>, tensor<6x64xf32>, tensor<40xf32>, tensor<12xf32>, tensor<4x8xf32>, tensor<f32>, tensor<32x40xf32>, tensor<32x40xf32>, tensor<12xf32>, tensor<f32>
}
