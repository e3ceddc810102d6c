// bf16 values that a select picks between, after a tanh computed in f32 and
// a maximum: on a CPU without AVX512-BF16, LLVM's backend widened such
// values to f32 and rounded them back through libgcc's `__truncsfbf2`,
// which Debian 12's libgcc lacks; the runtime defines it
// (runtime/lib/CompilerHelpers.cpp), so the artifact loaded and computed
// what the single device does (found by scripts/fuzz-programs.py, seed
// 500018, on a Zen 3). dt-compile now moves bf16 values as their i16 bits
// once LLVM's optimizations are done (lib/Compile/BF16Bits.cpp): the
// artifact calls no such helper at all.
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --verify | FileCheck %s
// RUN: dt-compile %s --mcpu=znver3 -o %t.zen3.so
// RUN: nm -D --undefined-only %t.zen3.so | FileCheck %s --allow-empty --check-prefix=NO-HELPER --implicit-check-not=bf2
// NO-HELPER-NOT: __trunc
// CHECK-COUNT-3: ok
// CHECK: verify: PASS

dt.mesh @mesh = <["m0" = 2]>
func.func @main(
    %a: tensor<1x3x3xbf16> {dt.sharding = #dt.sharding<@mesh, [S(2)]>},
    %pick: tensor<1x3x3xi1> {dt.sharding = #dt.sharding<@mesh, [R]>},
    %other: tensor<1x3x3xi1> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<1x3x3xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<1x3x3xbf16> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
        tensor<1x3xi1>) {
  %largest = arith.maximumf %a, %a : tensor<1x3x3xbf16>
  %tanh = math.tanh %a : tensor<1x3x3xbf16>
  %c = arith.constant dense<[[[-2.8125, -1.3125, 3.1875], [-3.75, 0.4375, -0.1875], [1.5625, 2.5, 1.3125]]]> : tensor<1x3x3xbf16>
  %scaled = arith.mulf %a, %c : tensor<1x3x3xbf16>
  %picked = arith.select %pick, %tanh, %largest : tensor<1x3x3xi1>, tensor<1x3x3xbf16>
  %both = arith.andi %pick, %other : tensor<1x3x3xi1>
  %false = arith.constant false
  %e = tensor.empty() : tensor<1x3xi1>
  %init = linalg.fill ins(%false : i1) outs(%e : tensor<1x3xi1>) -> tensor<1x3xi1>
  %any = linalg.reduce ins(%both : tensor<1x3x3xi1>) outs(%init : tensor<1x3xi1>) dimensions = [2]
      (%in: i1, %acc: i1) {
        %r = arith.ori %in, %acc : i1
        linalg.yield %r : i1
      }
  return %picked, %scaled, %any : tensor<1x3x3xbf16>, tensor<1x3x3xbf16>, tensor<1x3xi1>
}
