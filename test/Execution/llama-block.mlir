// A Llama-style block on dp=2 x tp=2: RMSNorm, q/k/v projections, an
// interleaved rotary embedding (each element reads its pair partner at
// d xor 1 with tensor.extract, its angle from linalg.index), causal
// attention (the mask from linalg.index, 5-loop generics for the scores and
// the weighted values), the output projection, and a SwiGLU MLP. The batch
// splits over dp and the heads over tp: the rotary pairs stay within a head,
// so nothing moves before the softmax.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN-NOT: dt.all_
// PLAN: arith.maxnumf
// PLAN: dt.all_reduce {{.*}} ["tp"] sum
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s %}
// The rotary embedding's frequency needs d alone: made once a rank into a
// table of 8 on the CPU (dt-hoist-invariant-math), not for each of the 16
// positions of the 2 heads there; its cos and sin need (s, d) and repeat
// only over the 2 heads, too few to be worth a table.
// RUN: dt-compile --explain %s -o %t.explained.so 2>&1 | FileCheck %s --check-prefix=TABLE
// TABLE: remark: math.exp of loops (d3) of 4 made once into a table of 8 elements, not 32 times each
// TABLE-NOT: made once
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s
// CHECK: dt-run: main on 4 ranks
// CHECK: result #0 (y) 2x16x32 f32: {{.*}}: ok
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
#x3 = affine_map<(b, s, d) -> (b, s, d)>
#r3 = affine_map<(b, s, d) -> (b, s)>
#w3 = affine_map<(b, s, d) -> (d)>
#q4 = affine_map<(b, s, h, d) -> (b, s, h, d)>
func.func @rms(%x: tensor<2x16x32xf32>, %g: tensor<32xf32>) -> tensor<2x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<2x16xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%re : tensor<2x16xf32>) -> tensor<2x16xf32>
  %ss = linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x16x32xf32>) outs(%rz : tensor<2x16xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %q = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %q : f32
      linalg.yield %s : f32
  } -> tensor<2x16xf32>
  %e = tensor.empty() : tensor<2x16x32xf32>
  %y = linalg.generic {indexing_maps = [#x3, #r3, #w3, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %ss, %g : tensor<2x16x32xf32>, tensor<2x16xf32>, tensor<32xf32>) outs(%e : tensor<2x16x32xf32>) {
    ^bb0(%a: f32, %s: f32, %w: f32, %o: f32):
      %n = arith.constant 32.0 : f32
      %eps = arith.constant 1.0e-5 : f32
      %m = arith.divf %s, %n : f32
      %me = arith.addf %m, %eps : f32
      %r = math.rsqrt %me : f32
      %an = arith.mulf %a, %r : f32
      %o2 = arith.mulf %an, %w : f32
      linalg.yield %o2 : f32
  } -> tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}
func.func @proj(%x: tensor<2x16x32xf32>, %w: tensor<32x32xf32>) -> tensor<2x16x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %xf = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x16x32xf32> into tensor<32x32xf32>
  %e = tensor.empty() : tensor<32x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %p = linalg.matmul ins(%xf, %w : tensor<32x32xf32>, tensor<32x32xf32>) outs(%z : tensor<32x32xf32>) -> tensor<32x32xf32>
  %p4 = tensor.expand_shape %p [[0, 1], [2, 3]] output_shape [2, 16, 4, 8] : tensor<32x32xf32> into tensor<2x16x4x8xf32>
  return %p4 : tensor<2x16x4x8xf32>
}
// Interleaved rotary embedding: pairs (2i, 2i+1) rotate by s * 10000^(-2i/8).
func.func @rope(%q: tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32> {
  %e = tensor.empty() : tensor<2x16x4x8xf32>
  %r = linalg.generic {indexing_maps = [#q4, #q4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x16x4x8xf32>) outs(%e : tensor<2x16x4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %b = linalg.index 0 : index
      %s = linalg.index 1 : index
      %h = linalg.index 2 : index
      %d = linalg.index 3 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %pd = arith.xori %d, %c1 : index
      %other = tensor.extract %q[%b, %s, %h, %pd] : tensor<2x16x4x8xf32>
      %half = arith.divui %d, %c2 : index
      %odd = arith.remui %d, %c2 : index
      %hi = arith.index_cast %half : index to i32
      %hf = arith.sitofp %hi : i32 to f32
      %si = arith.index_cast %s : index to i32
      %sf = arith.sitofp %si : i32 to f32
      %k = arith.constant -2.302585 : f32
      %e1 = arith.mulf %hf, %k : f32
      %freq = math.exp %e1 : f32
      %ang = arith.mulf %sf, %freq : f32
      %cs = math.cos %ang : f32
      %sn = math.sin %ang : f32
      %ac = arith.mulf %a, %cs : f32
      %os = arith.mulf %other, %sn : f32
      %isodd = arith.cmpi eq, %odd, %c1 : index
      %plus = arith.addf %ac, %os : f32
      %minus = arith.subf %ac, %os : f32
      %v = arith.select %isodd, %plus, %minus : f32
      linalg.yield %v : f32
  } -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}
func.func @main(
    %x: tensor<2x16x32xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %g1: tensor<32xf32> {dt.name = "g1", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %wq: tensor<32x32xf32> {dt.name = "wq", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
    %wk: tensor<32x32xf32> {dt.name = "wk", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
    %wv: tensor<32x32xf32> {dt.name = "wv", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
    %wo: tensor<32x32xf32> {dt.name = "wo", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
    %g2: tensor<32xf32> {dt.name = "g2", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %w1: tensor<32x64xf32> {dt.name = "w1", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
    %w3: tensor<32x64xf32> {dt.name = "w3", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
    %w2: tensor<64x32xf32> {dt.name = "w2", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<2x16x32xf32> {dt.name = "y", dt.sharding = #dt.sharding<@mesh, [S(0), R]>}) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %n1 = func.call @rms(%x, %g1) : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %q0 = func.call @proj(%n1, %wq) : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x4x8xf32>
  %k0 = func.call @proj(%n1, %wk) : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x4x8xf32>
  %v = func.call @proj(%n1, %wv) : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x4x8xf32>
  %q = func.call @rope(%q0) : (tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32>
  %k = func.call @rope(%k0) : (tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32>
  // scores[b, h, i, j] = q[b, i, h, :] . k[b, j, h, :] / sqrt(8), causal
  %se = tensor.empty() : tensor<2x4x16x16xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>) outs(%sz : tensor<2x4x16x16xf32>) {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x16x16xf32>) outs(%se : tensor<2x4x16x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 2 : index
      %j = linalg.index 3 : index
      %scale = arith.constant 0.35355339 : f32
      %sc = arith.mulf %a, %scale : f32
      %future = arith.cmpi ugt, %j, %i : index
      %m = arith.select %future, %ninf, %sc : f32
      linalg.yield %m : f32
  } -> tensor<2x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x16x16xf32>) outs(%se : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %ae = tensor.empty() : tensor<2x16x4x8xf32>
  %az = linalg.fill ins(%zero : f32) outs(%ae : tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32>
  %att = linalg.generic {indexing_maps = [affine_map<(b, h, i, d, j) -> (b, h, i, j)>, affine_map<(b, h, i, d, j) -> (b, j, h, d)>, affine_map<(b, h, i, d, j) -> (b, i, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x16x4x8xf32>) outs(%az : tensor<2x16x4x8xf32>) {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %m = arith.mulf %a, %c : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x16x4x8xf32>
  %af = tensor.collapse_shape %att [[0, 1], [2, 3]] : tensor<2x16x4x8xf32> into tensor<32x32xf32>
  %oe = tensor.empty() : tensor<32x32xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%oe : tensor<32x32xf32>) -> tensor<32x32xf32>
  %o = linalg.matmul ins(%af, %wo : tensor<32x32xf32>, tensor<32x32xf32>) outs(%oz : tensor<32x32xf32>) -> tensor<32x32xf32>
  %o3 = tensor.expand_shape %o [[0, 1], [2]] output_shape [2, 16, 32] : tensor<32x32xf32> into tensor<2x16x32xf32>
  %xe = tensor.empty() : tensor<2x16x32xf32>
  %h = linalg.add ins(%x, %o3 : tensor<2x16x32xf32>, tensor<2x16x32xf32>) outs(%xe : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  // SwiGLU MLP
  %n2 = func.call @rms(%h, %g2) : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %nf = tensor.collapse_shape %n2 [[0, 1], [2]] : tensor<2x16x32xf32> into tensor<32x32xf32>
  %fe = tensor.empty() : tensor<32x64xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%fe : tensor<32x64xf32>) -> tensor<32x64xf32>
  %a = linalg.matmul ins(%nf, %w1 : tensor<32x32xf32>, tensor<32x64xf32>) outs(%fz : tensor<32x64xf32>) -> tensor<32x64xf32>
  %gt = linalg.matmul ins(%nf, %w3 : tensor<32x32xf32>, tensor<32x64xf32>) outs(%fz : tensor<32x64xf32>) -> tensor<32x64xf32>
  %sw = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %gt : tensor<32x64xf32>, tensor<32x64xf32>) outs(%fe : tensor<32x64xf32>) {
    ^bb0(%u: f32, %w: f32, %out: f32):
      %one = arith.constant 1.0 : f32
      %nu = arith.negf %u : f32
      %ex = math.exp %nu : f32
      %den = arith.addf %ex, %one : f32
      %si = arith.divf %u, %den : f32
      %r = arith.mulf %si, %w : f32
      linalg.yield %r : f32
  } -> tensor<32x64xf32>
  %f = linalg.matmul ins(%sw, %w2 : tensor<32x64xf32>, tensor<64x32xf32>) outs(%oz : tensor<32x32xf32>) -> tensor<32x32xf32>
  %f3 = tensor.expand_shape %f [[0, 1], [2]] output_shape [2, 16, 32] : tensor<32x32xf32> into tensor<2x16x32xf32>
  %y = linalg.add ins(%h, %f3 : tensor<2x16x32xf32>, tensor<2x16x32xf32>) outs(%xe : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}
