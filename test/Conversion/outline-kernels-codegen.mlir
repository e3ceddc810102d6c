// Compiled, each loop nest is a function LLVM may not inline back, and the
// row sums' fresh buffer is noalias where it is read and written (LLVM
// vectorizes around it without runtime checks). The entry only calls.
// RUN: dt-compile %s --mcpu=skylake-avx512 --emit=llvm -o %t.ll
// RUN: FileCheck %s --input-file=%t.ll
// CHECK: define internal {{.*}}void @main_k{{[0-9]+}}(ptr {{.*}}, ptr noalias {{.*}}) {{.*}}#[[KERNEL:[0-9]+]]
// CHECK-LABEL: define void @dt_spmd_main(
// CHECK-NOT: br
// CHECK: call {{.*}}@main_k
// CHECK: ret void
// CHECK: attributes #[[KERNEL]] = { {{.*}}noinline
func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<16xf32>
  %r0 = linalg.fill ins(%zero : f32) outs(%re : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<16x16xf32>) outs(%r0 : tensor<16xf32>) dimensions = [1]
  %e = tensor.empty() : tensor<16x16xf32>
  %b = linalg.broadcast ins(%s : tensor<16xf32>) outs(%e : tensor<16x16xf32>) dimensions = [1]
  %y = arith.subf %x, %b : tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
