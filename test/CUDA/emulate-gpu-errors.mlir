// Kernels dt-emulate-gpu-on-cpu cannot cut into phases get an error naming
// the op (dt's own passes make none of them).
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu -split-input-file -verify-diagnostics

func.func @sync_in_loop(%x: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @below {{a synchronization inside 'scf.for'; only a launch's body and scf.ifs without results or else branch may hold them}}
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

func.func @sync_in_if_else(%x: memref<32xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @below {{a synchronization inside 'scf.if'}}
    scf.if %c {
      gpu.barrier
    } else {
      %z = arith.constant 0.0 : f32
      memref.store %z, %x[%tx] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}

// -----

func.func @subgroup_reduce(%x: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    // expected-error @below {{gpu.subgroup_reduce is not emulated}}
    %s = gpu.subgroup_reduce add %v : (f32) -> f32
    memref.store %s, %x[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @view_across_barrier(%x: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @below {{a 'memref<32xf32, strided<[1], offset: ?>>' value is used across a synchronization}}
    %half = memref.subview %x[%tx] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1], offset: ?>>
    gpu.barrier
    %v = memref.load %half[%tx] : memref<32xf32, strided<[1], offset: ?>>
    memref.store %v, %x[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @shared_memory(%x: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @below {{shared or private memory attributions are not emulated}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<32xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}

// -----

// A wait whose handle is not a bracket's end around one collective.
func.func @torn_bracket(%in: memref<8xf32>, %out: memref<8xf32>) {
  %axes = arith.constant 1 : i32
  %sum = arith.constant 0 : i32
  %ci = memref.cast %in : memref<8xf32> to memref<*xf32>
  %co = memref.cast %out : memref<8xf32> to memref<*xf32>
  call @dt_rt_all_reduce_f32(%ci, %co, %axes, %sum) : (memref<*xf32>, memref<*xf32>, i32, i32) -> ()
  %h = call @dt_rt_gpu_collectives_end() : () -> i64
  // expected-error @below {{expected a collectives wait in the block of its bracket `begin; collective(in, out, ...); end`}}
  call @dt_rt_gpu_collectives_wait(%h) : (i64) -> ()
  return
}
func.func private @dt_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i32, i32)
func.func private @dt_rt_gpu_collectives_end() -> i64
func.func private @dt_rt_gpu_collectives_wait(i64)

// -----

// A bracket that nothing waits for.
func.func @unwaited(%in: memref<8xf32>, %out: memref<8xf32>) {
  %axes = arith.constant 1 : i32
  %sum = arith.constant 0 : i32
  %ci = memref.cast %in : memref<8xf32> to memref<*xf32>
  %co = memref.cast %out : memref<8xf32> to memref<*xf32>
  // expected-error @below {{a collectives bracket without its wait}}
  call @dt_rt_gpu_collectives_begin() : () -> ()
  call @dt_rt_all_reduce_f32(%ci, %co, %axes, %sum) : (memref<*xf32>, memref<*xf32>, i32, i32) -> ()
  %h = call @dt_rt_gpu_collectives_end() : () -> i64
  return
}
func.func private @dt_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i32, i32)
func.func private @dt_rt_gpu_collectives_begin()
func.func private @dt_rt_gpu_collectives_end() -> i64
