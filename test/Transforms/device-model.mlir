// The device in the topology description weighs a contraction's compute
// against the wire. x (1024x256, split by columns) times w (256x1024, split
// by rows) over tp=4: gathering both inputs (two all_gathers of 1 MiB,
// 22.4 us) costs less on the wire than the all_reduce of the partial
// 1024x1024 product (4 MiB, 35.5 us). On the default device (an H200, f32 at
// 60 TFLOP/s) the replicated product's 0.54 GFLOP take 8.9 us, so gathering
// still wins; on a device a hundred times slower (a CPU node) they take
// 1.1 ms on every rank, and splitting the contraction (a quarter each) wins.
// (The CPU runs check the rules alone, search=0: there the plan search finds
// that gathering x at the entry lets the product split by columns, from a
// split init, instead of summing partial products that start from a whole
// one.)
// RUN: dt-opt %s -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: echo "device 1 0.5 100 # a CPU node" > %t.topology
// RUN: dt-opt %s -dt-propagate="explain topology=%t.topology search=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// dt-cost-report prices the contractions as they ended up split, under the
// same device: the replicated product on the default device, a quarter of
// it on the CPU node; and the fill of its 4 MiB init, memory-bound, whole on
// every rank in both (a replicated product, then a partial one, which
// starts from a whole init): 1.0 us at 4 TB/s, 41.9 us at 100 GB/s.
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=GPU-REPORT
// RUN: dt-opt %s -dt-propagate="topology=%t.topology search=0" -dt-insert-redistribute -dt-cost-report="topology=%t.topology json=true" -o /dev/null | FileCheck %s --check-prefix=CPU-REPORT
// GPU-REPORT: total: 2 collectives, 1.5 MiB per rank, 22.4 us
// GPU-REPORT-NEXT: compute per rank: 1 contraction, 8.9 us, 1 memory-bound op, 1.0 us
// CPU-REPORT: "compute_per_rank": {
// CPU-REPORT-NEXT: "contraction_seconds": 0.000268435
// CPU-REPORT-NEXT: "contractions": 1,
// CPU-REPORT-NEXT: "memory_bound_ops": 1,
// CPU-REPORT-NEXT: "memory_bound_seconds": 4.1943{{[0-9]*}}e-05,
// CPU-REPORT-NEXT: "seconds": 0.000310378
// A malformed device line is an error naming the line.
// RUN: echo "device 1 0.5" > %t.bad
// RUN: not dt-opt %s -dt-propagate="topology=%t.bad" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// GPU: remark: linalg.matmul, mesh axis "tp": chose (R, R, R) -> R [31.3 us with 8.9 us compute] over (S(1), S(0), P(sum)) -> P(sum) [37.7 us with 2.2 us compute]
// CPU: remark: linalg.matmul, mesh axis "tp": chose (S(1), S(0), P(sum)) -> P(sum) [303.9 us with 268.4 us compute] over {{.*}}(R, R, R) -> R [1096.1 us with 1073.7 us compute]
// BAD: error: {{.*}}: topology line 1: expected 'device <16-bit TFLOP/s> <32-bit TFLOP/s> <memory GB/s> [<memory GB>]', got 'device 1 0.5'

dt.mesh @mesh = <["tp" = 4]>
func.func @wide(%x: tensor<1024x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %w: tensor<256x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<1024x1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1024x256xf32>, tensor<256x1024xf32>) outs(%f : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}

// bf16 inputs multiply on tensor cores even into an f32 result: the
// replicated 1024x4096x1024 product is 8.6 GFLOP, 10.7 us at 800 TFLOP/s
// (at the f32 rate it would be 143 us).
// GPU-REPORT: dt-cost-report @bf16_into_f32
// GPU-REPORT: compute per rank: 1 contraction, 10.7 us
func.func @bf16_into_f32(%x: tensor<1024x4096xbf16> {dt.sharding = #dt.sharding<@mesh, [R]>},
                         %w: tensor<4096x1024xbf16> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<1024x1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1024x4096xbf16>, tensor<4096x1024xbf16>) outs(%f : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}
