// A row sum written as linalg.reduce, compiled for this Zen 3 (AVX2): it is
// a generic (dt-generalize-elementwise), split into 16 lanes
// (dt-split-reductions), and the loop over the lanes is unrolled with the
// lanes held in two vector registers through the loop along the row
// (dt-keep-row-loops): a phi of <8 x float> for each, added to in the loop,
// stored once after it. Kept from unrolling instead, the lanes went
// through memory at every step (2x slower over 256x32000). (The kernel is
// cut into chunks of rows, dt-parallel-kernels: the row's loop is in the
// chunks' task.)
// RUN: dt-compile %s --mcpu=znver3 --emit=llvm -o %t.ll
// RUN: FileCheck %s --input-file=%t.ll
// CHECK-LABEL: define internal void @main_k{{[0-9]+}}_chunks_task(
// CHECK: [[LANES:%[0-9]+]] = phi <8 x float>
// CHECK: [[MORE:%[0-9]+]] = phi <8 x float>
// CHECK-NOT: store
// CHECK: fadd <8 x float> {{(%[0-9]+, )?}}[[LANES]]{{(,|$)}}
// CHECK-NOT: store
// CHECK: fadd <8 x float> {{(%[0-9]+, )?}}[[MORE]]{{(,|$)}}
// CHECK-NOT: store
// CHECK: br i1
// CHECK-NEXT: {{^$}}
// CHECK-NEXT: {{.*}}:
// CHECK-NEXT: store <8 x float>
// CHECK-NEXT: store <8 x float>
func.func @main(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<8x4096xf32>) outs(%z : tensor<8xf32>) dimensions = [1]
  return %s : tensor<8xf32>
}
