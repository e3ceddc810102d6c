// A kernel's bf16 and f16 intermediate values stay in f32 on the CPU
// target, each result rounded once where it is stored
// (dt-elide-half-roundings), while a rounding the program writes is made.
// With a = b = 1.0625 and c = -1 in bf16, a * b = 1.12890625 lies halfway
// between two bf16 values: rounded on its own (to 1.125, ties to even) and
// then added to c, the sum is 0.125; kept in f32, it is 0.12890625, which
// bf16 holds. The program's own rounding of the same product (an f32
// product rounded to bf16 and extended, as `x.to(torch.bfloat16).float()`
// writes) gives 0.125; so does the emulated GPU, which rounds every
// operation as the GPU does. In f16, 1.03125 * 1.015625 = 1.04736328125
// lies halfway between 1.046875 and 1.0478515625: rounded on its own and
// added to -1, 0.046875; kept in f32, 0.04736328125. Compiled with
// --round-each-half-op, the CPU rounds every operation too, as PyTorch
// eager does: 0.125 and 0.046875 (bench/torch_cpu.py item 5 compares such
// a chain with eager's bits).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %npy array %t/a.npy '<f4' 4 1.0625,1.0625,3.0,-2.5
// RUN: %npy array %t/c.npy '<f4' 4 -1.0,-1.0,0.5,0.25
// RUN: %npy array %t/p.npy '<f4' 4 1.03125,1.03125,3.0,-2.5
// RUN: %npy array %t/q.npy '<f4' 4 1.015625,1.015625,3.0,-2.5
// RUN: dt-run %s --input a=%t/a.npy --input b=%t/a.npy --input c=%t/c.npy --input p=%t/p.npy --input q=%t/q.npy --output-dir %t/cpu --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify: PASS
// RUN: %npy print %t/cpu/result0.npy | FileCheck %s --check-prefix=KERNEL
// KERNEL: 0.12890625
// KERNEL-NEXT: 0.12890625
// KERNEL-NEXT: 9.5
// KERNEL-NEXT: 6.5
// RUN: %npy print %t/cpu/result1.npy | FileCheck %s --check-prefix=ROUNDED
// ROUNDED: 0.125
// ROUNDED-NEXT: 0.125
// ROUNDED-NEXT: 9.5
// ROUNDED-NEXT: 6.5
// RUN: %npy print %t/cpu/result2.npy | FileCheck %s --check-prefix=HALF-KERNEL
// HALF-KERNEL: 0.04736328125
// HALF-KERNEL-NEXT: 0.04736328125
// HALF-KERNEL-NEXT: 9.5
// HALF-KERNEL-NEXT: 6.5
// RUN: %npy print %t/cpu/result3.npy | FileCheck %s --check-prefix=HALF-ROUNDED
// HALF-ROUNDED: 0.046875
// HALF-ROUNDED-NEXT: 0.046875
// HALF-ROUNDED-NEXT: 9.5
// HALF-ROUNDED-NEXT: 6.5
// RUN: dt-compile --round-each-half-op %s -o %t/each-op.so
// RUN: dt-run %t/each-op.so --input a=%t/a.npy --input b=%t/a.npy --input c=%t/c.npy --input p=%t/p.npy --input q=%t/q.npy --output-dir %t/each-op --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %npy print %t/each-op/result0.npy | FileCheck %s --check-prefix=ROUNDED
// RUN: %npy print %t/each-op/result2.npy | FileCheck %s --check-prefix=HALF-ROUNDED
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t/emulated.so
// RUN: dt-run %t/emulated.so --input a=%t/a.npy --input b=%t/a.npy --input c=%t/c.npy --input p=%t/p.npy --input q=%t/q.npy --output-dir %t/emulated
// RUN: %npy print %t/emulated/result0.npy | FileCheck %s --check-prefix=ROUNDED
// RUN: %npy print %t/emulated/result2.npy | FileCheck %s --check-prefix=HALF-ROUNDED
func.func @main(%a: tensor<4xf32> {dt.name = "a"}, %b: tensor<4xf32> {dt.name = "b"},
                %c: tensor<4xf32> {dt.name = "c"}, %x: tensor<4xf32> {dt.name = "p"},
                %y: tensor<4xf32> {dt.name = "q"})
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a16 = arith.truncf %a : tensor<4xf32> to tensor<4xbf16>
  %b16 = arith.truncf %b : tensor<4xf32> to tensor<4xbf16>
  %c16 = arith.truncf %c : tensor<4xf32> to tensor<4xbf16>
  %p16 = arith.mulf %a16, %b16 : tensor<4xbf16>
  %s16 = arith.addf %p16, %c16 : tensor<4xbf16>
  %s = arith.extf %s16 : tensor<4xbf16> to tensor<4xf32>
  %p = arith.mulf %a, %b : tensor<4xf32>
  %r16 = arith.truncf %p : tensor<4xf32> to tensor<4xbf16>
  %r = arith.extf %r16 : tensor<4xbf16> to tensor<4xf32>
  %t = arith.addf %r, %c : tensor<4xf32>
  %x16 = arith.truncf %x : tensor<4xf32> to tensor<4xf16>
  %y16 = arith.truncf %y : tensor<4xf32> to tensor<4xf16>
  %ch = arith.truncf %c : tensor<4xf32> to tensor<4xf16>
  %xy16 = arith.mulf %x16, %y16 : tensor<4xf16>
  %h16 = arith.addf %xy16, %ch : tensor<4xf16>
  %h = arith.extf %h16 : tensor<4xf16> to tensor<4xf32>
  %xy = arith.mulf %x, %y : tensor<4xf32>
  %xyr16 = arith.truncf %xy : tensor<4xf32> to tensor<4xf16>
  %xyr = arith.extf %xyr16 : tensor<4xf16> to tensor<4xf32>
  %u = arith.addf %xyr, %c : tensor<4xf32>
  return %s, %t, %h, %u : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
