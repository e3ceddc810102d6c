// Row kernels and split reductions at sizes where the GPU lowering makes
// them (test/Execution/row-kernels.mlir is the small version, against the
// upstream oracle): a residual add, its RMS norm, a softmax and its
// backward over 1,024 rows of 1,024 per rank (fused: a block per row); a
// column sum of 4,096 rows into 256 outputs and a max over the middle dim
// of 8 x 4096 x 64 (split into chunks); a sum of squares of 16 x 16384 to
// a scalar (split rows). Here: the CPU artifact and the emulated CUDA one
// with --verify, the emulated one against the CPU one (--verify compares
// with a reference the same lowering compiled: that the emulated GPU
// kernels compute what the CPU's loops do, only this shows), and the GPU
// lowering's kernels; test/GPU runs it on a GPU.
// RUN: dt-run %s --seed 3 --verify --output-dir %t.cpu | FileCheck %s --check-prefix=VERIFY
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --verify --output-dir %t.emu | FileCheck %s --check-prefix=VERIFY
// RUN: %npy compare %t.emu %t.cpu 1e-4 1e-5 | FileCheck %s --check-prefix=SAME
// VERIFY: verify: PASS
// SAME: compare: PASS
// RUN: %if cuda-toolkit %{ dt-opt %s -dt-shard -dt-lower-to-cuda=format=isa -o %t.gpu.mlir %}
// RUN: %if cuda-toolkit %{ grep -c "gpu.launch_func" %t.gpu.mlir | FileCheck %s --check-prefix=KERNELS %}
// One row kernel for the residual, norm, softmax and softmax backward (the
// same 1,024 x 1,024 loops), two kernels for each split reduction (the
// fills folded in, the scalar's one-thread launch too).
// KERNELS: 7
dt.mesh @mesh = <["tp" = 2]>
#row = affine_map<(i, j) -> (i, j)>
#total = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<2048x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %dy: tensor<2048x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %cols: tensor<4096x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %cube: tensor<8x4096x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %w: tensor<16x16384xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<2048x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<2048x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<2048x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<8x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<f32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %eps = arith.constant 1.0e-5 : f32
  %width = arith.constant 1024.0 : f32
  %rows = tensor.empty() : tensor<2048xf32>
  %full = tensor.empty() : tensor<2048x1024xf32>

  // h = x + dy; n = h / sqrt(mean(h^2) + eps); y = softmax(n);
  // dx = y * (dy - sum(y * dy)).
  %h = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy : tensor<2048x1024xf32>, tensor<2048x1024xf32>) outs(%full : tensor<2048x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<2048x1024xf32>
  %ss0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<2048xf32>) -> tensor<2048xf32>
  %ss = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<2048x1024xf32>) outs(%ss0 : tensor<2048xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<2048xf32>
  %n = linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%h, %ss : tensor<2048x1024xf32>, tensor<2048xf32>) outs(%full : tensor<2048x1024xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %mean = arith.divf %s, %width : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %o = arith.mulf %in, %r : f32
    linalg.yield %o : f32
  } -> tensor<2048x1024xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%rows : tensor<2048xf32>) -> tensor<2048xf32>
  %m = linalg.reduce { arith.maximumf } ins(%n : tensor<2048x1024xf32>) outs(%m0 : tensor<2048xf32>) dimensions = [1]
  %e0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<2048xf32>) -> tensor<2048xf32>
  %e = linalg.generic {indexing_maps = [#row, #total, #total], iterator_types = ["parallel", "reduction"]}
      ins(%n, %m : tensor<2048x1024xf32>, tensor<2048xf32>) outs(%e0 : tensor<2048xf32>) {
  ^bb0(%in: f32, %max: f32, %acc: f32):
    %d = arith.subf %in, %max : f32
    %x2 = math.exp %d : f32
    %a = arith.addf %acc, %x2 : f32
    linalg.yield %a : f32
  } -> tensor<2048xf32>
  %y = linalg.generic {indexing_maps = [#row, #total, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%n, %m, %e : tensor<2048x1024xf32>, tensor<2048xf32>, tensor<2048xf32>) outs(%full : tensor<2048x1024xf32>) {
  ^bb0(%in: f32, %max: f32, %sum: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %x2 = math.exp %d : f32
    %q = arith.divf %x2, %sum : f32
    linalg.yield %q : f32
  } -> tensor<2048x1024xf32>
  %p0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<2048xf32>) -> tensor<2048xf32>
  %p = linalg.generic {indexing_maps = [#row, #row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%y, %dy : tensor<2048x1024xf32>, tensor<2048x1024xf32>) outs(%p0 : tensor<2048xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %t = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<2048xf32>
  %dx = linalg.generic {indexing_maps = [#row, #row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%y, %dy, %p : tensor<2048x1024xf32>, tensor<2048x1024xf32>, tensor<2048xf32>) outs(%full : tensor<2048x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %dot: f32, %out: f32):
    %d = arith.subf %b, %dot : f32
    %r = arith.mulf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<2048x1024xf32>

  // Split reductions.
  %c0 = tensor.empty() : tensor<256xf32>
  %cf = linalg.fill ins(%zero : f32) outs(%c0 : tensor<256xf32>) -> tensor<256xf32>
  %csum = linalg.reduce { arith.addf } ins(%cols : tensor<4096x256xf32>) outs(%cf : tensor<256xf32>) dimensions = [0]
  %k0 = tensor.empty() : tensor<8x64xf32>
  %kf = linalg.fill ins(%ninf : f32) outs(%k0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %kmax = linalg.reduce { arith.maximumf } ins(%cube : tensor<8x4096x64xf32>) outs(%kf : tensor<8x64xf32>) dimensions = [1]
  %l0 = tensor.empty() : tensor<f32>
  %lf = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#row, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%w : tensor<16x16384xf32>) outs(%lf : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %h, %y, %dx, %csum, %kmax, %loss : tensor<2048x1024xf32>, tensor<2048x1024xf32>, tensor<2048x1024xf32>, tensor<256xf32>, tensor<8x64xf32>, tensor<f32>
}
