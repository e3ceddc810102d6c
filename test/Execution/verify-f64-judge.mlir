// --verify's judge against f64. A float result beyond its dtype's
// tolerance passes when, against the program spelled in f64
// (dt-widen-to-f64) on the same inputs, it is as accurate as the
// single-device result: within 4 times its distance plus one unit roundoff
// of the narrowest float the program computes in (bf16 here, 2^-8) times the
// largest value.
//
// @update: bf16 activations times bf16 weights split by rows (the product a
// partial sum, each rank's part rounded to bf16 before the ranks add them),
// added to an f32 master copy: past f32's tolerance, as accurate as the
// reference. A .mlir given to dt-run is compiled again with the f64
// reference when a result needs the judge.
// RUN: dt-run %s --entry update --seed 1 --verify | FileCheck %s --check-prefix=UPDATE
// UPDATE: result #0 16x16 f32: {{.*}}: MISMATCH
// UPDATE: against the program in f64 (the same inputs):
// UPDATE-NEXT: result #0: max abs err [[GOT:.*]], the single-device result's [[REF:.*]] (allowed: 4 x that + 2^-8 x max|f64| {{.*}} = {{.*}}): as accurate as the reference
// UPDATE-NEXT: verify: PASS (1 result beyond tolerance, as accurate as the reference against f64)
// --strict: the tolerance alone decides.
// RUN: not dt-run %s --entry update --seed 1 --verify --strict | FileCheck %s --check-prefix=STRICT
// STRICT: result #0 16x16 f32: {{.*}}: MISMATCH
// STRICT-NOT: against the program in f64
// STRICT: verify: FAIL
// RUN: not dt-run %s --entry update --strict 2>&1 | FileCheck %s --check-prefix=STRICT-ALONE
// STRICT-ALONE: dt-run: --strict goes with --verify
// An artifact carries the f64 reference when compiled with
// --wide-reference (the CPU target, or the CUDA lowering emulated); without
// it, dt-run says so.
// RUN: dt-compile %s --wide-reference -o %t.wide.so
// RUN: dt-run %t.wide.so --entry update --seed 1 --verify | FileCheck %s --check-prefix=UPDATE
// RUN: dt-compile %s --target=cuda --emulate-gpu --wide-reference -o %t.emu.so
// RUN: dt-run %t.emu.so --entry update --seed 1 --verify | FileCheck %s --check-prefix=UPDATE
// RUN: dt-compile %s -o %t.so
// RUN: not dt-run %t.so --entry update --seed 1 --verify | FileCheck %s --check-prefix=NO-WIDE
// NO-WIDE: MISMATCH
// NO-WIDE-NEXT: elements beyond tolerance
// NO-WIDE-NEXT: (compiled with dt-compile --wide-reference, {{.*}}.so would have these results judged against the program in f64)
// NO-WIDE-NEXT: verify: FAIL
// RUN: not dt-compile %s --target=cuda --wide-reference -o %t.cuda.so 2>&1 | FileCheck %s --check-prefix=CUDA
// CUDA: dt-compile: --wide-reference: the f64 reference is CPU code, which a CUDA artifact's host side does not run; use it with --target=cpu or --emulate-gpu
// Under MPI, rank 0 judges (compiling the f64 reference alone).
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --entry update --seed 1 --verify | FileCheck %s --check-prefix=UPDATE %}
//
// @cancels: a bf16 matmul of [256, 1, 256, 1, -256, 0, -256, 0] by ones,
// its k split over four ranks, kept a partial sum (P(sum)) then made f32.
// The reference's library sums in f32 and gets 2, exactly; each rank's part
// is rounded to bf16 first (257 to 256), and the distributed sum is 0. That
// is less accurate than the reference, not rounding alone: verify fails,
// and says by how much. (A matmul's parts are reduced in bf16: in f32 they
// would double a gradient's bytes; dt-widen-partial-sums.)
// RUN: %npy pattern %t.x.npy 1,8 0=256 1=1 2=256 3=1 4=-256 5=0 6=-256 7=0
// RUN: not dt-run %s --entry cancels --input 0=%t.x.npy --verify | FileCheck %s --check-prefix=CANCELS
// CANCELS: result #0 scalar f32: max abs err 2, {{.*}}: MISMATCH
// CANCELS-NEXT: 1 of 1 elements beyond tolerance; the worst at []: got 0, expected 2
// CANCELS-NEXT: against the program in f64 (the same inputs):
// CANCELS-NEXT: result #0: max abs err 2, the single-device result's 0 (allowed: 4 x that + 2^-8 x max|f64| 2 = 0.00781): LESS ACCURATE
// CANCELS-NEXT: verify: FAIL
// With --reduce-matmuls-in-f32 each rank's product is made in f32 and the
// ranks reduce f32, rounded once: @cancels and @update match the
// reference exactly (threads, the emulated CUDA lowering, MPI); the CUDA
// target compiles it as cuBLASLt's mixed-precision calls.
// RUN: dt-compile %s --reduce-matmuls-in-f32 -o %t.f32.so
// RUN: dt-run %t.f32.so --entry cancels --input 0=%t.x.npy --verify | FileCheck %s --check-prefix=EXACT
// RUN: dt-run %t.f32.so --entry update --seed 1 --verify | FileCheck %s --check-prefix=EXACT
// RUN: %if mpi %{ %mpirun -np 4 dt-run %t.f32.so --backend=mpi --entry cancels --input 0=%t.x.npy --verify | FileCheck %s --check-prefix=EXACT %}
// RUN: dt-compile %s --target=cuda --emulate-gpu --reduce-matmuls-in-f32 -o %t.f32.emu.so
// RUN: dt-run %t.f32.emu.so --entry update --seed 1 --verify | FileCheck %s --check-prefix=EXACT
// RUN: dt-compile %s --target=cuda --reduce-matmuls-in-f32 --emit=llvm -o - | FileCheck %s --check-prefix=CUBLAS
// EXACT: result #0 {{.*}}: max abs err 0, max rel err 0 {{.*}}: ok
// EXACT-NEXT: verify: PASS
// CUBLAS: call {{.*}}@dt_rt_gpu_matmul_into_bf16_f32(
//
// @sum_cancels: the same values summed by a reduction: its parts are added
// up in f32 (dt-widen-partial-sums) and rounded once, as the reference's
// sum is: 2 exactly, on threads and under MPI.
// RUN: %npy pattern %t.y.npy 4,2 0=256 1=1 2=256 3=1 4=-256 5=0 6=-256 7=0
// RUN: dt-run %s --entry sum_cancels --input 0=%t.y.npy --verify | FileCheck %s --check-prefix=SUM
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --entry sum_cancels --input 0=%t.y.npy --verify | FileCheck %s --check-prefix=SUM %}
// SUM: result #0 scalar f32: max abs err 0, max rel err 0 {{.*}}: ok
// SUM-NEXT: verify: PASS

dt.mesh @mesh = <["tp" = 4]>

func.func @update(%x: tensor<16x256xbf16> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                  %w: tensor<256x16xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                  %m: tensor<16x16xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<16x16xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x16xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %g = linalg.matmul ins(%x, %w : tensor<16x256xbf16>, tensor<256x16xbf16>) outs(%z : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g, %m : tensor<16x16xbf16>, tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
    ^bb0(%a: bf16, %b: f32, %o: f32):
      %w2 = arith.extf %a : bf16 to f32
      %r = arith.addf %b, %w2 : f32
      linalg.yield %r : f32
  } -> tensor<16x16xf32>
  return %u : tensor<16x16xf32>
}

func.func @cancels(%x: tensor<1x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<f32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : bf16
  %ones = arith.constant dense<1.0> : tensor<8x1xbf16>
  %eb = tensor.empty() : tensor<1x8xbf16>
  %xb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x8xf32>) outs(%eb : tensor<1x8xbf16>) {
    ^bb0(%in: f32, %o: bf16):
      %v = arith.truncf %in : f32 to bf16
      linalg.yield %v : bf16
  } -> tensor<1x8xbf16>
  %e = tensor.empty() : tensor<1x1xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %p = linalg.matmul ins(%xb, %ones : tensor<1x8xbf16>, tensor<8x1xbf16>) outs(%z : tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %pp = dt.constrain %p to #dt.sharding<@mesh, [P(sum)]> : tensor<1x1xbf16>
  %e2 = tensor.empty() : tensor<f32>
  %f = linalg.generic {indexing_maps = [affine_map<() -> (0, 0)>, affine_map<() -> ()>], iterator_types = []}
      ins(%pp : tensor<1x1xbf16>) outs(%e2 : tensor<f32>) {
    ^bb0(%a: bf16, %o: f32):
      %w = arith.extf %a : bf16 to f32
      linalg.yield %w : f32
  } -> tensor<f32>
  return %f : tensor<f32>
}

func.func @sum_cancels(%x: tensor<4x2xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<f32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<bf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<bf16>) -> tensor<bf16>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<4x2xf32>) outs(%z : tensor<bf16>) {
    ^bb0(%in: f32, %acc: bf16):
      %v = arith.truncf %in : f32 to bf16
      %r = arith.addf %acc, %v : bf16
      linalg.yield %r : bf16
  } -> tensor<bf16>
  %sp = dt.constrain %s to #dt.sharding<@mesh, [P(sum)]> : tensor<bf16>
  %e2 = tensor.empty() : tensor<f32>
  %f = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sp : tensor<bf16>) outs(%e2 : tensor<f32>) {
    ^bb0(%a: bf16, %o: f32):
      %w = arith.extf %a : bf16 to f32
      linalg.yield %w : f32
  } -> tensor<f32>
  return %f : tensor<f32>
}
