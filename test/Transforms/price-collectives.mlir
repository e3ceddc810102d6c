// dt-price-collectives records on each collective of the local program the
// alpha-beta estimate of one run (what dt-run --profile prints beside the
// time measured). The default link of a 4-rank axis is within a node: 3 us
// and 360 GB/s.
// RUN: not dt-opt %s -split-input-file -dt-price-collectives 2>/dev/null | FileCheck %s
// RUN: echo "tp 50 10" > %t.topology
// RUN: not dt-opt %s -split-input-file -dt-price-collectives="topology=%t.topology" 2>/dev/null | FileCheck %s --check-prefix=TOPO
// RUN: not dt-opt %s -split-input-file -dt-price-collectives 2>&1 >/dev/null | FileCheck %s --check-prefix=GLOBAL

dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @kinds
// all_reduce of 4 KiB over 4: 6 steps of 3 us and 1.5 x 4 KiB / 360 GB/s.
// CHECK: dt.all_reduce {{.*}} {dt.model_seconds = 1.80{{[0-9]*}}E-5 : f64}
// all_gather into 4 KiB: 3 steps and 3 KiB.
// CHECK: dt.all_gather {{.*}} {dt.model_seconds = 9.00{{[0-9]*}}E-6 : f64}
// reduce_scatter of 4 KiB: 3 steps and 3 KiB.
// CHECK: dt.reduce_scatter {{.*}} {dt.model_seconds = 9.00{{[0-9]*}}E-6 : f64}
// all_to_all of 4 KiB: one 1 KiB piece to each of the 3 others, in 3 steps.
// CHECK: dt.all_to_all {{.*}} {dt.model_seconds = 9.00{{[0-9]*}}E-6 : f64}
// A local slice moves nothing between ranks.
// CHECK: dt.local_slice {{.*}} {dt.model_seconds = 0.000000e+00 : f64}
// TOPO-LABEL: func.func @kinds
// TOPO: dt.all_reduce {{.*}} {dt.model_seconds = 3.00{{[0-9]*}}E-4 : f64}
func.func @kinds(%a: tensor<32x32xf32>, %b: tensor<8x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x32xf32>, tensor<128x8xf32>, tensor<8x32xf32>) {
  %r = dt.all_reduce %a on @mesh ["tp"] sum : tensor<32x32xf32> -> tensor<32x32xf32>
  %g = dt.all_gather %b on @mesh ["tp"] dim 0 : tensor<8x32xf32> -> tensor<32x32xf32>
  %s = dt.reduce_scatter %a on @mesh ["tp"] sum dim 0 : tensor<32x32xf32> -> tensor<8x32xf32>
  %t = dt.all_to_all %a on @mesh ["tp"] split 1 concat 0 : tensor<32x32xf32> -> tensor<128x8xf32>
  %l = dt.local_slice %a on @mesh ["tp"] dim 0 : tensor<32x32xf32> -> tensor<8x32xf32>
  return %r, %g, %s, %t, %l : tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x32xf32>, tensor<128x8xf32>, tensor<8x32xf32>
}

// -----

// The global form has no local sizes to price.
dt.mesh @mesh = <["tp" = 4]>
// GLOBAL: error: 'dt.all_reduce' op is still in global form: run dt-partition before dt-price-collectives
func.func @global(%a: tensor<32xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<32xf32, #dt.sharding<@mesh, [R]>> {
  %r = dt.all_reduce %a on @mesh ["tp"] sum : tensor<32xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<32xf32, #dt.sharding<@mesh, [R]>>
  return %r : tensor<32xf32, #dt.sharding<@mesh, [R]>>
}
