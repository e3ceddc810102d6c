// f16 and bf16 matmuls multiply in f32 and round once, on the CPU as
// cuBLASLt does on the GPU (docs/Design.md, "Documented choices"):
// - a sum of 300 ones is 300 (rounding the accumulator at every bf16 step
//   stalls at 256, since 256 + 1 rounds back to 256);
// - a Megatron MLP in bf16 and f16 on 4 ranks, whose row-parallel matmul
//   all-reduces partial sums, matches the single-device program within the
//   16-bit tolerances (with per-step rounding the bf16 result was 1.5 off
//   where the largest value is 53, beyond them).
// RUN: dt-run %s --seed 0 --verify --output-dir %t | FileCheck %s
// RUN: %npy print %t/result0.npy | FileCheck %s --check-prefix=ONES
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s %}
// The CUDA lowering, emulated on the CPU (test/CUDA/emulated.test).
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s
// CHECK: dt-run: main on 4 ranks
// CHECK: result #0 (ones) 1x2 f32: {{.*}}: ok
// CHECK: result #1 (y_bf16) 16x64 bf16: {{.*}}: ok
// CHECK: result #2 (y_f16) 16x64 f16: {{.*}}: ok
// CHECK: verify: PASS
// ONES: 300
// ONES-NEXT: 300
dt.mesh @mesh = <["tp" = 4]>

func.func @main(
    %x: tensor<16x64xbf16> {dt.sharding = #dt.sharding<@mesh, [R]>},
    %w1: tensor<64x256xbf16> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w2: tensor<256x64xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %hx: tensor<16x64xf16> {dt.sharding = #dt.sharding<@mesh, [R]>},
    %hw1: tensor<64x256xf16> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %hw2: tensor<256x64xf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<1x2xf32> {dt.name = "ones", dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<16x64xbf16> {dt.name = "y_bf16", dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<16x64xf16> {dt.name = "y_f16", dt.sharding = #dt.sharding<@mesh, [R]>}) {
  // 300 ones times 300 ones, in bf16; k is sharded, so each rank sums 75
  // and the all_reduce adds the four partial sums.
  %ones_a = arith.constant dense<1.0> : tensor<1x300xbf16>
  %ones_b = arith.constant dense<1.0> : tensor<300x2xbf16>
  %a = dt.constrain %ones_a to #dt.sharding<@mesh, [S(1)]> : tensor<1x300xbf16>
  %b = dt.constrain %ones_b to #dt.sharding<@mesh, [S(0)]> : tensor<300x2xbf16>
  %zero = arith.constant 0.0 : bf16
  %oe = tensor.empty() : tensor<1x2xbf16>
  %oz = linalg.fill ins(%zero : bf16) outs(%oe : tensor<1x2xbf16>) -> tensor<1x2xbf16>
  %sum = linalg.matmul ins(%a, %b : tensor<1x300xbf16>, tensor<300x2xbf16>) outs(%oz : tensor<1x2xbf16>) -> tensor<1x2xbf16>
  %wide_e = tensor.empty() : tensor<1x2xf32>
  %wide = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<1x2xbf16>) outs(%wide_e : tensor<1x2xf32>) {
    ^bb0(%v: bf16, %out: f32):
      %f = arith.extf %v : bf16 to f32
      linalg.yield %f : f32
  } -> tensor<1x2xf32>

  %y = func.call @mlp_bf16(%x, %w1, %w2) : (tensor<16x64xbf16>, tensor<64x256xbf16>, tensor<256x64xbf16>) -> tensor<16x64xbf16>
  %hy = func.call @mlp_f16(%hx, %hw1, %hw2) : (tensor<16x64xf16>, tensor<64x256xf16>, tensor<256x64xf16>) -> tensor<16x64xf16>
  return %wide, %y, %hy : tensor<1x2xf32>, tensor<16x64xbf16>, tensor<16x64xf16>
}

// Column-parallel, relu, row-parallel (a partial sum, all-reduced).
func.func private @mlp_bf16(%x: tensor<16x64xbf16>, %w1: tensor<64x256xbf16>, %w2: tensor<256x64xbf16>) -> tensor<16x64xbf16> {
  %zero = arith.constant 0.0 : bf16
  %he = tensor.empty() : tensor<16x256xbf16>
  %hz = linalg.fill ins(%zero : bf16) outs(%he : tensor<16x256xbf16>) -> tensor<16x256xbf16>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xbf16>, tensor<64x256xbf16>) outs(%hz : tensor<16x256xbf16>) -> tensor<16x256xbf16>
  %r = arith.maximumf %h, %hz : tensor<16x256xbf16>
  %ye = tensor.empty() : tensor<16x64xbf16>
  %yz = linalg.fill ins(%zero : bf16) outs(%ye : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %y = linalg.matmul ins(%r, %w2 : tensor<16x256xbf16>, tensor<256x64xbf16>) outs(%yz : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  return %y : tensor<16x64xbf16>
}

func.func private @mlp_f16(%x: tensor<16x64xf16>, %w1: tensor<64x256xf16>, %w2: tensor<256x64xf16>) -> tensor<16x64xf16> {
  %zero = arith.constant 0.0 : f16
  %he = tensor.empty() : tensor<16x256xf16>
  %hz = linalg.fill ins(%zero : f16) outs(%he : tensor<16x256xf16>) -> tensor<16x256xf16>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xf16>, tensor<64x256xf16>) outs(%hz : tensor<16x256xf16>) -> tensor<16x256xf16>
  %r = arith.maximumf %h, %hz : tensor<16x256xf16>
  %ye = tensor.empty() : tensor<16x64xf16>
  %yz = linalg.fill ins(%zero : f16) outs(%ye : tensor<16x64xf16>) -> tensor<16x64xf16>
  %y = linalg.matmul ins(%r, %w2 : tensor<16x256xf16>, tensor<256x64xf16>) outs(%yz : tensor<16x64xf16>) -> tensor<16x64xf16>
  return %y : tensor<16x64xf16>
}
