// A language model's last steps, forward and backward, on dp=2 x tp=2: an
// embedding lookup (vocab-parallel table), the LM head, a softmax cross
// entropy written out (row max, sum of exponentials, the target's logit
// read with tensor.extract at a computed column of the tp-split logits),
// and the gradients of the head and of the table (the one-hot matmul
// that scatters rows back). Token ids come from f32 inputs, so the upstream
// oracle can feed them.
// RUN: dt-opt %s -dt-shard -o /dev/null
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s
// CHECK: dt-run: main on 4 ranks
// CHECK: result #0 (loss) 64 f32: {{.*}}: ok
// CHECK: result #1 (dwout) 64x4096 f32: {{.*}}: ok
// CHECK: result #2 (demb) 4096x64 f32: {{.*}}: ok
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
#tok = affine_map<(t, v) -> (t)>
#tv = affine_map<(t, v) -> (t, v)>
func.func @main(
    %xi: tensor<64xf32> {dt.name = "ids", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %xt: tensor<64xf32> {dt.name = "targets", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %emb: tensor<4096x64xf32> {dt.name = "emb", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
    %wout: tensor<64x4096xf32> {dt.name = "wout", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>})
    -> (tensor<64xf32> {dt.name = "loss", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
        tensor<64x4096xf32> {dt.name = "dwout", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
        tensor<4096x64xf32> {dt.name = "demb", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  // Token ids in [0, 4096) from any x: int(1000 x) mod 4096.
  %ie = tensor.empty() : tensor<64xi64>
  %ids = linalg.generic {indexing_maps = [affine_map<(t) -> (t)>, affine_map<(t) -> (t)>], iterator_types = ["parallel"]}
      ins(%xi : tensor<64xf32>) outs(%ie : tensor<64xi64>) {
    ^bb0(%r: f32, %o: i64):
      %scale = arith.constant 1000.0 : f32
      %vocab = arith.constant 4096 : i64
      %s = arith.mulf %r, %scale : f32
      %i = arith.fptosi %s : f32 to i64
      %m = arith.remsi %i, %vocab : i64
      %p = arith.addi %m, %vocab : i64
      %id = arith.remui %p, %vocab : i64
      linalg.yield %id : i64
  } -> tensor<64xi64>
  %tgt = linalg.generic {indexing_maps = [affine_map<(t) -> (t)>, affine_map<(t) -> (t)>], iterator_types = ["parallel"]}
      ins(%xt : tensor<64xf32>) outs(%ie : tensor<64xi64>) {
    ^bb0(%r: f32, %o: i64):
      %scale = arith.constant 1000.0 : f32
      %vocab = arith.constant 4096 : i64
      %s = arith.mulf %r, %scale : f32
      %i = arith.fptosi %s : f32 to i64
      %m = arith.remsi %i, %vocab : i64
      %p = arith.addi %m, %vocab : i64
      %id = arith.remui %p, %vocab : i64
      linalg.yield %id : i64
  } -> tensor<64xi64>
  // h[t, d] = emb[ids[t], d]
  %he = tensor.empty() : tensor<64x64xf32>
  %h = linalg.generic {indexing_maps = [#tok, #tv], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<64xi64>) outs(%he : tensor<64x64xf32>) {
    ^bb0(%id: i64, %o: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %emb[%row, %d] : tensor<4096x64xf32>
      linalg.yield %v : f32
  } -> tensor<64x64xf32>
  // logits = h @ wout
  %le = tensor.empty() : tensor<64x4096xf32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<64x4096xf32>) -> tensor<64x4096xf32>
  %logits = linalg.matmul ins(%h, %wout : tensor<64x64xf32>, tensor<64x4096xf32>) outs(%lz : tensor<64x4096xf32>) -> tensor<64x4096xf32>
  // softmax over the vocabulary, written out
  %re = tensor.empty() : tensor<64xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%re : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.generic {indexing_maps = [#tv, #tok], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<64x4096xf32>) outs(%mi : tensor<64xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.maximumf %a, %acc : f32
      linalg.yield %r : f32
  } -> tensor<64xf32>
  %ex = linalg.generic {indexing_maps = [#tv, #tok, #tv], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %m : tensor<64x4096xf32>, tensor<64xf32>) outs(%le : tensor<64x4096xf32>) {
    ^bb0(%a: f32, %mx: f32, %o: f32):
      %d = arith.subf %a, %mx : f32
      %x = math.exp %d : f32
      linalg.yield %x : f32
  } -> tensor<64x4096xf32>
  %si = linalg.fill ins(%zero : f32) outs(%re : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#tv, #tok], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<64x4096xf32>) outs(%si : tensor<64xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
  } -> tensor<64xf32>
  // the target's logit: logits[t, tgt[t]]
  %tl = linalg.generic {indexing_maps = [affine_map<(t) -> (t)>, affine_map<(t) -> (t)>], iterator_types = ["parallel"]}
      ins(%tgt : tensor<64xi64>) outs(%re : tensor<64xf32>) {
    ^bb0(%id: i64, %o: f32):
      %t = linalg.index 0 : index
      %col = arith.index_cast %id : i64 to index
      %v = tensor.extract %logits[%t, %col] : tensor<64x4096xf32>
      linalg.yield %v : f32
  } -> tensor<64xf32>
  %loss = linalg.generic {indexing_maps = [affine_map<(t) -> (t)>, affine_map<(t) -> (t)>, affine_map<(t) -> (t)>, affine_map<(t) -> (t)>], iterator_types = ["parallel"]}
      ins(%s, %m, %tl : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%re : tensor<64xf32>) {
    ^bb0(%sv: f32, %mv: f32, %tv: f32, %o: f32):
      %l = math.log %sv : f32
      %a = arith.addf %l, %mv : f32
      %r = arith.subf %a, %tv : f32
      linalg.yield %r : f32
  } -> tensor<64xf32>
  // dlogits = softmax - onehot(tgt)
  %dl = linalg.generic {indexing_maps = [#tv, #tok, #tok, #tv], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %s, %tgt : tensor<64x4096xf32>, tensor<64xf32>, tensor<64xi64>) outs(%le : tensor<64x4096xf32>) {
    ^bb0(%e: f32, %sv: f32, %id: i64, %o: f32):
      %p = arith.divf %e, %sv : f32
      %v = linalg.index 1 : index
      %vi = arith.index_cast %v : index to i64
      %hit = arith.cmpi eq, %id, %vi : i64
      %oh = arith.select %hit, %one, %zero : f32
      %g = arith.subf %p, %oh : f32
      linalg.yield %g : f32
  } -> tensor<64x4096xf32>
  // dwout = h^T dl
  %we = tensor.empty() : tensor<64x4096xf32>
  %wz = linalg.fill ins(%zero : f32) outs(%we : tensor<64x4096xf32>) -> tensor<64x4096xf32>
  %dwout = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%h, %dl : tensor<64x64xf32>, tensor<64x4096xf32>) outs(%wz : tensor<64x4096xf32>) -> tensor<64x4096xf32>
  // dh = dl wout^T
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dh = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dl, %wout : tensor<64x4096xf32>, tensor<64x4096xf32>) outs(%hz : tensor<64x64xf32>) -> tensor<64x64xf32>
  // demb = onehot(ids)^T dh
  %oh = linalg.generic {indexing_maps = [#tok, #tv], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<64xi64>) outs(%le : tensor<64x4096xf32>) {
    ^bb0(%id: i64, %o: f32):
      %v = linalg.index 1 : index
      %vi = arith.index_cast %v : index to i64
      %hit = arith.cmpi eq, %id, %vi : i64
      %r = arith.select %hit, %one, %zero : f32
      linalg.yield %r : f32
  } -> tensor<64x4096xf32>
  %ee = tensor.empty() : tensor<4096x64xf32>
  %ez = linalg.fill ins(%zero : f32) outs(%ee : tensor<4096x64xf32>) -> tensor<4096x64xf32>
  %demb = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%oh, %dh : tensor<64x4096xf32>, tensor<64x64xf32>) outs(%ez : tensor<4096x64xf32>) -> tensor<4096x64xf32>
  return %loss, %dwout, %demb : tensor<64xf32>, tensor<64x4096xf32>, tensor<4096x64xf32>
}
