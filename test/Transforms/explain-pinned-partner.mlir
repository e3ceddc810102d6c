// Explanations name the partner of a joined all_reduce, and that partner
// can be a constrained value (a dt.constrain, the user's or a plan-search
// pin), which propagation erases when it rewrites the program: the
// explanations are written before that. Here the matmul's all_reduce joins
// the constrained %v6_p's. Written after the rewrite, the explanation read
// freed memory and crashed (found with plan_quality's seed-1 program 22).
// RUN: dt-opt %s -dt-propagate="explain search=0" -o /dev/null 2>&1 | FileCheck %s
// CHECK: :[[@LINE+10]]:9: remark: linalg.matmul, mesh axis "tp": chose (S(1), S(0), P(sum)) -> P(sum) [11.2 us with 0.6 us compute, its all_reduce in one call with that of {{.*}}explain-pinned-partner.mlir:[[@LINE+14]]:11]
// CHECK: :[[@LINE+16]]:9: remark: linalg.reduce, mesh axis "tp": chose (P(sum), P(sum)) -> P(sum)
dt.mesh @mesh = <["tp" = 4]>
func.func @p22(%a0: tensor<256x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}, %a1: tensor<256x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}, %a4: tensor<1024x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> (tensor<1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}, tensor<256x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %v2 = arith.addf %a0, %a1 : tensor<256x1024xf32>
  %e3 = tensor.empty() : tensor<1024x256xf32>
  %v3 = linalg.transpose ins(%a1 : tensor<256x1024xf32>) outs(%e3 : tensor<1024x256xf32>) permutation = [1, 0]
  %e5 = tensor.empty() : tensor<256x256xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<256x256xf32>) -> tensor<256x256xf32>
  %v5 = linalg.matmul ins(%v2, %a4 : tensor<256x1024xf32>, tensor<1024x256xf32>) outs(%z5 : tensor<256x256xf32>) -> tensor<256x256xf32>
  %e6 = tensor.empty() : tensor<1024x1024xf32>
  %z6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %v6 = linalg.matmul ins(%v3, %a1 : tensor<1024x256xf32>, tensor<256x1024xf32>) outs(%z6 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %v6_p = dt.constrain %v6 to #dt.sharding<@mesh, [P(sum)]> : tensor<1024x1024xf32>
  %e7 = tensor.empty() : tensor<1024xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1024xf32>) -> tensor<1024xf32>
  %v7 = linalg.reduce ins(%v6_p : tensor<1024x1024xf32>) outs(%z7 : tensor<1024xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %v8 = math.exp %v5 : tensor<256x256xf32>
  return %v7, %v8 : tensor<1024xf32>, tensor<256x256xf32>
}
