// The CPU lowering's diagnostics, each for input it cannot take.
// RUN: not dt-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUF
// RUN: not dt-opt %s -split-input-file -dt-emit-entry-points --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not dt-opt %s -split-input-file -dt-strip-shardings --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRIP

// Collectives still in global form cannot be bufferized.
// BUF: error: 'dt.all_reduce' op is still in global form: run dt-partition before bufferization
// STRIP: error: 'dt.all_reduce' op has no single-device meaning; dt-strip-shardings takes global programs without collectives
dt.mesh @mesh = <["tp" = 2]>
func.func @negative_global_collective(%x: tensor<4xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<4xf32, #dt.sharding<@mesh, [R]>> {
  %0 = dt.all_reduce %x on @mesh ["tp"] sum : tensor<4xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<4xf32, #dt.sharding<@mesh, [R]>>
  return %0 : tensor<4xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// The runtime's collectives move f32, f64, f16, bf16, i32 and i64.
// BUF: error: 'dt.all_reduce' op has element type 'i8', which the runtime's collectives do not support
dt.mesh @mesh = <["tp" = 2]>
func.func @negative_collective_type(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = dt.all_reduce %x on @mesh ["tp"] sum : tensor<4xi8> -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// Entry points take bufferized functions with out-params only.
// ENTRY: error: 'func.func' op still returns values: bufferize with out-params before dt-emit-entry-points
func.func @negative_entry_results(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}

// -----

// ENTRY: error: 'func.func' op argument #0 has type 'memref<?xf32>'; an entry takes statically shaped dense tensors only
func.func @negative_entry_dynamic(%x: memref<?xf32>) {
  return
}
