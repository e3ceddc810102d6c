// Matmuls whose zero fill becomes the library's beta = 0 and whose bias add
// and relu become its epilogue (dt-convert-matmul-to-blas), against the
// upstream oracle, which runs them as loops. tp=2: the first layer's bias
// is sharded with its columns; the second layer's product is partial, so
// its bias is added after the all_reduce, not in the epilogue.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// VERIFY: verify: PASS
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// A NaN in x stays NaN through the relu (arith.maximumf), fused or not:
// the CPU build's epilogue and the emulated one's agree with the program.
// test/GPU/nan-relu.test asks the same of cuBLASLt's RELU epilogue.
// RUN: %npy pattern %t.x.npy 6,8 0=nan
// RUN: dt-run %s --input 0=%t.x.npy --seed 0 --output-dir %t.nan.cpu > /dev/null
// RUN: dt-run %t.emu.so --input 0=%t.x.npy --seed 0 --output-dir %t.nan.emu > /dev/null
// RUN: %npy compare %t.nan.emu %t.nan.cpu | FileCheck %s --check-prefix=NAN
// RUN: %npy print %t.nan.cpu/result1.npy | FileCheck %s --check-prefix=NAN-ROW
// NAN: compare: PASS
// NAN-ROW-COUNT-10: nan
// NAN-ROW-NOT: nan
// The SPMD program: layer 1 is one call with bias and relu (bits 3), the
// relu-only and the bias-only products one call each (bits 2 and 1); layer
// 2 overwrites (bits 0) and its bias add stays a loop after the all_reduce.
// RUN: dt-compile %s --emit=spmd-mlir | FileCheck %s --check-prefix=SPMD
// SPMD-LABEL: llvm.func @main
// SPMD-DAG: %[[RELU_BIAS:.*]] = llvm.mlir.constant(3 : i32) : i32
// SPMD-DAG: %[[RELU:.*]] = llvm.mlir.constant(2 : i32) : i32
// SPMD-DAG: %[[BIAS:.*]] = llvm.mlir.constant(1 : i32) : i32
// SPMD-DAG: %[[NONE:.*]] = llvm.mlir.constant(0 : i32) : i32
// SPMD-NOT: llvm.call @dt_rt_matmul_f32
// SPMD: llvm.call @dt_rt_matmul_into_f32({{.*}}, %[[RELU_BIAS]])
// SPMD: llvm.call @dt_rt_matmul_into_f32({{.*}}, %[[NONE]])
// SPMD: llvm.call @dt_rt_all_reduce_f32
// SPMD: llvm.call @dt_rt_matmul_into_f32({{.*}}, %[[RELU]])
// SPMD: llvm.call @dt_rt_matmul_into_f32({{.*}}, %[[BIAS]])
// SPMD-NOT: llvm.call @dt_rt_matmul_f32
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%x: tensor<6x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %w1: tensor<8x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %b1: tensor<10xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %w2: tensor<10x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %b2: tensor<4xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %w3: tensor<8x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %w4: tensor<8x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<6x4xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<6x10xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<6x10xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %z = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : tensor<6x10xf32>
  %e = tensor.empty() : tensor<6x10xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<6x10xf32>) -> tensor<6x10xf32>
  // Layer 1: relu(x w1 + b1).
  %h = linalg.matmul ins(%x, %w1 : tensor<6x8xf32>, tensor<8x10xf32>) outs(%f : tensor<6x10xf32>) -> tensor<6x10xf32>
  %bb1 = linalg.broadcast ins(%b1 : tensor<10xf32>) outs(%e : tensor<6x10xf32>) dimensions = [0]
  %hb = arith.addf %h, %bb1 : tensor<6x10xf32>
  %a = arith.maximumf %hb, %zeros : tensor<6x10xf32>
  // Layer 2: a w2 + b2, the product partial over tp.
  %e2 = tensor.empty() : tensor<6x4xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %y0 = linalg.matmul ins(%a, %w2 : tensor<6x10xf32>, tensor<10x4xf32>) outs(%f2 : tensor<6x4xf32>) -> tensor<6x4xf32>
  %bb2 = linalg.broadcast ins(%b2 : tensor<4xf32>) outs(%e2 : tensor<6x4xf32>) dimensions = [0]
  %y = arith.addf %y0, %bb2 : tensor<6x4xf32>
  // relu(x w3) alone, and x w4 + b1 alone.
  %e3 = tensor.empty() : tensor<6x10xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<6x10xf32>) -> tensor<6x10xf32>
  %r0 = linalg.matmul ins(%x, %w3 : tensor<6x8xf32>, tensor<8x10xf32>) outs(%f3 : tensor<6x10xf32>) -> tensor<6x10xf32>
  %r = arith.maximumf %r0, %zeros : tensor<6x10xf32>
  %e4 = tensor.empty() : tensor<6x10xf32>
  %f4 = linalg.fill ins(%z : f32) outs(%e4 : tensor<6x10xf32>) -> tensor<6x10xf32>
  %s0 = linalg.matmul ins(%x, %w4 : tensor<6x8xf32>, tensor<8x10xf32>) outs(%f4 : tensor<6x10xf32>) -> tensor<6x10xf32>
  %bb3 = linalg.broadcast ins(%b1 : tensor<10xf32>) outs(%e4 : tensor<6x10xf32>) dimensions = [0]
  %s = arith.addf %s0, %bb3 : tensor<6x10xf32>
  return %y, %r, %s : tensor<6x4xf32>, tensor<6x10xf32>, tensor<6x10xf32>
}
