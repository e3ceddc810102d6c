// RUN: dt-opt %s -split-input-file -dt-combine-collectives -verify-diagnostics | FileCheck %s
// RUN: dt-opt %s -split-input-file -dt-combine-collectives=overlap=true -verify-diagnostics | FileCheck %s --check-prefix=OVERLAP
// With explain, a remark per call of several collectives (its time against
// theirs apart) and per collective kept out of the call open before it, with
// the reason: windows that do not overlap, an input that is that call's
// result, or a call that would cost more. (The run fails: @global's error.)
// RUN: not dt-opt %s -split-input-file -dt-combine-collectives=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: combine-collectives.mlir:37:9: remark: 2 x all_reduce on ["dp"] in one call: 6.1 us against 12.0 us apart (1 made in its buffer)
// EXPLAIN: combine-collectives.mlir:103:8: remark: all_reduce on ["dp"] not in one call with the one at combine-collectives.mlir:101:8: that call's result is read before this one's input is ready
// EXPLAIN: combine-collectives.mlir:118:8: remark: all_reduce on ["dp"] not in one call with the one at combine-collectives.mlir:117:8: it reads that call's result
// EXPLAIN: combine-collectives.mlir:168:9: remark: all_reduce on ["dp"] not in one call with the one at combine-collectives.mlir:167:9: one call would take {{[0-9.]+}} us against {{[0-9.]+}} us apart
// EXPLAIN: combine-collectives.mlir:258:9: remark: 2 x all_gather on ["dp"] in one call: 9.0 us against 18.0 us apart
// EXPLAIN: combine-collectives.mlir:286:9: remark: 2 x all_reduce on ["dp"] in one call: 99.2 us against 105.2 us apart (2 made in its buffer)
// EXPLAIN: combine-collectives.mlir:297:9: remark: all_reduce on ["dp"] not in one call with the one at combine-collectives.mlir:296:9: one call would take 116.0 us against 105.2 us apart

// Two gradients' all_reduces, each latency-bound (16 KiB and 128 B on
// dp = 2), become one, right after the last input is made (later than
// where the first of them was): the weight's
// gradient flattened, the bias's, one buffer, one all_reduce, each result
// sliced back. The loss's scalar, reduced by max, is another kind: alone.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @gradients
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32>, %[[B:.*]]: tensor<32xf32>, %[[L:.*]]: tensor<f32>)
// CHECK: %[[GW:.*]] = math.exp %[[X]]
// CHECK-NEXT: %[[FW:.*]] = tensor.collapse_shape %[[GW]] {{\[\[}}0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
// CHECK-NEXT: %[[CAT:.*]] = tensor.concat dim(0) %[[B]], %[[FW]] : (tensor<32xf32>, tensor<4096xf32>) -> tensor<4128xf32>
// CHECK-NEXT: %[[R:.*]] = dt.all_reduce %[[CAT]] on @mesh ["dp"] sum {dt.combined = 2 : i64} : tensor<4128xf32> -> tensor<4128xf32>
// CHECK-NEXT: %[[SB:.*]] = tensor.extract_slice %[[R]][0] [32] [1] : tensor<4128xf32> to tensor<32xf32>
// CHECK-NEXT: %[[SW:.*]] = tensor.extract_slice %[[R]][32] [4096] [1] : tensor<4128xf32> to tensor<4096xf32>
// CHECK-NEXT: %[[W:.*]] = tensor.expand_shape %[[SW]] {{\[\[}}0, 1]] output_shape [64, 64] : tensor<4096xf32> into tensor<64x64xf32>
// CHECK-NOT: dt.all_reduce {{.*}} sum
// CHECK: %[[M:.*]] = dt.all_reduce %[[L]] on @mesh ["dp"] max : tensor<f32> -> tensor<f32>
// CHECK-NOT: dt.all_reduce
// CHECK: return %[[W]], %[[SB]], %[[M]]
func.func @gradients(%x: tensor<64x64xf32>, %b: tensor<32xf32>, %l: tensor<f32>)
    -> (tensor<64x64xf32>, tensor<32xf32>, tensor<f32>) {
  %rb = dt.all_reduce %b on @mesh ["dp"] sum : tensor<32xf32> -> tensor<32xf32>
  %gw = math.exp %x : tensor<64x64xf32>
  %rw = dt.all_reduce %gw on @mesh ["dp"] sum : tensor<64x64xf32> -> tensor<64x64xf32>
  %rl = dt.all_reduce %l on @mesh ["dp"] max : tensor<f32> -> tensor<f32>
  return %rw, %rb, %rl : tensor<64x64xf32>, tensor<32xf32>, tensor<f32>
}

// -----

// A scalar joins as one element. Other groups, reductions and element types
// are other kinds: each of those stays alone.
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
// CHECK-LABEL: func.func @kinds
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[S:.*]]: tensor<f32>, %[[T:.*]]: tensor<8xf32>, %[[H:.*]]: tensor<8xf16>, %[[V:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[FS:.*]] = tensor.expand_shape %[[S]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK-NEXT: %[[CAT:.*]] = tensor.concat dim(0) %[[A]], %[[FS]] : (tensor<8xf32>, tensor<1xf32>) -> tensor<9xf32>
// CHECK-NEXT: %[[R:.*]] = dt.all_reduce %[[CAT]] on @mesh ["dp"] sum {dt.combined = 2 : i64} : tensor<9xf32> -> tensor<9xf32>
// CHECK-NEXT: %[[RA:.*]] = tensor.extract_slice %[[R]][0] [8] [1]
// CHECK-NEXT: %[[PS:.*]] = tensor.extract_slice %[[R]][8] [1] [1] : tensor<9xf32> to tensor<1xf32>
// CHECK-NEXT: %[[RS:.*]] = tensor.collapse_shape %[[PS]] [] : tensor<1xf32> into tensor<f32>
// CHECK-DAG: dt.all_reduce %[[T]] on @mesh ["tp"] sum : tensor<8xf32>
// CHECK-DAG: dt.all_reduce %[[H]] on @mesh ["dp"] sum : tensor<8xf16>
// CHECK-DAG: dt.all_reduce %[[V]] on @mesh ["dp"] avg : tensor<8xf32>
// CHECK: return %[[RA]], %[[RS]]
func.func @kinds(%a: tensor<8xf32>, %s: tensor<f32>, %t: tensor<8xf32>, %h: tensor<8xf16>, %v: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<f32>, tensor<8xf32>, tensor<8xf16>, tensor<8xf32>) {
  %ra = dt.all_reduce %a on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  %rt = dt.all_reduce %t on @mesh ["tp"] sum : tensor<8xf32> -> tensor<8xf32>
  %rh = dt.all_reduce %h on @mesh ["dp"] sum : tensor<8xf16> -> tensor<8xf16>
  %rv = dt.all_reduce %v on @mesh ["dp"] avg : tensor<8xf32> -> tensor<8xf32>
  %rs = dt.all_reduce %s on @mesh ["dp"] sum : tensor<f32> -> tensor<f32>
  return %ra, %rs, %rt, %rh, %rv : tensor<8xf32>, tensor<f32>, tensor<8xf32>, tensor<8xf16>, tensor<8xf32>
}

// -----

// The input made in the block comes first, the one from outside second: the
// combined call still waits for the first (once, it went to the top of the
// block, before its input existed).
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @ready_in_any_order
// CHECK: %[[E:.*]] = math.exp
// CHECK-NEXT: %[[CAT:.*]] = tensor.concat dim(0) %[[E]], %{{.*}}
// CHECK-NEXT: dt.all_reduce %[[CAT]]
// CHECK: math.sqrt
func.func @ready_in_any_order(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = math.exp %a : tensor<8xf32>
  %re = dt.all_reduce %e on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  %rb = dt.all_reduce %b on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  %s = math.sqrt %re : tensor<8xf32>
  return %s, %rb : tensor<8xf32>, tensor<8xf32>
}

// -----

// The first result is read before the second input is ready: no place
// suits both, each stays where it was.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @disjoint_windows
// CHECK: dt.all_reduce %{{.*}} : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: math.exp
// CHECK-NEXT: dt.all_reduce %{{.*}} : tensor<8xf32> -> tensor<8xf32>
// CHECK-NOT: tensor.concat
func.func @disjoint_windows(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = dt.all_reduce %a on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  %e = math.exp %r : tensor<8xf32>
  %s = dt.all_reduce %e on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// An all_reduce of another's result (same group and kind) cannot run with
// it: each stays.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @chained
// CHECK: %[[R:.*]] = dt.all_reduce %{{.*}} : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: dt.all_reduce %[[R]] on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
// CHECK-NOT: tensor.concat
func.func @chained(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = dt.all_reduce %a on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  %s = dt.all_reduce %r on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// Two 1 MiB gradients on dp = 2, the second made by a 1 GFLOP matmul after
// the first is ready. On the CPU target a collective holds its rank until
// it ends, so one call beats two (6 us of latency saved, under 2 us of
// copies).
// Where collectives run beside compute (CUDA, `overlap`), the first one's
// all_reduce (9 us) hides behind the matmul (18 us); combining would make it
// wait for the second gradient: they stay apart there.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @overlapped
// CHECK: linalg.matmul
// CHECK: dt.all_reduce %{{.*}} {dt.combined = 2 : i64} : tensor<524288xf32>
// OVERLAP-LABEL: func.func @overlapped
// OVERLAP: dt.all_reduce %{{.*}} : tensor<512x512xf32> -> tensor<512x512xf32>
// OVERLAP: linalg.matmul
// OVERLAP: dt.all_reduce %{{.*}} : tensor<512x512xf32> -> tensor<512x512xf32>
// OVERLAP-NOT: dt.combined
// OVERLAP: return
func.func @overlapped(%g: tensor<512x512xf32>, %x: tensor<512x2048xf32>, %y: tensor<2048x512xf32>)
    -> (tensor<512x512xf32>, tensor<512x512xf32>) {
  %rg = dt.all_reduce %g on @mesh ["dp"] sum : tensor<512x512xf32> -> tensor<512x512xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %m = linalg.matmul ins(%x, %y : tensor<512x2048xf32>, tensor<2048x512xf32>) outs(%z : tensor<512x512xf32>) -> tensor<512x512xf32>
  %rm = dt.all_reduce %m on @mesh ["dp"] sum : tensor<512x512xf32> -> tensor<512x512xf32>
  return %rg, %rm : tensor<512x512xf32>, tensor<512x512xf32>
}

// -----

// 16 MiB gradients: copying one into a shared buffer (8 us at the default
// device's memory bandwidth, read and write), and its result out into the
// returned one, costs more than the latency it saves (6 us: 2 message
// steps of 3 us on dp = 2), so they stay apart;
// the two small ones combine, where the first of them was.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @large_stay_apart
// CHECK: dt.all_reduce %{{.*}} : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
// CHECK: dt.all_reduce %{{.*}} : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
// CHECK: dt.all_reduce %{{.*}} {dt.combined = 2 : i64} : tensor<16xf32> -> tensor<16xf32>
// CHECK-NOT: dt.all_reduce
func.func @large_stay_apart(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>)
    -> (tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<8xf32>, tensor<8xf32>) {
  %ra = dt.all_reduce %a on @mesh ["dp"] sum : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %rb = dt.all_reduce %b on @mesh ["dp"] sum : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %rc = dt.all_reduce %c on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  %rd = dt.all_reduce %d on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  return %ra, %rb, %rc, %rd : tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Within a loop body the gradients of one micro-batch combine; the
// all_reduce after the loop is in another block and stays alone.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @in_a_loop
// CHECK: scf.for
// CHECK-NEXT: tensor.concat
// CHECK-NEXT: dt.all_reduce %{{.*}} {dt.combined = 2 : i64} : tensor<16xf32> -> tensor<16xf32>
// CHECK-NOT: dt.all_reduce
// CHECK: scf.yield
// CHECK: dt.all_reduce %{{.*}} : tensor<8xf32> -> tensor<8xf32>
func.func @in_a_loop(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %a, %y = %b) -> (tensor<8xf32>, tensor<8xf32>) {
    %rx = dt.all_reduce %x on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
    %ry = dt.all_reduce %y on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
    scf.yield %rx, %ry : tensor<8xf32>, tensor<8xf32>
  }
  %s = dt.all_reduce %r#0 on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  return %s, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Predicates are widened later (dt-widen-predicate-collectives): left as
// they are.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @predicates
// CHECK-COUNT-2: dt.all_reduce %{{.*}} : tensor<8xi1> -> tensor<8xi1>
func.func @predicates(%a: tensor<8xi1>, %b: tensor<8xi1>) -> (tensor<8xi1>, tensor<8xi1>) {
  %ra = dt.all_reduce %a on @mesh ["dp"] max : tensor<8xi1> -> tensor<8xi1>
  %rb = dt.all_reduce %b on @mesh ["dp"] max : tensor<8xi1> -> tensor<8xi1>
  return %ra, %rb : tensor<8xi1>, tensor<8xi1>
}

// -----

dt.mesh @mesh = <["dp" = 2]>
func.func @global(%a: tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [R]>> {
  // expected-error @+1 {{'dt.all_reduce' op is still in global form: run dt-partition before dt-combine-collectives}}
  %r = dt.all_reduce %a on @mesh ["dp"] sum : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  return %r : tensor<8xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// FSDP's buckets: the weights' gathers (dim 0) are one gather of their
// pieces back to back, each weight a column block of its [members x total]
// result; the gradients' reduce_scatters (dim 0) are one reduce_scatter of
// their rows side by side. A gather along dim 1 of a tensor with more than
// one row does not lay its pieces out one after another: left alone; so is a
// reduce_scatter whose dim the group does not divide.
dt.mesh @mesh = <["dp" = 4]>
// CHECK-LABEL: func.func @fsdp
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<1x4xf32>, %[[C:.*]]: tensor<2x3xf32>, %[[GA:.*]]: tensor<8x8xf32>, %[[GB:.*]]: tensor<4x4xf32>, %[[GC:.*]]: tensor<6x2xf32>)
// CHECK-DAG: %[[FA:.*]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1]] : tensor<2x8xf32> into tensor<16xf32>
// CHECK-DAG: %[[FB:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: %[[CAT:.*]] = tensor.concat dim(0) %[[FA]], %[[FB]] : (tensor<16xf32>, tensor<4xf32>) -> tensor<20xf32>
// CHECK-NEXT: %[[G:.*]] = dt.all_gather %[[CAT]] on @mesh ["dp"] dim 0 {dt.combined = 2 : i64} : tensor<20xf32> -> tensor<80xf32>
// CHECK-NEXT: %[[ROWS:.*]] = tensor.expand_shape %[[G]] {{\[\[}}0, 1]] output_shape [4, 20] : tensor<80xf32> into tensor<4x20xf32>
// CHECK-NEXT: %[[COLA:.*]] = tensor.extract_slice %[[ROWS]][0, 0] [4, 16] [1, 1] : tensor<4x20xf32> to tensor<4x16xf32>
// CHECK-NEXT: %[[FLATA:.*]] = tensor.collapse_shape %[[COLA]] {{\[\[}}0, 1]] : tensor<4x16xf32> into tensor<64xf32>
// CHECK-NEXT: %[[WA:.*]] = tensor.expand_shape %[[FLATA]] {{\[\[}}0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
// CHECK-NEXT: %[[COLB:.*]] = tensor.extract_slice %[[ROWS]][0, 16] [4, 4] [1, 1] : tensor<4x20xf32> to tensor<4x4xf32>
// CHECK-NEXT: %[[FLATB:.*]] = tensor.collapse_shape %[[COLB]] {{\[\[}}0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// CHECK-NEXT: %[[WB:.*]] = tensor.expand_shape %[[FLATB]] {{\[\[}}0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
// CHECK: %[[WC:.*]] = dt.all_gather %[[C]] on @mesh ["dp"] dim 1 : tensor<2x3xf32> -> tensor<2x12xf32>
// CHECK: %[[RA:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
// CHECK: %[[RB:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
// CHECK-NEXT: %[[SIDE:.*]] = tensor.concat dim(1) %[[RA]], %[[RB]] : (tensor<4x16xf32>, tensor<4x4xf32>) -> tensor<4x20xf32>
// CHECK-NEXT: %[[FLAT:.*]] = tensor.collapse_shape %[[SIDE]] {{\[\[}}0, 1]] : tensor<4x20xf32> into tensor<80xf32>
// CHECK-NEXT: %[[S:.*]] = dt.reduce_scatter %[[FLAT]] on @mesh ["dp"] sum dim 0 {dt.combined = 2 : i64} : tensor<80xf32> -> tensor<20xf32>
// CHECK-NEXT: %[[SA:.*]] = tensor.extract_slice %[[S]][0] [16] [1] : tensor<20xf32> to tensor<16xf32>
// CHECK-NEXT: %[[GRADA:.*]] = tensor.expand_shape %[[SA]] {{\[\[}}0, 1]] output_shape [2, 8] : tensor<16xf32> into tensor<2x8xf32>
// CHECK-NEXT: %[[SB:.*]] = tensor.extract_slice %[[S]][16] [4] [1] : tensor<20xf32> to tensor<4xf32>
// CHECK-NEXT: %[[GRADB:.*]] = tensor.expand_shape %[[SB]] {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
// CHECK: %[[GRADC:.*]] = dt.reduce_scatter %[[GC]] on @mesh ["dp"] sum dim 0 : tensor<6x2xf32> -> tensor<2x2xf32>
// CHECK: return %[[WA]], %[[WB]], %[[WC]], %[[GRADA]], %[[GRADB]], %[[GRADC]]
func.func @fsdp(%a: tensor<2x8xf32>, %b: tensor<1x4xf32>, %c: tensor<2x3xf32>,
                %ga: tensor<8x8xf32>, %gb: tensor<4x4xf32>, %gc: tensor<6x2xf32>)
    -> (tensor<8x8xf32>, tensor<4x4xf32>, tensor<2x12xf32>, tensor<2x8xf32>, tensor<1x4xf32>, tensor<2x2xf32>) {
  %wa = dt.all_gather %a on @mesh ["dp"] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  %wb = dt.all_gather %b on @mesh ["dp"] dim 0 : tensor<1x4xf32> -> tensor<4x4xf32>
  %wc = dt.all_gather %c on @mesh ["dp"] dim 1 : tensor<2x3xf32> -> tensor<2x12xf32>
  %ra = dt.reduce_scatter %ga on @mesh ["dp"] sum dim 0 : tensor<8x8xf32> -> tensor<2x8xf32>
  %rb = dt.reduce_scatter %gb on @mesh ["dp"] sum dim 0 : tensor<4x4xf32> -> tensor<1x4xf32>
  %rc = dt.reduce_scatter %gc on @mesh ["dp"] sum dim 0 : tensor<6x2xf32> -> tensor<2x2xf32>
  return %wa, %wb, %wc, %ra, %rb, %rc : tensor<8x8xf32>, tensor<4x4xf32>, tensor<2x12xf32>, tensor<2x8xf32>, tensor<1x4xf32>, tensor<2x2xf32>
}

// -----

// 16 MiB gradients the step makes (math.exp stands for a matmul) and reads
// reduced (an update) cost no copies: dt-fill-buckets-in-place makes each
// in the combined buffer, and the update reads its slice. One call saves a
// latency for nothing, at any size. Returned, the same gradients stay
// apart: each would be copied out of the combined buffer into the
// caller's, where apart the all_reduce writes it there.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @large_made
// CHECK: tensor.concat
// CHECK-NEXT: dt.all_reduce %{{.*}} {dt.combined = 2 : i64} : tensor<8388608xf32> -> tensor<8388608xf32>
// CHECK-LABEL: func.func @large_made_returned
// CHECK-NOT: tensor.concat
// CHECK: return
func.func @large_made(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>, %w: tensor<2048x2048xf32>)
    -> (tensor<2048x2048xf32>, tensor<2048x2048xf32>) {
  %ga = math.exp %a : tensor<2048x2048xf32>
  %gb = math.exp %b : tensor<2048x2048xf32>
  %ra = dt.all_reduce %ga on @mesh ["dp"] sum : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %rb = dt.all_reduce %gb on @mesh ["dp"] sum : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %ua = arith.subf %w, %ra : tensor<2048x2048xf32>
  %ub = arith.subf %w, %rb : tensor<2048x2048xf32>
  return %ua, %ub : tensor<2048x2048xf32>, tensor<2048x2048xf32>
}
func.func @large_made_returned(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>)
    -> (tensor<2048x2048xf32>, tensor<2048x2048xf32>) {
  %ga = math.exp %a : tensor<2048x2048xf32>
  %gb = math.exp %b : tensor<2048x2048xf32>
  %ra = dt.all_reduce %ga on @mesh ["dp"] sum : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  %rb = dt.all_reduce %gb on @mesh ["dp"] sum : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %ra, %rb : tensor<2048x2048xf32>, tensor<2048x2048xf32>
}

// -----

// The inputs go into the buffer whole runs of 64 bytes first: the 28-byte
// gradient made first is laid after the 16 KiB one, so that both start at
// a multiple of 64 bytes (and dt-fill-buckets-in-place makes both there);
// each result is still its own member's.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: func.func @layout
// CHECK: %[[SMALL:.*]] = math.exp %{{.*}} : tensor<7xf32>
// CHECK: %[[LARGE:.*]] = math.exp %{{.*}} : tensor<64x64xf32>
// CHECK-NEXT: %[[FLAT:.*]] = tensor.collapse_shape %[[LARGE]]
// CHECK-NEXT: %[[CAT:.*]] = tensor.concat dim(0) %[[FLAT]], %[[SMALL]] : (tensor<4096xf32>, tensor<7xf32>) -> tensor<4103xf32>
// CHECK-NEXT: %[[R:.*]] = dt.all_reduce %[[CAT]] on @mesh ["dp"] sum {dt.combined = 2 : i64}
// CHECK-NEXT: %[[RL:.*]] = tensor.extract_slice %[[R]][0] [4096] [1]
// CHECK-NEXT: %[[L:.*]] = tensor.expand_shape %[[RL]]
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[R]][4096] [7] [1]
// CHECK: arith.subf %{{.*}}, %[[S]] : tensor<7xf32>
// CHECK: arith.subf %{{.*}}, %[[L]] : tensor<64x64xf32>
func.func @layout(%a: tensor<7xf32>, %b: tensor<64x64xf32>, %v: tensor<7xf32>, %w: tensor<64x64xf32>)
    -> (tensor<7xf32>, tensor<64x64xf32>) {
  %ga = math.exp %a : tensor<7xf32>
  %ra = dt.all_reduce %ga on @mesh ["dp"] sum : tensor<7xf32> -> tensor<7xf32>
  %gb = math.exp %b : tensor<64x64xf32>
  %rb = dt.all_reduce %gb on @mesh ["dp"] sum : tensor<64x64xf32> -> tensor<64x64xf32>
  %ua = arith.subf %v, %ra : tensor<7xf32>
  %ub = arith.subf %w, %rb : tensor<64x64xf32>
  return %ua, %ub : tensor<7xf32>, tensor<64x64xf32>
}
// The two are made in the buffer (the 28 bytes at 16 KiB):
// EXPLAIN: combine-collectives.mlir:322:9: remark: 2 x all_reduce on ["dp"] in one call: 6.0 us against 12.0 us apart (2 made in its buffer)
