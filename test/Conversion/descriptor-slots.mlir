// RUN: dt-opt %s -dt-descriptor-slots -split-input-file | FileCheck %s

!desc = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
llvm.func @dt_rt_copy(i64, !llvm.ptr, i64, !llvm.ptr)
llvm.func @dt_rt_scale(i64, !llvm.ptr)
llvm.func @other(!llvm.ptr)

// Two calls one after the other, each taking two descriptors: the second
// call's reuse the first's two slots, made at the start of the entry block.
// CHECK-LABEL: llvm.func @two_calls
// CHECK: %[[N1:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[S1:.*]] = llvm.alloca %[[N1]] x !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> {alignment = 8 : i64}
// CHECK-NEXT: %[[N2:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[S2:.*]] = llvm.alloca %[[N2]] x !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> {alignment = 8 : i64}
// CHECK-NOT: llvm.alloca
// CHECK: llvm.store %{{.*}}, %[[S1]] :
// CHECK: llvm.store %{{.*}}, %[[S2]] :
// CHECK: llvm.call @dt_rt_copy(%{{.*}}, %[[S1]], %{{.*}}, %[[S2]])
// CHECK: llvm.store %{{.*}}, %[[S2]] :
// CHECK: llvm.store %{{.*}}, %[[S1]] :
// CHECK: llvm.call @dt_rt_copy(%{{.*}}, %[[S2]], %{{.*}}, %[[S1]])
llvm.func @two_calls(%d: !desc, %rank: i64) {
  %one = llvm.mlir.constant(1 : i64) : i64
  %a = llvm.alloca %one x !desc {alignment = 8 : i64} : (i64) -> !llvm.ptr
  llvm.store %d, %a : !desc, !llvm.ptr
  %b = llvm.alloca %one x !desc {alignment = 8 : i64} : (i64) -> !llvm.ptr
  llvm.store %d, %b : !desc, !llvm.ptr
  llvm.call @dt_rt_copy(%rank, %a, %rank, %b) : (i64, !llvm.ptr, i64, !llvm.ptr) -> ()
  %c = llvm.alloca %one x !desc {alignment = 8 : i64} : (i64) -> !llvm.ptr
  llvm.store %d, %c : !desc, !llvm.ptr
  %e = llvm.alloca %one x !desc {alignment = 8 : i64} : (i64) -> !llvm.ptr
  llvm.store %d, %e : !desc, !llvm.ptr
  llvm.call @dt_rt_copy(%rank, %c, %rank, %e) : (i64, !llvm.ptr, i64, !llvm.ptr) -> ()
  llvm.return
}

// -----

!desc = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
llvm.func @dt_rt_scale(i64, !llvm.ptr)

// A descriptor made in a loop's body, through the unranked descriptor's
// aggregate, moves to the entry block: it no longer grows the stack at
// every trip.
// CHECK-LABEL: llvm.func @in_loop
// CHECK: llvm.alloca
// CHECK-NOT: llvm.alloca
// CHECK: ^bb1(
// CHECK: llvm.call @dt_rt_scale
llvm.func @in_loop(%d: !desc, %n: i64) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%zero : i64)
^bb1(%i: i64):
  %a = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %d, %a : !desc, !llvm.ptr
  %u0 = llvm.mlir.poison : !llvm.struct<(i64, ptr)>
  %u1 = llvm.insertvalue %one, %u0[0] : !llvm.struct<(i64, ptr)>
  %u2 = llvm.insertvalue %a, %u1[1] : !llvm.struct<(i64, ptr)>
  %r = llvm.extractvalue %u2[0] : !llvm.struct<(i64, ptr)>
  %p = llvm.extractvalue %u2[1] : !llvm.struct<(i64, ptr)>
  llvm.call @dt_rt_scale(%r, %p) : (i64, !llvm.ptr) -> ()
  %next = llvm.add %i, %one : i64
  %more = llvm.icmp "slt" %next, %n : i64
  llvm.cond_br %more, ^bb1(%next : i64), ^bb2
^bb2:
  llvm.return
}

// -----

!desc = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
llvm.func @other(!llvm.ptr)

// A function that is not the runtime's may keep the pointer; a pointer
// stored into memory may be read later: both allocas stay where they are.
// CHECK-LABEL: llvm.func @escapes
// CHECK: llvm.store
// CHECK: llvm.alloca
// CHECK: llvm.call @other
// CHECK: llvm.alloca
// CHECK: llvm.store %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr
llvm.func @escapes(%d: !desc, %out: !llvm.ptr) {
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.store %d, %out : !desc, !llvm.ptr
  %a = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.call @other(%a) : (!llvm.ptr) -> ()
  %b = llvm.alloca %one x !desc : (i64) -> !llvm.ptr
  llvm.store %b, %out : !llvm.ptr, !llvm.ptr
  llvm.return
}
