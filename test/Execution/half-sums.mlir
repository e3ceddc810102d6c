// Every 16-bit sum accumulates in f32 and rounds once (dt-widen-half-sums),
// as the library's matmuls do (half-matmul.mlir):
// - reductions, a matrix-vector product and a dot of 300 bf16 ones are 300,
//   replicated and split over 4 ranks alike (rounding the accumulator at
//   every bf16 step stalls at 256, since 256 + 1 rounds back to 256), and
//   3000 f16 ones are 3000 (f16 steps stall at 2048);
// - a bf16 matrix-vector product whose terms nearly cancel, split over 4
//   ranks, matches the single-device program (found by
//   scripts/fuzz-programs.py, seed 970129186: with bf16 steps the reference
//   rounded differently enough to fail --verify).
// RUN: dt-run %s --seed 0 --verify --output-dir %t | FileCheck %s
// RUN: %npy print %t/result0.npy | FileCheck %s --check-prefix=SUMS
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify --output-dir %t.emu | FileCheck %s
// RUN: %npy print %t.emu/result0.npy | FileCheck %s --check-prefix=SUMS
// RUN: dt-run %s --entry cancel --seed 186 --verify | FileCheck %s --check-prefix=CANCEL
// RUN: dt-run %t.emu.so --entry cancel --seed 186 --verify | FileCheck %s --check-prefix=CANCEL
// RUN: dt-run %s --entry uneven --seed 0 --verify --output-dir %t.uneven | FileCheck %s --check-prefix=UNEVEN
// RUN: %npy print %t.uneven/result0.npy | FileCheck %s --check-prefix=TOTAL
// RUN: %npy print %t.uneven/result1.npy | FileCheck %s --check-prefix=TOTAL
// RUN: dt-run %t.emu.so --entry uneven --seed 0 --verify --output-dir %t.emu.uneven | FileCheck %s --check-prefix=UNEVEN
// RUN: %npy print %t.emu.uneven/result0.npy | FileCheck %s --check-prefix=TOTAL
// RUN: %npy print %t.emu.uneven/result1.npy | FileCheck %s --check-prefix=TOTAL
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --entry uneven --seed 0 --verify --output-dir %t.mpi.uneven | FileCheck %s --check-prefix=UNEVEN %}
// RUN: %if mpi %{ %npy print %t.mpi.uneven/result1.npy | FileCheck %s --check-prefix=TOTAL %}
// UNEVEN: verify: PASS
// RUN: dt-run %s --entry partial_mean --verify --output-dir %t.mean | FileCheck %s --check-prefix=MEAN
// RUN: %npy print %t.mean/result0.npy | FileCheck %s --check-prefix=QUARTER
// RUN: dt-run %t.emu.so --entry partial_mean --verify --output-dir %t.emu.mean | FileCheck %s --check-prefix=MEAN
// RUN: %npy print %t.emu.mean/result0.npy | FileCheck %s --check-prefix=QUARTER
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --entry partial_mean --verify --output-dir %t.mpi.mean | FileCheck %s --check-prefix=MEAN %}
// RUN: %if mpi %{ %npy print %t.mpi.mean/result0.npy | FileCheck %s --check-prefix=QUARTER %}
// RUN: dt-run %s --entry returned_sum --verify --output-dir %t.rsum | FileCheck %s --check-prefix=RSUM
// RUN: %npy print %t.rsum/result0.npy > %t.rsum.values && %npy print %t.rsum/result1.npy >> %t.rsum.values && FileCheck %s --check-prefix=TWO-FOUR < %t.rsum.values
// RUN: dt-run %t.emu.so --entry returned_sum --verify --output-dir %t.emu.rsum | FileCheck %s --check-prefix=RSUM
// RUN: %npy print %t.emu.rsum/result0.npy > %t.emu.rsum.values && %npy print %t.emu.rsum/result1.npy >> %t.emu.rsum.values && FileCheck %s --check-prefix=TWO-FOUR < %t.emu.rsum.values
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --entry returned_sum --verify --output-dir %t.mpi.rsum | FileCheck %s --check-prefix=RSUM %}
// RUN: %if mpi %{ %npy print %t.mpi.rsum/result0.npy > %t.mpi.rsum.values && %npy print %t.mpi.rsum/result1.npy >> %t.mpi.rsum.values && FileCheck %s --check-prefix=TWO-FOUR < %t.mpi.rsum.values %}
// RUN: dt-run %s --entry returned_twice --verify --output-dir %t.twice | FileCheck %s --check-prefix=RSUM
// RUN: %npy print %t.twice/result0.npy > %t.twice.values && %npy print %t.twice/result1.npy >> %t.twice.values && FileCheck %s --check-prefix=TWO-TWO < %t.twice.values
// RUN: dt-run %t.emu.so --entry returned_twice --verify | FileCheck %s --check-prefix=RSUM
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --entry returned_twice --verify | FileCheck %s --check-prefix=RSUM %}
// TWO-TWO: {{^}}2.0{{$}}
// TWO-TWO-NEXT: {{^}}2.0{{$}}
// RUN: dt-run %s --entry accumulated --verify --output-dir %t.acc | FileCheck %s --check-prefix=RSUM
// RUN: %npy print %t.acc/result0.npy > %t.acc.values && %npy print %t.acc/result1.npy >> %t.acc.values && FileCheck %s --check-prefix=FOUR-FOUR < %t.acc.values
// RUN: dt-run %t.emu.so --entry accumulated --verify | FileCheck %s --check-prefix=RSUM
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --entry accumulated --verify | FileCheck %s --check-prefix=RSUM %}
// The same written with named ops: added into the carry in place (a generic
// whose init is the carry) and by linalg.add.
// RUN: dt-run %s --entry accumulated_named --verify --output-dir %t.accn | FileCheck %s --check-prefix=RSUM
// RUN: %npy print %t.accn/result0.npy > %t.accn.values && %npy print %t.accn/result1.npy >> %t.accn.values && FileCheck %s --check-prefix=FOUR-FOUR < %t.accn.values
// RUN: dt-run %t.emu.so --entry accumulated_named --verify | FileCheck %s --check-prefix=RSUM
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --entry accumulated_named --verify | FileCheck %s --check-prefix=RSUM %}
// FOUR-FOUR: {{^}}4.0{{$}}
// FOUR-FOUR-NEXT: {{^}}4.0{{$}}
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=ACC-PLAN
// ACC-PLAN-LABEL: func.func @accumulated
// ACC-PLAN: scf.for {{.*}} -> (tensor<f32>, tensor<f32>)
// ACC-PLAN: dt.all_reduce %{{.*}} on @mesh ["tp"] sum {dt.combined = 2 : i64} : tensor<2xf32>
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=RSUM-PLAN
// RSUM-PLAN-LABEL: func.func @returned_sum
// RSUM-PLAN: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
// RSUM-PLAN: dt.all_reduce %{{.*}} sum {{.*}}: tensor<{{[0-9]+}}xf32>
// RSUM-PLAN: return
// RSUM: result #0 scalar bf16: max abs err 0, max rel err 0 {{.*}}: ok
// RSUM: result #1 {{.*}}bf16: max abs err 0, max rel err 0 {{.*}}: ok
// RSUM: verify: PASS
// TWO-FOUR: {{^}}2.0{{$}}
// TWO-FOUR-NEXT: {{^}}4.0{{$}}
// RUN: dt-compile --target=cuda %s -o %t.cuda.so
// MEAN: result #0 scalar f32: max abs err 0, max rel err 0 {{.*}}: ok
// MEAN: verify: PASS
// QUARTER: {{^}}0.25{{$}}
// TOTAL: {{^}}16512.0{{$}}
// CHECK: dt-run: main on 4 ranks
// CHECK: result #0 (sums) 6 f32: {{.*}}: ok
// CHECK: verify: PASS
// The replicated and split reductions, the matvec (two rows), the dot, and
// the f16 sum.
// SUMS: {{^}}300.0{{$}}
// SUMS-NEXT: {{^}}300.0{{$}}
// SUMS-NEXT: {{^}}300.0{{$}}
// SUMS-NEXT: {{^}}300.0{{$}}
// SUMS-NEXT: {{^}}300.0{{$}}
// SUMS-NEXT: {{^}}3000.0{{$}}
// SUMS-NOT: {{.}}
// CANCEL: result #0 5 bf16: {{.*}}: ok
// CANCEL: verify: PASS
dt.mesh @mesh = <["tp" = 4]>

func.func @main() -> (tensor<6xf32> {dt.name = "sums", dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : bf16
  %ones = arith.constant dense<1.0> : tensor<1x300xbf16>
  %e = tensor.empty() : tensor<1xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<1xbf16>) -> tensor<1xbf16>
  %rep = dt.constrain %ones to #dt.sharding<@mesh, [R]> : tensor<1x300xbf16>
  %sum_rep = linalg.reduce { arith.addf } ins(%rep : tensor<1x300xbf16>) outs(%z : tensor<1xbf16>) dimensions = [1]
  // Split along the summed dim: 75 ones a rank, all-reduced.
  %split = dt.constrain %ones to #dt.sharding<@mesh, [S(1)]> : tensor<1x300xbf16>
  %sum_split = linalg.reduce { arith.addf } ins(%split : tensor<1x300xbf16>) outs(%z : tensor<1xbf16>) dimensions = [1]

  %a = arith.constant dense<1.0> : tensor<2x300xbf16>
  %v = arith.constant dense<1.0> : tensor<300xbf16>
  %me = tensor.empty() : tensor<2xbf16>
  %mz = linalg.fill ins(%zero : bf16) outs(%me : tensor<2xbf16>) -> tensor<2xbf16>
  %mv = linalg.matvec ins(%a, %v : tensor<2x300xbf16>, tensor<300xbf16>) outs(%mz : tensor<2xbf16>) -> tensor<2xbf16>
  %de = tensor.empty() : tensor<bf16>
  %dz = linalg.fill ins(%zero : bf16) outs(%de : tensor<bf16>) -> tensor<bf16>
  %vs = dt.constrain %v to #dt.sharding<@mesh, [S(0)]> : tensor<300xbf16>
  %dot = linalg.dot ins(%vs, %vs : tensor<300xbf16>, tensor<300xbf16>) outs(%dz : tensor<bf16>) -> tensor<bf16>
  %dot1 = tensor.expand_shape %dot [] output_shape [1] : tensor<bf16> into tensor<1xbf16>

  %hzero = arith.constant 0.0 : f16
  %hones = arith.constant dense<1.0> : tensor<3000xf16>
  %he = tensor.empty() : tensor<f16>
  %hz = linalg.fill ins(%hzero : f16) outs(%he : tensor<f16>) -> tensor<f16>
  %hsum = linalg.reduce { arith.addf } ins(%hones : tensor<3000xf16>) outs(%hz : tensor<f16>) dimensions = [0]
  %hsum1 = tensor.expand_shape %hsum [] output_shape [1] : tensor<f16> into tensor<1xf16>
  %hwide = arith.extf %hsum1 : tensor<1xf16> to tensor<1xf32>

  %all = tensor.concat dim(0) %sum_rep, %sum_split, %mv, %dot1 : (tensor<1xbf16>, tensor<1xbf16>, tensor<2xbf16>, tensor<1xbf16>) -> tensor<5xbf16>
  %wide = arith.extf %all : tensor<5xbf16> to tensor<5xf32>
  %out = tensor.concat dim(0) %wide, %hwide : (tensor<5xf32>, tensor<1xf32>) -> tensor<6xf32>
  return %out : tensor<6xf32>
}

// The fuzz program: a bf16 matrix whose elements are computed in a complex
// generic, times a vector split over 4 ranks.
func.func @cancel(
    %a0: tensor<5x8xbf16> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %a1: tensor<8xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<5xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %v1 = tensor.empty() : tensor<5x8xbf16>
  %v2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%a0 : tensor<5x8xbf16>) outs(%v1 : tensor<5x8xbf16>) {
    ^bb0(%x: bf16, %o: bf16):
      %xw = arith.extf %x : bf16 to f32
      %a = math.tanh %xw : f32
      %z = complex.create %a, %a : complex<f32>
      %one = complex.constant [1.0 : f32, 0.0 : f32] : complex<f32>
      %zz = complex.mul %z, %z : complex<f32>
      %ez = complex.exp %z : complex<f32>
      %cz = complex.conj %z : complex<f32>
      %n = complex.mul %cz, %z : complex<f32>
      %d = complex.add %n, %one : complex<f32>
      %q = complex.div %ez, %d : complex<f32>
      %w = complex.add %zz, %q : complex<f32>
      %r = complex.re %w : complex<f32>
      %rn = arith.truncf %r : f32 to bf16
      linalg.yield %rn : bf16
  } -> tensor<5x8xbf16>
  %v4 = tensor.empty() : tensor<5xbf16>
  %v5 = linalg.fill ins(%zero : bf16) outs(%v4 : tensor<5xbf16>) -> tensor<5xbf16>
  %v6 = linalg.matvec ins(%v2, %a1 : tensor<5x8xbf16>, tensor<8xbf16>) outs(%v5 : tensor<5xbf16>) -> tensor<5xbf16>
  %v7 = math.tanh %v6 : tensor<5xbf16>
  return %v7 : tensor<5xbf16>
}

// 1030x16 ones split over 4 ranks by rows, unevenly (258, 258, 258 and 256
// rows): each rank sums over its shard, whose padding rows the sum masks
// with a select. 16480 rounds to 16512 in bf16; accumulated in bf16, each
// rank's sum stalled at 256 and the partial result added up to 1024 (found
// by scripts/fuzz-programs.py --training-steps: a loss 5% short). Reduced
// (the plan gathers first), and returned as a partial sum that dt-run adds
// up.
func.func @uneven(%x: tensor<1030x16xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<bf16> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<bf16> {dt.sharding = #dt.sharding<@mesh, [P(sum)]>}) {
  %zero = arith.constant 0.0 : bf16
  // x * 0 + 1: ones, made on each rank from its shard.
  %zeros = arith.constant dense<0.0> : tensor<1030x16xbf16>
  %unit = arith.constant dense<1.0> : tensor<1030x16xbf16>
  %nothing = arith.mulf %x, %zeros : tensor<1030x16xbf16>
  %ones = arith.addf %nothing, %unit : tensor<1030x16xbf16>
  %e = tensor.empty() : tensor<bf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<bf16>) -> tensor<bf16>
  %sum = linalg.reduce { arith.addf } ins(%ones : tensor<1030x16xbf16>) outs(%z : tensor<bf16>) dimensions = [0, 1]
  %partial = linalg.reduce { arith.addf } ins(%ones : tensor<1030x16xbf16>) outs(%z : tensor<bf16>) dimensions = [0, 1]
  return %sum, %partial : tensor<bf16>, tensor<bf16>
}

// @partial_mean: a bf16 mean of 256, 1, 256, 1, -256, 0, -256, 0 split over
// four ranks, its division by 8 made before the ranks add their parts
// (the partial sum passes through it). Each part is 257 or -256; rounded
// to bf16 on each rank (257 -> 256) the mean would be 0. The parts are
// added up in f32 and rounded once (dt-widen-partial-sums): 2 / 8 = 0.25,
// as the single device's f32 sum gives.
func.func @partial_mean() -> (tensor<f32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : bf16
  %n = arith.constant 8.0 : bf16
  %c = arith.constant dense<[256.0, 1.0, 256.0, 1.0, -256.0, 0.0, -256.0, 0.0]> : tensor<8xbf16>
  %x = dt.constrain %c to #dt.sharding<@mesh, [S(0)]> : tensor<8xbf16>
  %e = tensor.empty() : tensor<bf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<bf16>) -> tensor<bf16>
  %s = linalg.reduce ins(%x : tensor<8xbf16>) outs(%z : tensor<bf16>) dimensions = [0]
    (%a: bf16, %b: bf16) { %r = arith.addf %a, %b : bf16
      linalg.yield %r : bf16 }
  %m = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%s : tensor<bf16>) outs(%e : tensor<bf16>) {
    ^bb0(%a: bf16, %o: bf16):
      %d = arith.divf %a, %n : bf16
      linalg.yield %d : bf16
  } -> tensor<bf16>
  %mp = dt.constrain %m to #dt.sharding<@mesh, [P(sum)]> : tensor<bf16>
  %e2 = tensor.empty() : tensor<f32>
  %f = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%mp : tensor<bf16>) outs(%e2 : tensor<f32>) {
    ^bb0(%a: bf16, %o: f32):
      %w = arith.extf %a : bf16 to f32
      linalg.yield %w : f32
  } -> tensor<f32>
  return %f : tensor<f32>
}

// The same parts summed into a bf16 result the function leaves free, after
// a reshape. Returned as P(sum), each rank's part was rounded to bf16
// before the caller added them: 0, where the single device gives 2 (verify:
// FAIL, LESS ACCURATE). A free 16-bit result is now summed in the program,
// and its parts are added in f32 through the reshape: #0, kept partial up to
// the reshape, by an all_reduce the widening follows through it; #1, twice
// the values (4; each part 514 rounds to 512), as the planner likes.
func.func @returned_sum() -> (tensor<bf16>, tensor<bf16>) {
  %zero = arith.constant 0.0 : bf16
  %c = arith.constant dense<[256.0, 1.0, 256.0, 1.0, -256.0, 0.0, -256.0, 0.0]> : tensor<8xbf16>
  %x = dt.constrain %c to #dt.sharding<@mesh, [S(0)]> : tensor<8xbf16>
  %e = tensor.empty() : tensor<1xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<1xbf16>) -> tensor<1xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (0)>], iterator_types = ["reduction"]}
      ins(%x : tensor<8xbf16>) outs(%z : tensor<1xbf16>) {
    ^bb0(%a: bf16, %acc: bf16):
      %r = arith.addf %a, %acc : bf16
      linalg.yield %r : bf16
  } -> tensor<1xbf16>
  %sp = dt.constrain %s to #dt.sharding<@mesh, [P(sum)]> : tensor<1xbf16>
  %l = tensor.collapse_shape %sp [] : tensor<1xbf16> into tensor<bf16>
  %c2 = arith.constant dense<[512.0, 2.0, 512.0, 2.0, -512.0, 0.0, -512.0, 0.0]> : tensor<8xbf16>
  %x2 = dt.constrain %c2 to #dt.sharding<@mesh, [S(0)]> : tensor<8xbf16>
  %s2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (0)>], iterator_types = ["reduction"]}
      ins(%x2 : tensor<8xbf16>) outs(%z : tensor<1xbf16>) {
    ^bb0(%a: bf16, %acc: bf16):
      %r = arith.addf %a, %acc : bf16
      linalg.yield %r : bf16
  } -> tensor<1xbf16>
  %l2 = tensor.collapse_shape %s2 [] : tensor<1xbf16> into tensor<bf16>
  return %l, %l2 : tensor<bf16>, tensor<bf16>
}

// The same sum twice, one kept partial up to a reshape: CSE makes them one
// sum that two all_reduces read, each adding the parts in f32 (a sum read
// more than once was left in bf16: 0 for both).
func.func @returned_twice() -> (tensor<bf16>, tensor<1xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %c = arith.constant dense<[256.0, 1.0, 256.0, 1.0, -256.0, 0.0, -256.0, 0.0]> : tensor<8xbf16>
  %x = dt.constrain %c to #dt.sharding<@mesh, [S(0)]> : tensor<8xbf16>
  %e = tensor.empty() : tensor<1xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<1xbf16>) -> tensor<1xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (0)>], iterator_types = ["reduction"]}
      ins(%x : tensor<8xbf16>) outs(%z : tensor<1xbf16>) {
    ^bb0(%a: bf16, %acc: bf16):
      %r = arith.addf %a, %acc : bf16
      linalg.yield %r : bf16
  } -> tensor<1xbf16>
  %sp = dt.constrain %s to #dt.sharding<@mesh, [P(sum)]> : tensor<1xbf16>
  %l = tensor.collapse_shape %sp [] : tensor<1xbf16> into tensor<bf16>
  %s2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (0)>], iterator_types = ["reduction"]}
      ins(%x : tensor<8xbf16>) outs(%z : tensor<1xbf16>) {
    ^bb0(%a: bf16, %acc: bf16):
      %r = arith.addf %a, %acc : bf16
      linalg.yield %r : bf16
  } -> tensor<1xbf16>
  %s2p = dt.constrain %s2 to #dt.sharding<@mesh, [P(sum)]> : tensor<1xbf16>
  return %l, %s2p : tensor<bf16>, tensor<1xbf16>
}

// Sums carried by a loop (a bias gradient accumulated over two
// micro-batches, their rows split over the ranks), one accumulated into the
// carry, one added to it: each rank's part of a micro-batch is 257, 257,
// -256, -256, the sums 2 and 4. The loop carries them in f32, one
// all_reduce adds both and they are rounded once after it; carried in bf16, each rank's running
// part rounded 257 to 256 and 513 to 512 and the ranks added up to 0.
func.func @accumulated() -> (tensor<bf16>, tensor<bf16>) {
  %zero = arith.constant 0.0 : bf16
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c = arith.constant dense<[[256.0, 1.0, 256.0, 1.0, -128.0, -128.0, -128.0, -128.0],
                             [256.0, 1.0, 256.0, 1.0, -128.0, -128.0, -128.0, -128.0]]> : tensor<2x8xbf16>
  %x = dt.constrain %c to #dt.sharding<@mesh, [S(1)]> : tensor<2x8xbf16>
  %e = tensor.empty() : tensor<bf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<bf16>) -> tensor<bf16>
  %g:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z, %acc2 = %z) -> (tensor<bf16>, tensor<bf16>) {
    %xi = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<2x8xbf16> to tensor<8xbf16>
    %s = linalg.reduce ins(%xi : tensor<8xbf16>) outs(%acc : tensor<bf16>) dimensions = [0]
      (%in: bf16, %a: bf16) { %r = arith.addf %in, %a : bf16
        linalg.yield %r : bf16 }
    %sp = dt.constrain %s to #dt.sharding<@mesh, [P(sum)]> : tensor<bf16>
    %t = linalg.reduce ins(%xi : tensor<8xbf16>) outs(%z : tensor<bf16>) dimensions = [0]
      (%in: bf16, %a: bf16) { %r = arith.addf %in, %a : bf16
        linalg.yield %r : bf16 }
    %n = arith.addf %acc2, %t : tensor<bf16>
    %np = dt.constrain %n to #dt.sharding<@mesh, [P(sum)]> : tensor<bf16>
    scf.yield %sp, %np : tensor<bf16>, tensor<bf16>
  }
  return %g#0, %g#1 : tensor<bf16>, tensor<bf16>
}

func.func @accumulated_named() -> (tensor<bf16>, tensor<bf16>) {
  %zero = arith.constant 0.0 : bf16
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c = arith.constant dense<[[256.0, 1.0, 256.0, 1.0, -128.0, -128.0, -128.0, -128.0],
                             [256.0, 1.0, 256.0, 1.0, -128.0, -128.0, -128.0, -128.0]]> : tensor<2x8xbf16>
  %x = dt.constrain %c to #dt.sharding<@mesh, [S(1)]> : tensor<2x8xbf16>
  %e = tensor.empty() : tensor<bf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<bf16>) -> tensor<bf16>
  %g:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z, %acc2 = %z) -> (tensor<bf16>, tensor<bf16>) {
    %xi = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<2x8xbf16> to tensor<8xbf16>
    %t = linalg.reduce ins(%xi : tensor<8xbf16>) outs(%z : tensor<bf16>) dimensions = [0]
      (%in: bf16, %a: bf16) { %r = arith.addf %in, %a : bf16
        linalg.yield %r : bf16 }
    %n = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
        ins(%t : tensor<bf16>) outs(%acc : tensor<bf16>) {
      ^bb0(%in: bf16, %out: bf16):
        %s = arith.addf %out, %in : bf16
        linalg.yield %s : bf16
    } -> tensor<bf16>
    %np = dt.constrain %n to #dt.sharding<@mesh, [P(sum)]> : tensor<bf16>
    %t2 = linalg.reduce ins(%xi : tensor<8xbf16>) outs(%z : tensor<bf16>) dimensions = [0]
      (%in: bf16, %a: bf16) { %r = arith.addf %a, %in : bf16
        linalg.yield %r : bf16 }
    %m = linalg.add ins(%acc2, %t2 : tensor<bf16>, tensor<bf16>) outs(%e : tensor<bf16>) -> tensor<bf16>
    %mp = dt.constrain %m to #dt.sharding<@mesh, [P(sum)]> : tensor<bf16>
    scf.yield %np, %mp : tensor<bf16>, tensor<bf16>
  }
  return %g#0, %g#1 : tensor<bf16>, tensor<bf16>
}
