// log1p and expm1 keep the digits of small arguments: f32 ones are
// upstream's polynomial approximations (dt-approximate-math), f64 ones calls
// of libm's log1p and expm1. Left to upstream's LLVM lowering (math-to-llvm,
// as upstream's own CPU pipeline, the oracle of the other tests, still
// does), they were log(1 + x) and exp(x) - 1: log1p(1e-10) was 0 in f32
// and wrong in its eighth digit in f64, log1p(1e-5) wrong in its fourth in
// f32.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %npy array %t/x.npy '<f4' 10 1e-10,-1e-10,1e-5,-3e-4,0.5,-0.5,3.0,20.0,-0.999999,1e-30
// RUN: %npy array %t/y.npy '<f8' 10 1e-10,-1e-10,1e-5,-3e-4,0.5,-0.5,3.0,20.0,-0.999999,1e-300
// RUN: dt-run %s --input=0=%t/x.npy --input=1=%t/y.npy --output-dir=%t/out
// RUN: %python %S/Inputs/check_log1p_expm1.py %t/x.npy %t/y.npy %t/out | FileCheck %s
// CHECK: log1p f32: {{.*}}: ok
// CHECK: log1p f64: {{.*}}: ok
// CHECK: expm1 f32: {{.*}}: ok
// CHECK: expm1 f64: {{.*}}: ok
// At 65536 points of each range (test/Execution/Inputs/math_accuracy.py's
// `more`): log1p, expm1, and log2 and erfc, also approximated, each
// within 3 f32 epsilons of the f64 function's result (bf16 log1p within a
// bf16 unit); compiled as log(1 + x) and exp(x) - 1, 734 and 65210 of
// log1p's points over [-0.999, 10] and [-0.001, 0.001] were further, 67 and
// 65245 of expm1's over [-20, 88] and [-0.001, 0.001].
// RUN: %python %S/Inputs/math_accuracy.py more > %t/more.mlir
// RUN: %npy pattern-run %dt_run %t/more.mlir | FileCheck %s --check-prefix=MORE
// MORE-COUNT-9: {{^0\.0$}}
// No f32 libm call is left; the f64 ones are libm's.
// RUN: dt-compile %s --emit=llvm -o %t/program.ll
// RUN: FileCheck %s --check-prefix=IR < %t/program.ll
// IR-NOT: @{{(log1pf|expm1f|log2f|erfcf)}}(
// IR-DAG: declare {{.*}}double @log1p(double)
// IR-DAG: declare {{.*}}double @expm1(double)
func.func @main(%x: tensor<10xf32>, %y: tensor<10xf64>)
    -> (tensor<10xf32>, tensor<10xf64>, tensor<10xf32>, tensor<10xf64>) {
  %a = math.log1p %x : tensor<10xf32>
  %b = math.log1p %y : tensor<10xf64>
  %c = math.expm1 %x : tensor<10xf32>
  %d = math.expm1 %y : tensor<10xf64>
  return %a, %b, %c, %d : tensor<10xf32>, tensor<10xf64>, tensor<10xf32>, tensor<10xf64>
}
