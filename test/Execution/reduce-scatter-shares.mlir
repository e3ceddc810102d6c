// reduce_scatter on the threads backend deals its runs (one per row before
// the scattered dim and member) out to the members in equal spans, so a
// member reduces other members' pieces too: with fewer rows than members,
// with spans that end mid-row, with uneven (torch.chunk) pieces whose
// padding is zeros, at dims 0, 1 and 2, for each reduction kind, on one
// axis of a 2-D mesh (groups of 3 members).
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=LOCAL
// LOCAL-COUNT-5: dt.reduce_scatter
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 6 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s %}
// CHECK-COUNT-5: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["a" = 2, "b" = 3]>
func.func @main(
    %rows: tensor<5x7xf32> {dt.sharding = #dt.sharding<@mesh, [R, P(sum)]>},
    %few: tensor<2x9x3xf32> {dt.sharding = #dt.sharding<@mesh, [R, P(max)]>},
    %first: tensor<7x5xf32> {dt.sharding = #dt.sharding<@mesh, [R, P(avg)]>},
    %last: tensor<3x4x8xf32> {dt.sharding = #dt.sharding<@mesh, [R, P(min)]>},
    %both: tensor<4x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), P(sum)]>})
    -> (tensor<5x7xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
        tensor<2x9x3xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
        tensor<7x5xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
        tensor<3x4x8xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(2)]>},
        tensor<4x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>}) {
  return %rows, %few, %first, %last, %both
      : tensor<5x7xf32>, tensor<2x9x3xf32>, tensor<7x5xf32>, tensor<3x4x8xf32>, tensor<4x10xf32>
}
