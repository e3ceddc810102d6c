// The rules alone (search=0): the plan search has its own test, plan-search.mlir.
// RUN: dt-opt %s -dt-propagate=search=0 -dt-insert-redistribute -dt-check -dt-cost-report -o /dev/null | FileCheck %s
// RUN: dt-opt %s -dt-propagate=search=0 -dt-cost-report="json=true" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: echo "tp 50 10" > %t.topology
// RUN: dt-opt %s -dt-propagate=search=0 -dt-cost-report="topology=%t.topology" -o /dev/null | FileCheck %s --check-prefix=TOPO
// RUN: not dt-opt %s -dt-propagate=search=0 -dt-cost-report="topology=%t.missing" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// A device of 40 KB (the topology's 'device' line: three rates, then the
// memory in GB) cannot hold @main's largest live set: a warning, and the
// report says so.
// RUN: echo "device 1 1 100 0.00004" > %t.small
// RUN: dt-opt %s -dt-propagate=search=0 -dt-cost-report="topology=%t.small" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: cost-report.mlir:[[# @LINE + 28]]:1: warning: needs 48.0 KiB per rank at its largest live set, more than the 39.1 KiB a device holds (the topology's 'device' line sets it)
// SMALL: memory per rank: arguments 36.0 KiB, largest live set 48.0 KiB, more than the 39.1 KiB a device holds

// The Megatron MLP: one all_reduce of the 16x64 f32 output over tp=4. Ring
// all_reduce sends 2 (n-1)/n S = 1.5 x 4 KiB = 6 KiB per rank; with the
// default intra-node link (3 us, 360 GB/s): 6 x 3 us + 6144 B / 360 GB/s = 18.0 us.
// Per rank: x (4 KiB, replicated) + w1 and w2 (64 KiB / 4 each) = 36 KiB.

// CHECK: dt-cost-report @main on @mesh [tp=4]
// CHECK: dt.redistribute (cost-report.mlir:{{[0-9]+}}) P(sum) -> R all_reduce tp 6.0 KiB 18.0 us
// CHECK: total: 1 collective, 6.0 KiB per rank, 18.0 us
// The op column is as wide as its longest entry, so the columns line up.
// RUN: dt-opt %s -dt-propagate=search=0 -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=ALIGN --strict-whitespace --match-full-lines
// ALIGN:{{^}}    #  op                                    change         collective      axis     bytes/rank       time
// ALIGN-NEXT:{{^}}    1  dt.redistribute (cost-report.mlir:{{[0-9][0-9]}}) P(sum) -> R    all_reduce      tp          6.0 KiB    18.0 us
// CHECK: memory per rank: arguments 36.0 KiB, largest live set {{.*}} KiB

// JSON: "bytes_per_rank": 6144
// JSON: "collective": "all_reduce"
// JSON: "function": "main"
// JSON: "arguments_bytes": 36864

// With a 10 GB/s, 50 us link: 6 x 50 us + 6144 B / 10 GB/s = 300.6 us.
// TOPO: P(sum) -> R all_reduce tp 6.0 KiB 300.6 us

// MISSING: error: cannot read topology file '{{.*}}missing'

dt.mesh @mesh = <["tp" = 4]>
func.func @main(
    %x: tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
    %w1: tensor<64x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w2: tensor<256x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %h_init = tensor.empty() : tensor<16x256xf32>
  %h_zero = linalg.fill ins(%zero : f32) outs(%h_init : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x256xf32>) outs(%h_zero : tensor<16x256xf32>) -> tensor<16x256xf32>
  %relu = arith.maximumf %h, %h_zero : tensor<16x256xf32>
  %y_init = tensor.empty() : tensor<16x64xf32>
  %y_zero = linalg.fill ins(%zero : f32) outs(%y_init : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = linalg.matmul ins(%relu, %w2 : tensor<16x256xf32>, tensor<256x64xf32>) outs(%y_zero : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// A collective in loops runs once per iteration: the row says how often one
// call runs it (the product of the constant trip counts around it), and the
// total counts every run. A loop whose trip count is not a constant is
// counted once, and said so.
// CHECK: dt-cost-report @layers on @mesh [tp=4]
// CHECK: dt.redistribute (cost-report.mlir:{{[0-9]+}}) P(sum) -> S(1) reduce_scatter tp 3.0 KiB 9.0 us x8 (in loops)
// CHECK: dt.redistribute (cost-report.mlir:{{[0-9]+}}) P(sum) -> S(1) reduce_scatter tp 3.0 KiB 9.0 us x? (a loop's trip count is not constant: counted once)
// CHECK: total: 2 collectives run 9+ times, 27.0 KiB per rank, 81.{{[0-9]}} us
// The contractions' compute counts every run too: 9 runs of a matmul split
// four ways (a partial product), each memory-bound on the default device
// (13 KiB per rank at 4 TB/s: 3.328 ns). The fills of their inits are
// memory-bound ops, counted per run as well: 9 writes of the whole 4 KiB
// (a partial product starts from a whole init) at 4 TB/s, 9.216 ns.
// CHECK: compute per rank: 2 contractions, 0.0 us, 2 memory-bound ops, 0.0 us
// JSON: "runs": 8
// JSON: "runs": null
// JSON: "compute_per_rank": {
// JSON-NEXT: "contraction_seconds": 2.9952{{0*[0-9]?}}e-08,
// JSON-NEXT: "contractions": 2,
// JSON-NEXT: "memory_bound_ops": 2,
// JSON-NEXT: "memory_bound_seconds": 9.21{{[0-9]*}}e-09,
// JSON-NEXT: "seconds": 3.9168{{0*[0-9]?}}e-08
// JSON: "function": "layers"
func.func @layers(
    %x: tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w: tensor<64x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}, %n: index)
    -> (tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %zero = arith.constant 0.0 : f32
  // 2 x ceil(7 / 2) = 8 runs.
  %a = scf.for %i = %c0 to %c2 step %c1 iter_args(%h0 = %x) -> tensor<16x64xf32> {
    %b = scf.for %j = %c0 to %c7 step %c2 iter_args(%h = %h0) -> tensor<16x64xf32> {
      %e = tensor.empty() : tensor<16x64xf32>
      %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
      %y = linalg.matmul ins(%h, %w : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
      scf.yield %y : tensor<16x64xf32>
    }
    scf.yield %b : tensor<16x64xf32>
  }
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%h = %a) -> tensor<16x64xf32> {
    %e = tensor.empty() : tensor<16x64xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
    %y = linalg.matmul ins(%h, %w : tensor<16x64xf32>, tensor<64x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
    scf.yield %y : tensor<16x64xf32>
  }
  return %r : tensor<16x64xf32>
}

// A value from outside a loop moves once, before it: the row says how many
// runs share it.
// CHECK: dt-cost-report @micro_batches on @mesh [tp=4]
// CHECK: dt.redistribute (cost-report.mlir:{{[0-9]+}}) S(0) -> R all_gather tp 6.0 MiB 26.{{[0-9]}} us (before a loop: once for its 4 runs)
// CHECK: total: 1 collective, 6.0 MiB per rank
// JSON: "shared_by_runs": 4
func.func @micro_batches(%x: tensor<4x8x2048xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                         %w: tensor<2048x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1024xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %g = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (tensor<8x1024xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 8, 2048] [1, 1, 1] : tensor<4x8x2048xf32> to tensor<8x2048xf32>
    %y = linalg.matmul ins(%xi, %w : tensor<8x2048xf32>, tensor<2048x1024xf32>) outs(%z : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    %m = linalg.max ins(%y, %acc : tensor<8x1024xf32>, tensor<8x1024xf32>) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    scf.yield %m : tensor<8x1024xf32>
  }
  return %g : tensor<8x1024xf32>
}

// Memory-bound ops stream their tensors on each rank, split as their
// shardings say: the exp reads and writes a quarter of x (16 KiB each way),
// the row sum reads that quarter and its 64 B init (which its body
// accumulates into) and writes 64 B, and the fill only writes its 64 B (its
// init is an empty tensor it writes over). The empty tensors, the constant
// and the reshape (a view) move nothing. 49344 B at 4 TB/s: 12.336 ns.
// CHECK-LABEL: dt-cost-report @memory_bound
// CHECK: compute per rank: 0 contractions, 0.0 us, 3 memory-bound ops, 0.0 us
// JSON: "memory_bound_ops": 3,
// JSON-NEXT: "memory_bound_seconds": 1.233{{5999[0-9]*|6}}e-08,
// JSON: "function": "memory_bound"
func.func @memory_bound(%x: tensor<64x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<64x1xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %y = math.exp %x : tensor<64x256xf32>
  %e = tensor.empty() : tensor<64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.reduce ins(%y : tensor<64x256xf32>) outs(%z : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %c = tensor.expand_shape %s [[0, 1]] output_shape [64, 1] : tensor<64xf32> into tensor<64x1xf32>
  return %c : tensor<64x1xf32>
}
