// RUN: tf-opt %s --split-input-file --tf-merge-gpu-modules | FileCheck %s

// Outlining's modules, one a kernel, become one module @tfc_kernels whose
// kernels are numbered in the order the entries first launch them (@second
// first here): the indices tfc_cuda_launch takes. A kernel launched twice
// is one kernel; the constant table each module holds a copy of is kept once.
// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[A:.+]]: memref<4xf32>, %[[N:.+]]: index)
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k0 {{.*}} args(%[[A]] : memref<4xf32>)
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k1 {{.*}} args(%[[A]] : memref<4xf32>, %[[N]] : index)
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k0 {{.*}} args(%[[A]] : memref<4xf32>)
// CHECK: func.func @later
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k2 {{.*}} args(%{{.+}} : memref<4xf32>)
// CHECK-NOT: gpu.module @first
// CHECK-NOT: gpu.module @second
// CHECK: gpu.module @tfc_kernels {
// CHECK-NEXT: gpu.func @tfc_k0(%{{.+}}: memref<4xf32>) kernel
// CHECK: memref.load %{{.+}}[%c0
// CHECK: gpu.func @tfc_k1(%{{.+}}: memref<4xf32>, %{{.+}}: index) kernel
// CHECK: gpu.func @tfc_k2(%{{.+}}: memref<4xf32>) kernel
// CHECK: math.exp
// CHECK-COUNT-1: memref.global "private" constant @table
// CHECK-NOT: memref.global
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @entry(%a: memref<4xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @second::@kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @first::@kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>, %n : index)
    gpu.launch_func @second::@kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  func.func @later(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @third::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @first {
    memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    gpu.func @kernel(%a: memref<4xf32>, %n: index) kernel {
      %t = memref.get_global @table : memref<4xf32>
      %x = memref.load %t[%n] : memref<4xf32>
      memref.store %x, %a[%n] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @second {
    memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    gpu.func @kernel(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = memref.get_global @table : memref<4xf32>
      %x = memref.load %t[%c0] : memref<4xf32>
      memref.store %x, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @third {
    gpu.func @kernel(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<4xf32>
      %e = math.exp %x : f32
      memref.store %e, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A module without kernels is left as it is: no empty @tfc_kernels.
// CHECK-LABEL: func.func @host
// CHECK-NOT: gpu.module
module {
  func.func @host(%a: memref<4xf32>) {
    return
  }
}
