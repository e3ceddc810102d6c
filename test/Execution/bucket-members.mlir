// A bucket of four all_reduces whose members are of every kind
// dt-fill-buckets-in-place tells apart. dt-combine-collectives lays the
// inputs of a whole number of 64 bytes first: the weight gradient (a
// matmul's, 2 KiB, at offset 0) and the bias gradient (a reduction's, 128
// bytes, at 2048) are made in their runs. Then the others, in program
// order: the argument %p (28 bytes, the caller's buffer) is copied in; the
// last gradient (a reduction's, 36 bytes) would start at 2204 bytes, not a
// multiple of 64, and is copied in too. %p and the last gradient are
// returned, so they are copied out as well: four copies in the step, six
// with the pass off. Either way the step computes what the
// single-device program computes, on threads, under MPI, and through the
// CUDA lowering emulated on the CPU.
// RUN: dt-compile --plan-search=0 --explain %s -o %t.so 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARKS
// REMARKS: remark: 4 x all_reduce on ["dp"] in one call: {{.*}} apart (2 made in its buffer)
// RUN: dt-opt %s -dt-shard=search=0 | FileCheck %s --check-prefix=PLAN
// PLAN: tensor.concat dim(0) %{{.*}}, %{{.*}}, %arg2, %{{.*}} : (tensor<512xf32>, tensor<32xf32>, tensor<7xf32>, tensor<9xf32>) -> tensor<560xf32>
// RUN: dt-compile --plan-search=0 %s --emit=spmd-mlir -o - | FileCheck %s --check-prefix=INPLACE
// INPLACE-COUNT-4: llvm.intr.memcpy
// INPLACE-NOT: llvm.intr.memcpy
// RUN: dt-compile --plan-search=0 --fill-buckets-in-place=false %s --emit=spmd-mlir -o - | FileCheck %s --check-prefix=COPIED
// COPIED-COUNT-6: llvm.intr.memcpy
// COPIED-NOT: llvm.intr.memcpy
// RUN: dt-run %t.so --seed 3 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 2 dt-run %t.so --backend=mpi --seed 3 --verify | FileCheck %s %}
// RUN: dt-compile --plan-search=0 --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --verify | FileCheck %s
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%x: tensor<64x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %w: tensor<16x32xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %p: tensor<7xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum)]>},
                %v: tensor<32xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<16x32xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<7xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<32xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<9xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant dense<0.125> : tensor<16x32xf32>
  %lrv = arith.constant dense<0.125> : tensor<32xf32>
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h = linalg.matmul ins(%x, %w : tensor<64x16xf32>, tensor<16x32xf32>) outs(%f : tensor<64x32xf32>) -> tensor<64x32xf32>
  %et = tensor.empty() : tensor<16x64xf32>
  %xt = linalg.transpose ins(%x : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %eg = tensor.empty() : tensor<16x32xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%eg : tensor<16x32xf32>) -> tensor<16x32xf32>
  %gw = linalg.matmul ins(%xt, %h : tensor<16x64xf32>, tensor<64x32xf32>) outs(%fg : tensor<16x32xf32>) -> tensor<16x32xf32>
  %eb = tensor.empty() : tensor<32xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<32xf32>) -> tensor<32xf32>
  %gb = linalg.reduce ins(%h : tensor<64x32xf32>) outs(%fb : tensor<32xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %ec = tensor.empty() : tensor<9xf32>
  %fc = linalg.fill ins(%zero : f32) outs(%ec : tensor<9xf32>) -> tensor<9xf32>
  %hh = arith.mulf %h, %h : tensor<64x32xf32>
  %h9 = tensor.extract_slice %hh[0, 0] [64, 9] [1, 1] : tensor<64x32xf32> to tensor<64x9xf32>
  %gc = linalg.reduce ins(%h9 : tensor<64x9xf32>) outs(%fc : tensor<9xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %sw = arith.mulf %gw, %lr : tensor<16x32xf32>
  %nw = arith.subf %w, %sw : tensor<16x32xf32>
  %sb = arith.mulf %gb, %lrv : tensor<32xf32>
  %nb = arith.subf %v, %sb : tensor<32xf32>
  return %nw, %p, %nb, %gc : tensor<16x32xf32>, tensor<7xf32>, tensor<32xf32>, tensor<9xf32>
}
