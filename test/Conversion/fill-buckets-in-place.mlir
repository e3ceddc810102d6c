// RUN: dt-opt %s -dt-fill-buckets-in-place -split-input-file | FileCheck %s

// A bucket of two gradients, as bufferization leaves a combined
// all_reduce's concat: each member is made in its run of the bucket, which
// becomes bytes allocated before the first member; the copies go.
// CHECK-LABEL: func.func @bucket
// CHECK: %[[BYTES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<17408xi8>
// CHECK: %[[BUCKET:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<17408xi8> to memref<4352xf32>
// CHECK: %[[G:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<17408xi8> to memref<16x256xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[G]] : memref<16x256xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : memref<16x8xf32>, memref<8x256xf32>) outs(%[[G]] : memref<16x256xf32>)
// CHECK: %[[B:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<17408xi8> to memref<256xf32>
// CHECK-NEXT: linalg.reduce ins(%arg1 : memref<8x256xf32>) outs(%[[B]] : memref<256xf32>)
// CHECK-NOT: memref.copy
// CHECK: memref.cast %[[BUCKET]] : memref<4352xf32> to memref<*xf32>
// CHECK: call @consume
func.func private @consume(memref<*xf32>)
func.func @bucket(%x: memref<16x8xf32>, %y: memref<8x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %g = memref.alloc() {alignment = 64 : i64} : memref<16x256xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<16x256xf32>)
  linalg.matmul ins(%x, %y : memref<16x8xf32>, memref<8x256xf32>) outs(%g : memref<16x256xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.reduce ins(%y : memref<8x256xf32>) outs(%b : memref<256xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %flat = memref.collapse_shape %g [[0, 1]] : memref<16x256xf32> into memref<4096xf32>
  %bucket = memref.alloc() {alignment = 64 : i64} : memref<4352xf32>
  %r0 = memref.subview %bucket[0] [4096] [1] : memref<4352xf32> to memref<4096xf32, strided<[1]>>
  memref.copy %flat, %r0 : memref<4096xf32> to memref<4096xf32, strided<[1]>>
  %r1 = memref.subview %bucket[4096] [256] [1] : memref<4352xf32> to memref<256xf32, strided<[1], offset: 4096>>
  memref.copy %b, %r1 : memref<256xf32> to memref<256xf32, strided<[1], offset: 4096>>
  %cast = memref.cast %bucket : memref<4352xf32> to memref<*xf32>
  call @consume(%cast) : (memref<*xf32>) -> ()
  return
}

// -----

// Members that stay copies: an argument (the caller's buffer); a temporary
// read after its copy; one whose run starts 4 bytes past a multiple of 64;
// and one allocated before an op that reads the bucket (its run would
// change under the reader). The one with nothing against it is made in
// place.
// CHECK-LABEL: func.func @kept
// CHECK: %[[BYTES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1028xi8>
// CHECK-COUNT-3: memref.copy
// CHECK: call @read
// CHECK: %[[FREE:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<1028xi8> to memref<16xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[FREE]] : memref<16xf32>)
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<16xf32> to memref<16xf32, strided<[1], offset: 160>>
// CHECK-NOT: memref.copy
// CHECK: return
func.func private @read(memref<*xf32>)
func.func @kept(%arg: memref<64xf32>) {
  %one = arith.constant 1.0 : f32
  %early = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.fill ins(%one : f32) outs(%early : memref<16xf32>)
  %reread = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.fill ins(%one : f32) outs(%reread : memref<64xf32>)
  %odd = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.fill ins(%one : f32) outs(%odd : memref<16xf32>)
  %bucket = memref.alloc() {alignment = 64 : i64} : memref<257xf32>
  %r0 = memref.subview %bucket[0] [64] [1] : memref<257xf32> to memref<64xf32, strided<[1]>>
  memref.copy %arg, %r0 : memref<64xf32> to memref<64xf32, strided<[1]>>
  %r1 = memref.subview %bucket[64] [64] [1] : memref<257xf32> to memref<64xf32, strided<[1], offset: 64>>
  memref.copy %reread, %r1 : memref<64xf32> to memref<64xf32, strided<[1], offset: 64>>
  %r2 = memref.subview %bucket[129] [16] [1] : memref<257xf32> to memref<16xf32, strided<[1], offset: 129>>
  memref.copy %odd, %r2 : memref<16xf32> to memref<16xf32, strided<[1], offset: 129>>
  %peek = memref.cast %bucket : memref<257xf32> to memref<*xf32>
  call @read(%peek) : (memref<*xf32>) -> ()
  %free = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.fill ins(%one : f32) outs(%free : memref<16xf32>)
  %r3 = memref.subview %bucket[160] [16] [1] : memref<257xf32> to memref<16xf32, strided<[1], offset: 160>>
  memref.copy %early, %r3 : memref<16xf32> to memref<16xf32, strided<[1], offset: 160>>
  %r4 = memref.subview %bucket[240] [16] [1] : memref<257xf32> to memref<16xf32, strided<[1], offset: 240>>
  memref.copy %free, %r4 : memref<16xf32> to memref<16xf32, strided<[1], offset: 240>>
  %again = memref.cast %reread : memref<64xf32> to memref<*xf32>
  call @read(%again) : (memref<*xf32>) -> ()
  call @read(%peek) : (memref<*xf32>) -> ()
  return
}
