// The PTX dt-lower-to-cuda makes for four representative kernels (and no
// others).
// REQUIRES: cuda-toolkit
// RUN: dt-opt %s -dt-lower-to-cuda=format=isa | FileCheck %s
// RUN: dt-opt %s -dt-lower-to-cuda="format=isa gpu-arch=sm_100" | FileCheck %s --check-prefix=SM100
// RUN: dt-opt %s -dt-lower-to-cuda="format=isa gpu-arch=sm_121" | FileCheck %s --check-prefix=SM121
// An SM LLVM does not know ends dt-opt with a message, not a crash in
// instruction selection.
// RUN: not dt-opt %s -dt-lower-to-cuda="format=isa gpu-arch=sm_999" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Each SM gets the first PTX ISA that has it (LLVM's choice; PTX 8.7 was
// forced on sm_121, which needs 8.8, and LLVM aborted).
// SM100: .version 8.6
// SM100-SAME: .target sm_100
// SM100-NOT: .target sm_90
// SM121: .version 8.8
// SM121-SAME: .target sm_121
// UNKNOWN: LLVM ERROR: gpu-arch=sm_999 is not an SM that LLVM knows (LLVM's NVPTX target knows {{.*}}sm_90, sm_90a{{.*}})

// Fused elementwise: exp(x * y) over 1024x1024 in one kernel of 1024 blocks
// of 256; thread t of block b takes elements b * 1024 + k * 256 + t, k < 4
// (each k coalesced; no bound check, 1024 divides the element count), and
// loads the next element's operands before storing any.
// All kernels are in one module (dt-merge-gpu-modules), compiled once.
// CHECK: gpu.binary @dt_kernels
// CHECK-NOT: gpu.binary
// CHECK-SAME: chip = "sm_90"
// CHECK-SAME: .version 7.8
// CHECK-SAME: .target sm_90
// CHECK-SAME: .entry main_kernel(
// CHECK-SAME: .maxntid 256, 1, 1
// CHECK-SAME: mov.u32 {{[^%]*}}[[BID:%r[0-9]+]], %ctaid.x;
// CHECK-SAME: mov.u32 {{[^%]*}}[[TID:%r[0-9]+]], %tid.x;
// CHECK-SAME: shl.b32 {{[^%]*}}[[BASE:%r[0-9]+]], [[BID]], 10;
// CHECK-SAME: or.b32 {{[^%]*}}[[LIN:%r[0-9]+]], [[BASE]], [[TID]];
// CHECK-SAME: mul.wide.u32 {{[^%]*}}[[OFF:%rd[0-9]+]], [[LIN]], 4;
// CHECK-SAME: add.s64 {{[^%]*}}[[X:%rd[0-9]+]], %rd{{[0-9]+}}, [[OFF]];
// CHECK-SAME: ld.global.b32 {{[^%]*}}%r{{[0-9]+}}, [[[X]]];
// CHECK-SAME: ld.global.b32
// CHECK-SAME: mul.rn.f32
// CHECK-SAME: ex2.approx
// CHECK-NOT: st.global
// CHECK-SAME: ld.global.b32 {{[^%]*}}%r{{[0-9]+}}, [[[X]]+1024];
// CHECK-NOT: st.global
// CHECK-SAME: ld.global.b32 {{[^%]*}}%r{{[0-9]+}}, [[[X]]+2048];
// CHECK-NOT: st.global
// CHECK-SAME: ld.global.b32 {{[^%]*}}%r{{[0-9]+}}, [[[X]]+3072];
// CHECK-SAME: st.global.b32
// CHECK-SAME: st.global.b32
// CHECK-SAME: st.global.b32
// CHECK-SAME: st.global.b32

// A row sum over 4096 columns: a block per row, strided loads, then
// gpu.all_reduce: shuffles within warps and shared memory across them. The
// zero fill of the sums is no kernel: the reduction starts from its value.
// CHECK-SAME: .entry main_kernel_0(
// CHECK-SAME: ld.global.b32
// CHECK-SAME: add.rn.f32
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: st.shared.b32
// CHECK-SAME: bar.sync
// CHECK-SAME: st.global.b32

// A row max over 64 columns of 2048 rows: a warp per row, five shuffles,
// no shared memory.
// CHECK-SAME: .entry main_kernel_1(
// CHECK-SAME: ld.global.b32
// CHECK-SAME: max.f32
// CHECK-NOT: bar.sync
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-NOT: shfl.sync
// CHECK-SAME: st.global.b32

// A softmax over rows of 1024: one row kernel (a block per row) for its max,
// its sum of exponentials and its normalization, two block reductions
// (shared memory and barriers) and the normalized row's store. Each lane's
// 4 elements are loaded once, their exponentials computed once, and the
// division by the sum is one reciprocal and a multiplication each.
// CHECK-SAME: .entry main_kernel_2(
// CHECK-COUNT-4: ld.global.b32
// CHECK-SAME: max.NaN.f32
// CHECK-SAME: bar.sync
// CHECK-COUNT-4: ex2.approx
// CHECK-SAME: add.rn.f32
// CHECK-SAME: bar.sync
// CHECK-NOT: div.rn.f32
// CHECK-SAME: rcp.rn.f32
// CHECK-NOT: div.rn.f32
// CHECK-COUNT-4: mul.rn.f32
// CHECK-NOT: ld.global
// CHECK-NOT: ex2.approx
// CHECK-NOT: div.rn.f32
// CHECK-SAME: st.global.b32
// CHECK-NOT: .entry

func.func @main(%x: tensor<1024x1024xf32>, %y: tensor<1024x1024xf32>,
                %a: tensor<64x4096xf32>, %b: tensor<2048x64xf32>,
                %c: tensor<2048x1024xf32>)
    -> (tensor<1024x1024xf32>, tensor<64xf32>, tensor<2048xf32>, tensor<2048x1024xf32>) {
  %m = arith.mulf %x, %y : tensor<1024x1024xf32>
  %p = math.exp %m : tensor<1024x1024xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.reduce ins(%a : tensor<64x4096xf32>) outs(%i1 : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  %ninf = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<2048xf32>
  %i2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.reduce ins(%b : tensor<2048x64xf32>) outs(%i2 : tensor<2048xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.maxnumf %in, %acc : f32
      linalg.yield %t : f32
    }
  %m0 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2048xf32>) -> tensor<2048xf32>
  %cm = linalg.reduce { arith.maximumf } ins(%c : tensor<2048x1024xf32>) outs(%m0 : tensor<2048xf32>) dimensions = [1]
  %s0 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2048xf32>) -> tensor<2048xf32>
  %cs = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                        iterator_types = ["parallel", "reduction"]}
      ins(%c, %cm : tensor<2048x1024xf32>, tensor<2048xf32>) outs(%s0 : tensor<2048xf32>) {
  ^bb0(%in: f32, %max: f32, %acc: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %t = arith.addf %acc, %e : f32
    linalg.yield %t : f32
  } -> tensor<2048xf32>
  %full = tensor.empty() : tensor<2048x1024xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%c, %cm, %cs : tensor<2048x1024xf32>, tensor<2048xf32>, tensor<2048xf32>) outs(%full : tensor<2048x1024xf32>) {
  ^bb0(%in: f32, %max: f32, %sum: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %sum : f32
    linalg.yield %q : f32
  } -> tensor<2048x1024xf32>
  return %p, %s, %r, %sm : tensor<1024x1024xf32>, tensor<64xf32>, tensor<2048xf32>, tensor<2048x1024xf32>
}
