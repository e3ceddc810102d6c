// Each rank shares the chunks of its large kernels (dt-parallel-kernels)
// among threads: dt-run --kernel-threads=N, by default the CPUs the process
// may use shared out among the ranks on this machine (at least one each).
// A masked softmax over 512x384 rows on dp=2 (each rank's kernels, 256x384,
// cut along the rows: the mask, 9 operations an element, into 32 chunks,
// the others into 4; the mask reads the row's global index); @single, the
// whole of it on one rank.
// RUN: dt-compile %s --explain -o %t.so 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: cut along loop d0 into 32 chunks of 8 for the rank's kernel threads
// EXPLAIN: remark: cut along loop d0 into 4 chunks of 64 for the rank's kernel threads
// EXPLAIN: remark: cut along loop d0 into 64 chunks of 8 for the rank's kernel threads
// EXPLAIN: remark: cut along loop d0 into 8 chunks of 64 for the rank's kernel threads
// DT_KERNEL_SHARE=1 gives each kernel to every thread (by default one this
// small would stay on the rank's: 524288 operations a thread).
// RUN: env DT_KERNEL_SHARE=1 dt-run %t.so --seed 3 --kernel-threads=3 --verify --strict --output-dir %t.three | FileCheck %s --check-prefix=THREE
// THREE: dt-run: main on 2 ranks (threads backend), mesh dp=2; matmuls on {{[0-9]+}} OpenBLAS thread{{s?}} a rank, kernels on 3 threads
// THREE: result #0 (y) 512x384 f32: {{.*}}: ok
// THREE: verify: PASS
// The chunks write disjoint elements, each computed as on one thread: the
// same bits whatever the count.
// RUN: dt-run %t.so --seed 3 --kernel-threads=1 --output-dir %t.one
// RUN: cmp %t.three/result0.npy %t.one/result0.npy
// RUN: dt-run %t.so --entry=single --seed 3 --kernel-threads=1 --output-dir %t.single1
// RUN: env DT_KERNEL_SHARE=1 dt-run %t.so --entry=single --seed 3 --kernel-threads=5 --output-dir %t.single5
// RUN: cmp %t.single1/result0.npy %t.single5/result0.npy
// Against upstream mlir-runner's loops, on 3 threads a rank.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: env DT_KERNEL_SHARE=1 %npy pattern-run %dt_run %s --kernel-threads=3 > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// By default, one CPU shared by two ranks: one thread each; two CPUs for
// one rank: two.
// RUN: taskset -c %one_cpu dt-run %t.so --seed 3 | FileCheck %s --check-prefix=ONE
// ONE: kernels on 1 thread{{$}}
// RUN: %if cpus2 %{ taskset -c %two_cpus dt-run %t.so --seed 3 | FileCheck %s --check-prefix=ONE %}
// RUN: %if cpus2 %{ taskset -c %two_cpus dt-run %t.so --entry=single --seed 3 --verify | FileCheck %s --check-prefix=SINGLE %}
// SINGLE: dt-run: single on 1 rank (threads backend), mesh (no mesh); matmuls on 2 OpenBLAS threads a rank, kernels on 2 threads
// SINGLE: verify: PASS
// Under mpirun, the ranks on this machine share its CPUs the same way.
// RUN: %if cpus2 && mpi %{ taskset -c %two_cpus %mpirun -np 2 dt-run %t.so --backend=mpi --seed 3 --verify --kernel-threads=2 | FileCheck %s --check-prefix=MPI %}
// MPI: dt-run: main on 2 ranks (mpi backend), mesh dp=2; matmuls on 1 OpenBLAS thread a rank, kernels on 2 threads
// MPI: verify: PASS
// RUN: not dt-run %t.so --seed 3 --kernel-threads=0 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: dt-run: --kernel-threads takes a positive integer, got '0'
dt.mesh @mesh = <["dp" = 2]>
#id = affine_map<(i, j) -> (i, j)>
// Row i keeps its first i mod 384 + 1 columns, shifted by i / 1000.
func.func @main(%x: tensor<512x384xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<512x384xf32> {dt.name = "y", dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %e = tensor.empty() : tensor<512x384xf32>
  %masked = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<512x384xf32>) outs(%e : tensor<512x384xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %c384 = arith.constant 384 : index
      %col = arith.remui %i, %c384 : index
      %keep = arith.cmpi ule, %j, %col : index
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f32
      %milli = arith.constant 0.001 : f32
      %shift = arith.mulf %fi, %milli : f32
      %v = arith.addf %a, %shift : f32
      %low = arith.constant -30.0 : f32
      %r = arith.select %keep, %v, %low : f32
      linalg.yield %r : f32
  } -> tensor<512x384xf32>
  %lowest = arith.constant -3.0e38 : f32
  %me = tensor.empty() : tensor<512xf32>
  %m0 = linalg.fill ins(%lowest : f32) outs(%me : tensor<512xf32>) -> tensor<512xf32>
  %m = linalg.reduce { arith.maximumf } ins(%masked : tensor<512x384xf32>) outs(%m0 : tensor<512xf32>) dimensions = [1]
  %mb = linalg.broadcast ins(%m : tensor<512xf32>) outs(%e : tensor<512x384xf32>) dimensions = [1]
  %d = arith.subf %masked, %mb : tensor<512x384xf32>
  %ex = math.exp %d : tensor<512x384xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = linalg.fill ins(%zero : f32) outs(%me : tensor<512xf32>) -> tensor<512xf32>
  %s = linalg.reduce { arith.addf } ins(%ex : tensor<512x384xf32>) outs(%s0 : tensor<512xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%s : tensor<512xf32>) outs(%e : tensor<512x384xf32>) dimensions = [1]
  %y = arith.divf %ex, %sb : tensor<512x384xf32>
  return %y : tensor<512x384xf32>
}
// The same, on one rank.
func.func @single(%x: tensor<512x384xf32>) -> tensor<512x384xf32> {
  %e = tensor.empty() : tensor<512x384xf32>
  %masked = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<512x384xf32>) outs(%e : tensor<512x384xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %c384 = arith.constant 384 : index
      %col = arith.remui %i, %c384 : index
      %keep = arith.cmpi ule, %j, %col : index
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f32
      %milli = arith.constant 0.001 : f32
      %shift = arith.mulf %fi, %milli : f32
      %v = arith.addf %a, %shift : f32
      %low = arith.constant -30.0 : f32
      %r = arith.select %keep, %v, %low : f32
      linalg.yield %r : f32
  } -> tensor<512x384xf32>
  %lowest = arith.constant -3.0e38 : f32
  %me = tensor.empty() : tensor<512xf32>
  %m0 = linalg.fill ins(%lowest : f32) outs(%me : tensor<512xf32>) -> tensor<512xf32>
  %m = linalg.reduce { arith.maximumf } ins(%masked : tensor<512x384xf32>) outs(%m0 : tensor<512xf32>) dimensions = [1]
  %mb = linalg.broadcast ins(%m : tensor<512xf32>) outs(%e : tensor<512x384xf32>) dimensions = [1]
  %d = arith.subf %masked, %mb : tensor<512x384xf32>
  %ex = math.exp %d : tensor<512x384xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = linalg.fill ins(%zero : f32) outs(%me : tensor<512xf32>) -> tensor<512xf32>
  %s = linalg.reduce { arith.addf } ins(%ex : tensor<512x384xf32>) outs(%s0 : tensor<512xf32>) dimensions = [1]
  %sb = linalg.broadcast ins(%s : tensor<512xf32>) outs(%e : tensor<512x384xf32>) dimensions = [1]
  %y = arith.divf %ex, %sb : tensor<512x384xf32>
  return %y : tensor<512x384xf32>
}
