// dt-emulate-gpu-on-cpu runs threads that cooperate: the kernel's body is
// cut into phases at its synchronizations, each phase runs for every
// thread of the block before the next, and values cross in per-thread
// slots. Run here through upstream's CPU lowering and mlir-runner, each
// result against what CUDA defines (two blocks of 8 threads; thread t of
// block b holds v = 10 t).
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu | FileCheck %s
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu | mlir-opt %lower_to_llvm | %run_driver | FileCheck %s --check-prefix=RAN
// A synchronization that not every thread of the block reaches fails with
// the kernel's location instead of computing from stale slots.
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu | mlir-opt %lower_to_llvm | not --crash mlir-runner -e divergent -entry-point-result=void -shared-libs=%runner_libs 2>&1 | FileCheck %s --check-prefix=DIVERGENT
// DIVERGENT: error: emulated GPU kernel at {{.*}}emulate-gpu.mlir:{{[0-9]+}}:{{[0-9]+}}: thread 4 of block 0 does not reach a gpu.all_reduce that others of its block reach
// Threads that touch an element another thread wrote, with no barrier of
// their block between (or in another block), race: the run stops. The
// exchange through %seen across a gpu.barrier above is not one.
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu | mlir-opt %lower_to_llvm | not --crash mlir-runner -e race -entry-point-result=void -shared-libs=%runner_libs 2>&1 | FileCheck %s --check-prefix=RACE
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu | mlir-opt %lower_to_llvm | not --crash mlir-runner -e race_across_blocks -entry-point-result=void -shared-libs=%runner_libs 2>&1 | FileCheck %s --check-prefix=BLOCKS
// What a barrier orders within block 0 still races with block 1.
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu | mlir-opt %lower_to_llvm | not --crash mlir-runner -e race_after_barrier -entry-point-result=void -shared-libs=%runner_libs 2>&1 | FileCheck %s --check-prefix=AFTER
// AFTER: error: emulated GPU kernel at {{.*}}emulate-gpu.mlir:{{[0-9]+}}:{{[0-9]+}}: a race on an element of a memref<4xi32>: thread 0 of block 1 reads it after thread 1 of block 0 touched it
// Two views of one buffer share its shadow: a read through a shifted
// subview meets the neighbour's write through the whole.
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu | mlir-opt %lower_to_llvm | not --crash mlir-runner -e race_through_views -entry-point-result=void -shared-libs=%runner_libs 2>&1 | FileCheck %s --check-prefix=VIEWS
// VIEWS: error: emulated GPU kernel at {{.*}}emulate-gpu.mlir:{{[0-9]+}}:{{[0-9]+}}: a race on an element of a memref<8xi32>: thread 1 of block 0 writes it after thread 0 of block 0 touched it
// RACE: error: emulated GPU kernel at {{.*}}emulate-gpu.mlir:{{[0-9]+}}:{{[0-9]+}}: a race on an element of a memref<4xi32>: thread 1 of block 0 writes it after thread 0 of block 0 touched it, one of them writing, with no gpu.barrier or gpu.all_reduce of their block between
// BLOCKS: error: emulated GPU kernel at {{.*}}emulate-gpu.mlir:{{[0-9]+}}:{{[0-9]+}}: a race on an element of a memref<4xi32>: thread 0 of block 1 reads it after thread 0 of block 0 touched it

// The launch is loops: blocks, then one loop nest over the threads per
// phase; a shuffle's value and whether its thread got there go to slots at
// the end of one phase, and the partner's are read at the start of the next.
// Every load and store of a buffer from outside checks and updates the
// element's shadow (who touched it in this launch).
// CHECK-LABEL: func.func @one_shuffle
// CHECK-NOT: gpu.
// Scratch for the shuffle's operands (made in the phase before), then its
// slots.
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT: memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK-NEXT: memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK-NEXT: %[[VALUES:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT: %[[PUBLISHED:.*]] = memref.alloc(%{{.*}}) : memref<?xi1>
// CHECK-NEXT: %[[SHADOW:.*]] = memref.alloc() : memref<32xi64>
// CHECK: linalg.fill ins(%{{.*}} : i64) outs(%[[SHADOW]] : memref<32xi64>)
// CHECK: scf.for
// CHECK: memref.store %false, %[[PUBLISHED]]
// CHECK: scf.for
// CHECK: memref.load %[[SHADOW]]
// CHECK: llvm.call @dprintf
// CHECK: memref.store %{{.*}}, %[[SHADOW]]
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %[[VALUES]][%[[T:.*]]]
// CHECK: memref.store %true{{[_0-9]*}}, %[[PUBLISHED]][%[[T]]]
// CHECK: scf.for
// CHECK: arith.xori
// CHECK: memref.load %[[PUBLISHED]]
// CHECK: memref.load %[[VALUES]]
// CHECK: memref.load %[[SHADOW]]
// CHECK: memref.store %{{.*}}, %[[SHADOW]]
// CHECK: memref.store %{{.*}}, %arg0
// CHECK: memref.dealloc %[[VALUES]]
// CHECK: memref.dealloc %[[PUBLISHED]]
// CHECK: memref.dealloc %[[SHADOW]]
// CHECK-NOT: gpu.
// CHECK: return
func.func @one_shuffle(%x: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    %o = arith.constant 1 : i32
    %w = arith.constant 32 : i32
    %s, %valid = gpu.shuffle xor %v, %o, %w : f32
    memref.store %s, %x[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}

// Rows of the result, each over the 16 threads (block 0, then block 1):
// RAN-LABEL: sizes = [9, 16]
// gpu.shuffle xor 1 in segments of 8: the neighbour's value.
// RAN-NEXT: {{\[\[}}10, 0, 30, 20, 50, 40, 70, 60, 10, 0, 30, 20, 50, 40, 70, 60],
// gpu.shuffle down 3 in segments of 4: lane 0 gets lane 3's; the others
// have no partner (valid is false) and keep their own.
// RAN-NEXT: [30, 10, 20, 30, 70, 50, 60, 70, 30, 10, 20, 30, 70, 50, 60, 70],
// gpu.shuffle up 2 in segments of 8.
// RAN-NEXT: [0, 10, 0, 10, 20, 30, 40, 50, 0, 10, 0, 10, 20, 30, 40, 50],
// gpu.shuffle idx 5: lane 5's.
// RAN-NEXT: [50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50],
// gpu.all_reduce add of t + 1 + 100 b (36 and 836), plus 2 t computed
// before it (kept across the phases).
// RAN-NEXT: [36, 38, 40, 42, 44, 46, 48, 50, 836, 838, 840, 842, 844, 846, 848, 850],
// gpu.all_reduce with a body: the product of t + 1.
// RAN-NEXT: [40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320, 40320],
// gpu.barrier: the next thread's write (v + b) is visible after it.
// RAN-NEXT: [10, 20, 30, 40, 50, 60, 70, 0, 11, 21, 31, 41, 51, 61, 71, 1],
// A shuffle (xor 2, segments of 4) under a guard that the first four
// threads take; -1 from the others.
// RAN-NEXT: [20, 30, 0, 10, -1, -1, -1, -1, 20, 30, 0, 10, -1, -1, -1, -1],
// The down shuffle's valid flags.
// RAN-NEXT: [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]]
func.func @dt_test_driver() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<9x16xi32>
  %seen = memref.alloc() : memref<16xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %i1 = arith.constant 1 : i32
    %i2 = arith.constant 2 : i32
    %i3 = arith.constant 3 : i32
    %i4 = arith.constant 4 : i32
    %i5 = arith.constant 5 : i32
    %i8 = arith.constant 8 : i32
    %i10 = arith.constant 10 : i32
    %i100 = arith.constant 100 : i32
    %minus1 = arith.constant -1 : i32
    %r0 = arith.constant 0 : index
    %r1 = arith.constant 1 : index
    %r2 = arith.constant 2 : index
    %r3 = arith.constant 3 : index
    %r4 = arith.constant 4 : index
    %r5 = arith.constant 5 : index
    %r6 = arith.constant 6 : index
    %r7 = arith.constant 7 : index
    %r8 = arith.constant 8 : index
    %eight = arith.constant 8 : index
    %col0 = arith.muli %bx, %eight : index
    %col = arith.addi %col0, %tx : index
    %t = arith.index_cast %tx : index to i32
    %b = arith.index_cast %bx : index to i32
    %v = arith.muli %t, %i10 : i32

    %x, %xv = gpu.shuffle xor %v, %i1, %i8 : i32
    memref.store %x, %out[%r0, %col] : memref<9x16xi32>
    %d, %dv = gpu.shuffle down %v, %i3, %i4 : i32
    memref.store %d, %out[%r1, %col] : memref<9x16xi32>
    %dvi = arith.extui %dv : i1 to i32
    memref.store %dvi, %out[%r8, %col] : memref<9x16xi32>
    %u, %uv = gpu.shuffle up %v, %i2, %i8 : i32
    memref.store %u, %out[%r2, %col] : memref<9x16xi32>
    %k, %kv = gpu.shuffle idx %v, %i5, %i8 : i32
    memref.store %k, %out[%r3, %col] : memref<9x16xi32>

    %own = arith.muli %t, %i2 : i32
    %t1 = arith.addi %t, %i1 : i32
    %b100 = arith.muli %b, %i100 : i32
    %w = arith.addi %t1, %b100 : i32
    %sum = gpu.all_reduce add %w uniform {} : (i32) -> (i32)
    %withOwn = arith.addi %sum, %own : i32
    memref.store %withOwn, %out[%r4, %col] : memref<9x16xi32>
    %prod = gpu.all_reduce %t1 {
    ^bb0(%l: i32, %r: i32):
      %m = arith.muli %l, %r : i32
      gpu.yield %m : i32
    } : (i32) -> (i32)
    memref.store %prod, %out[%r5, %col] : memref<9x16xi32>

    %vb = arith.addi %v, %b : i32
    memref.store %vb, %seen[%col] : memref<16xi32>
    gpu.barrier
    %next0 = arith.addi %tx, %r1 : index
    %next1 = arith.remui %next0, %eight : index
    %next = arith.addi %col0, %next1 : index
    %n = memref.load %seen[%next] : memref<16xi32>
    memref.store %n, %out[%r6, %col] : memref<9x16xi32>

    %first = arith.cmpi ult, %tx, %r4 : index
    scf.if %first {
      %g, %gv = gpu.shuffle xor %v, %i2, %i4 : i32
      memref.store %g, %out[%r7, %col] : memref<9x16xi32>
    }
    %rest = arith.cmpi uge, %tx, %r4 : index
    scf.if %rest {
      memref.store %minus1, %out[%r7, %col] : memref<9x16xi32>
    }
    gpu.terminator
  }
  %print = memref.cast %out : memref<9x16xi32> to memref<*xi32>
  call @printMemrefI32(%print) : (memref<*xi32>) -> ()
  memref.dealloc %out : memref<9x16xi32>
  memref.dealloc %seen : memref<16xi32>
  return
}

func.func @divergent() {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %half = arith.constant 4 : index
    %low = arith.cmpi ult, %tx, %half : index
    scf.if %low {
      %one = arith.constant 1 : i32
      %sum = gpu.all_reduce add %one uniform {} : (i32) -> (i32)
      memref.store %sum, %out[%tx] : memref<8xi32>
    }
    gpu.terminator
  }
  memref.dealloc %out : memref<8xi32>
  return
}

// Every thread writes element 0.
func.func @race() {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<4xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0 : index
    %t = arith.index_cast %tx : index to i32
    memref.store %t, %out[%zero] : memref<4xi32>
    gpu.terminator
  }
  memref.dealloc %out : memref<4xi32>
  return
}

// Block 1 reads what block 0 wrote: a barrier orders a block only.
func.func @race_across_blocks() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %out = memref.alloc() : memref<4xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0 : index
    %one = arith.constant 1 : index
    %first = arith.cmpi eq, %bx, %zero : index
    scf.if %first {
      %seven = arith.constant 7 : i32
      memref.store %seven, %out[%zero] : memref<4xi32>
    }
    gpu.barrier
    %second = arith.cmpi eq, %bx, %one : index
    scf.if %second {
      %v = memref.load %out[%zero] : memref<4xi32>
      memref.store %v, %out[%one] : memref<4xi32>
    }
    gpu.terminator
  }
  memref.dealloc %out : memref<4xi32>
  return
}

// Thread t reads x[t + 1] through a view, then writes x[t].
func.func @race_through_views() {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %x = memref.alloc() : memref<9xi32>
  %shifted = memref.subview %x[1] [8] [1] : memref<9xi32> to memref<8xi32, strided<[1], offset: 1>>
  %head = memref.subview %x[0] [8] [1] : memref<9xi32> to memref<8xi32, strided<[1]>>
  %whole = memref.cast %head : memref<8xi32, strided<[1]>> to memref<8xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %shifted[%tx] : memref<8xi32, strided<[1], offset: 1>>
    memref.store %v, %whole[%tx] : memref<8xi32>
    gpu.terminator
  }
  memref.dealloc %x : memref<9xi32>
  return
}

// Block 0: thread 0 writes x[0], a barrier, thread 1 reads it (ordered);
// block 1: thread 0 reads x[0], which block 0 wrote.
func.func @race_after_barrier() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %out = memref.alloc() : memref<4xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0 : index
    %one = arith.constant 1 : index
    %two = arith.constant 2 : index
    %b0 = arith.cmpi eq, %bx, %zero : index
    %t0 = arith.cmpi eq, %tx, %zero : index
    %t1 = arith.cmpi eq, %tx, %one : index
    %writer = arith.andi %b0, %t0 : i1
    scf.if %writer {
      %seven = arith.constant 7 : i32
      memref.store %seven, %out[%zero] : memref<4xi32>
    }
    gpu.barrier
    %reader = arith.andi %b0, %t1 : i1
    scf.if %reader {
      %v = memref.load %out[%zero] : memref<4xi32>
      memref.store %v, %out[%one] : memref<4xi32>
    }
    %b1 = arith.cmpi eq, %bx, %one : index
    %late = arith.andi %b1, %t0 : i1
    scf.if %late {
      %v = memref.load %out[%zero] : memref<4xi32>
      memref.store %v, %out[%two] : memref<4xi32>
    }
    gpu.terminator
  }
  memref.dealloc %out : memref<4xi32>
  return
}
