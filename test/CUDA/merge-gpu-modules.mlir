// RUN: dt-opt %s -dt-merge-gpu-modules | FileCheck %s

// CHECK: func.func @f
// CHECK: gpu.launch_func async [%{{.*}}] @dt_kernels::@f_kernel blocks
// CHECK: gpu.launch_func async [%{{.*}}] @dt_kernels::@f_kernel_0 blocks
// CHECK: gpu.module @dt_kernels {
// CHECK: gpu.func @f_kernel(%{{.*}}: memref<8xf32>) kernel
// CHECK: gpu.func @f_kernel_0(%{{.*}}: memref<8xf32>) kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @f(%x: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    %a = gpu.launch_func async [%t0] @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<8xf32>)
    %t1 = gpu.wait async
    %b = gpu.launch_func async [%t1] @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<8xf32>)
    return
  }
  gpu.module @f_kernel {
    gpu.func @f_kernel(%arg0: memref<8xf32>) kernel { gpu.return }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%arg0: memref<8xf32>) kernel { gpu.return }
  }
}
