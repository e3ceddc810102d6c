// An embedding lookup (a linalg.generic whose body reads the table with
// tensor.extract at computed rows, as torch-mlir writes aten.embedding) and
// an embedding bag (a sum of looked-up rows), with the tables split by rows
// over tp=4, as Megatron's vocab-parallel embedding. Each rank reads the rows
// it holds and zeros elsewhere: the lookups are partial sums, and one
// all_reduce of both results (dt-combine-collectives) replaces gathering the
// tables.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN-NOT: dt.all_gather
// PLAN: %[[OFFSET:.*]] = arith.muli %{{.*}}, %c8000 : index
// PLAN: linalg.generic
// PLAN: %[[ID:.*]] = arith.index_cast %in : i64 to index
// PLAN: %[[ROW:.*]] = arith.subi %[[ID]], %[[OFFSET]] : index
// PLAN: %[[MINE:.*]] = arith.cmpi ult, %[[ROW]], %c8000{{.*}} : index
// PLAN: %[[SAFE:.*]] = arith.select %[[MINE]], %[[ROW]], %{{.*}} : index
// PLAN: %[[READ:.*]] = tensor.extract %{{.*}}{{\[}}%[[SAFE]], %{{.*}}] : tensor<8000x64xf32>
// PLAN: arith.select %[[MINE]], %[[READ]], %{{.*}} : f32
// PLAN-NOT: dt.all_gather
// PLAN: tensor.concat dim(0) {{.*}} : (tensor<2048xf32>, tensor<256xf32>) -> tensor<2304xf32>
// PLAN-NEXT: dt.all_reduce {{.*}} ["tp"] sum {dt.combined = 2 : i64} : tensor<2304xf32>
// PLAN-NOT: dt.all_gather
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// The GPU kernel masks the rows it does not hold the same way:
// RUN: dt-opt %s -dt-shard -dt-lower-to-cuda=format=isa | FileCheck %s --check-prefix=PTX
// PTX: setp.lt.u64 {{.*}}, 8000;
// RUN: dt-compile --target=cuda %s -o %t.cuda.so
// VERIFY: dt-run: main on 4 ranks
// VERIFY: result #0 32x64 f32: max abs err 0,
// VERIFY: result #1 4x64 f32:
// VERIFY: verify: PASS
dt.mesh @mesh = <["tp" = 4]>

func.func @main(
    %x: tensor<32xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
    %table: tensor<32000x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %bag_table: tensor<32000x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<32x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<4x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  // Token ids spread over the vocabulary from any input x in [-1, 1):
  // (int(16000 x + 16000) + 131 t) mod 32000.
  %ie = tensor.empty() : tensor<32xi64>
  %ids = linalg.generic {indexing_maps = [affine_map<(t) -> (t)>, affine_map<(t) -> (t)>],
                         iterator_types = ["parallel"]}
      ins(%x : tensor<32xf32>) outs(%ie : tensor<32xi64>) {
    ^bb0(%r: f32, %o: i64):
      %half = arith.constant 16000.0 : f32
      %scaled = arith.mulf %r, %half : f32
      %shifted = arith.addf %scaled, %half : f32
      %base = arith.fptosi %shifted : f32 to i64
      %t = linalg.index 0 : index
      %ti = arith.index_cast %t : index to i64
      %c131 = arith.constant 131 : i64
      %c32000 = arith.constant 32000 : i64
      %s = arith.muli %ti, %c131 : i64
      %u = arith.addi %s, %base : i64
      %id = arith.remui %u, %c32000 : i64
      linalg.yield %id : i64
  } -> tensor<32xi64>

  // out[t, d] = table[ids[t], d]
  %e = tensor.empty() : tensor<32x64xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<32xi64>) outs(%e : tensor<32x64xf32>) {
    ^bb0(%id: i64, %o: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %table[%row, %d] : tensor<32000x64xf32>
      linalg.yield %v : f32
  } -> tensor<32x64xf32>

  // bag[b, d] = sum_j bag_table[ids[8 b + j], d]
  %ids2 = tensor.expand_shape %ids [[0, 1]] output_shape [4, 8] : tensor<32xi64> into tensor<4x8xi64>
  %zero = arith.constant 0.0 : f32
  %be = tensor.empty() : tensor<4x64xf32>
  %bz = linalg.fill ins(%zero : f32) outs(%be : tensor<4x64xf32>) -> tensor<4x64xf32>
  %bag = linalg.generic {indexing_maps = [affine_map<(b, d, j) -> (b, j)>, affine_map<(b, d, j) -> (b, d)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids2 : tensor<4x8xi64>) outs(%bz : tensor<4x64xf32>) {
    ^bb0(%id: i64, %acc: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %bag_table[%row, %d] : tensor<32000x64xf32>
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
  } -> tensor<4x64xf32>
  return %out, %bag : tensor<32x64xf32>, tensor<4x64xf32>
}
