// Mixed precision: matmuls of 16-bit operands into f32 results go to the
// libraries (OpenBLAS through f32, cuBLASLt with 16-bit A and B and an f32
// C and D), not to generated loops: C += A B, C = A B (the zero fill
// folded into beta = 0), a batched product, and one whose bias and relu
// become the GEMM's epilogue in f32. The arguments are f32, rounded to
// bf16 and f16 inside, so that the upstream oracle runs the same program.
// RUN: dt-opt %s -dt-shard -dt-lower-to-cpu | FileCheck %s --check-prefix=CPU
// CPU-DAG: %[[RELU_BIAS:.*]] = llvm.mlir.constant(3 : i32) : i32
// CPU-DAG: llvm.call @dt_rt_matmul_bf16_f32(
// CPU-DAG: llvm.call @dt_rt_matmul_into_bf16_f32(
// CPU-DAG: llvm.call @dt_rt_batch_matmul_into_f16_f32(
// CPU-DAG: llvm.call @dt_rt_matmul_into_f16_f32({{.*}}, %[[RELU_BIAS]])
// RUN: dt-opt %s -dt-shard -dt-lower-to-cuda=format=isa | FileCheck %s --check-prefix=CUDA
// CUDA-DAG: llvm.call @dt_rt_gpu_matmul_bf16_f32(
// CUDA-DAG: llvm.call @dt_rt_gpu_matmul_into_bf16_f32(
// CUDA-DAG: llvm.call @dt_rt_gpu_batch_matmul_into_f16_f32(
// CUDA-DAG: llvm.call @dt_rt_gpu_matmul_into_f16_f32(
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: %npy pattern-run %dt_run %s --seed 1 > /dev/null
// RUN: dt-run %s --seed 2 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 2 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: %npy pattern-run %dt_run %t.emu.so > %t.emu
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.emu | FileCheck %s --check-prefix=COMPARE
// VERIFY-COUNT-4: : ok
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>

#rows = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>

func.func @main(%x32: tensor<16x32xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %w32: tensor<32x24xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
                %b32: tensor<24xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
                %q32: tensor<4x8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %k32: tensor<4x16x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %v32: tensor<24x8xf32> {dt.sharding = #dt.sharding<@mesh, [R, R]>})
    -> (tensor<16x24xf32>, tensor<16x24xf32>, tensor<4x8x8xf32>, tensor<16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = arith.truncf %x32 : tensor<16x32xf32> to tensor<16x32xbf16>
  %w = arith.truncf %w32 : tensor<32x24xf32> to tensor<32x24xbf16>
  %hx = arith.truncf %x32 : tensor<16x32xf32> to tensor<16x32xf16>
  %hw = arith.truncf %w32 : tensor<32x24xf32> to tensor<32x24xf16>
  %q = arith.truncf %q32 : tensor<4x8x16xf32> to tensor<4x8x16xf16>
  %k = arith.truncf %k32 : tensor<4x16x8xf32> to tensor<4x16x8xf16>

  // C = A B.
  %e = tensor.empty() : tensor<16x24xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xbf16>, tensor<32x24xbf16>)
                     outs(%z : tensor<16x24xf32>) -> tensor<16x24xf32>
  // C += A B, onto the bias broadcast along the rows.
  %eb = tensor.empty() : tensor<16x24xf32>
  %rowsOfBias = linalg.broadcast ins(%b32 : tensor<24xf32>) outs(%eb : tensor<16x24xf32>) dimensions = [0]
  %acc = linalg.matmul ins(%x, %w : tensor<16x32xbf16>, tensor<32x24xbf16>)
                       outs(%rowsOfBias : tensor<16x24xf32>) -> tensor<16x24xf32>
  // Batched, f16.
  %ea = tensor.empty() : tensor<4x8x8xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<4x8x16xf16>, tensor<4x16x8xf16>)
                           outs(%za : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  // relu(A B + bias), f16: the epilogue.
  %ez = tensor.empty() : tensor<16x24xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<16x24xf32>) -> tensor<16x24xf32>
  %h = linalg.matmul ins(%hx, %hw : tensor<16x32xf16>, tensor<32x24xf16>)
                     outs(%zz : tensor<16x24xf32>) -> tensor<16x24xf32>
  %eo = tensor.empty() : tensor<16x24xf32>
  %relu = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b32 : tensor<16x24xf32>, tensor<24xf32>) outs(%eo : tensor<16x24xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %sum = arith.addf %v, %bv : f32
    %r = arith.maximumf %sum, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x24xf32>
  // An MLP's second matmul (in f32) reads it: the epilogue writes a
  // temporary of its own.
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %out = linalg.matmul ins(%relu, %v32 : tensor<16x24xf32>, tensor<24x8xf32>)
                       outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %y, %acc, %s, %out : tensor<16x24xf32>, tensor<16x24xf32>, tensor<4x8x8xf32>, tensor<16x8xf32>
}
