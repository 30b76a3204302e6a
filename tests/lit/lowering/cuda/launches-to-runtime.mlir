// RUN: tf-opt %s --split-input-file --verify-diagnostics --tf-launches-to-runtime=image=ptx | FileCheck %s
// RUN: tf-opt %s --split-input-file --verify-diagnostics --tf-launches-to-runtime=image=ptx \
// RUN:   --mlir-print-op-generic 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not tf-opt %s --split-input-file --tf-launches-to-runtime="image=fatbin archs=sm_90 toolkit=%t.no-cuda" \
// RUN:   2>&1 | FileCheck %s --check-prefix=TOOLKIT
// RUN: not tf-opt %s --split-input-file --tf-launches-to-runtime=image=cubin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FORMAT
// RUN: tf-opt %s --split-input-file --verify-diagnostics \
// RUN:   --tf-launches-to-runtime="image=ptx precision=tf32" | FileCheck %s --check-prefix=TF32
// RUN: tf-opt %s --split-input-file --verify-diagnostics \
// RUN:   --tf-launches-to-runtime="image=ptx precision=bf16" | FileCheck %s --check-prefix=BF16
// RUN: not tf-opt %s --split-input-file --tf-launches-to-runtime="image=ptx precision=fp16" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PRECISION

// A fatbin needs the toolkit's ptxas; without it the error says where it looked.
// TOOLKIT: error: tfc: the CUDA toolkit has no ptxas ('{{.*}}.no-cuda/bin/ptxas'); set --cuda-path or CUDA_HOME
// FORMAT: error: tf-launches-to-runtime: image must be ptx or fatbin, got 'cubin'
// PRECISION: error: tf-launches-to-runtime: precision must be fp32, tf32 or bf16, got 'fp16'

// tfc compile --precision: the GEMMs' compute type, for the runtime's
// cuBLASLt (fp32 unless asked).
// TF32: module attributes {tfc.cuda = {arch = [], image = "ptx", kernels = ["tfc_k0", "tfc_k1"], precision = "tf32"}}
// BF16: module attributes {tfc.cuda = {arch = [], image = "ptx", kernels = ["tfc_k0", "tfc_k1"], precision = "bf16"}}

// Each launch becomes tfc_cuda_launch(kernel index, grid, block, shared
// bytes, argc, slots): its buffers' aligned pointers and its integers stored
// as i64 in one stack array per function, as long as the longest launch
// needs. The PTX (image=ptx: the driver compiles it at load) becomes
// tfc_cuda_image with its NUL, and its size; the module's tfc.cuda names the
// kernels for the manifest, and it is no longer a GPU container.
// CHECK-LABEL: module attributes {tfc.cuda = {arch = [], image = "ptx", kernels = ["tfc_k0", "tfc_k1"], precision = "fp32"}}
// CHECK-NOT: gpu.container_module
// CHECK: func.func @predict(%[[A:.+]]: memref<4xf32>, %[[B:.+]]: memref<2x2xf32>, %[[N:.+]]: index, %[[K:.+]]: i32)
// CHECK: %[[SLOTS:.+]] = memref.alloca() : memref<3xi64>
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[PA:.+]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[S0:.+]] = arith.constant 0 : index
// CHECK: %[[VA:.+]] = arith.index_cast %[[PA]] : index to i64
// CHECK: memref.store %[[VA]], %[[SLOTS]][%[[S0]]]
// CHECK: %[[PB:.+]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: %[[S1:.+]] = arith.constant 1 : index
// CHECK: %[[VB:.+]] = arith.index_cast %[[PB]] : index to i64
// CHECK: memref.store %[[VB]], %[[SLOTS]][%[[S1]]]
// CHECK: %[[S2:.+]] = arith.constant 2 : index
// CHECK: %[[VN:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK: memref.store %[[VN]], %[[SLOTS]][%[[S2]]]
// CHECK: %[[I1:.+]] = arith.constant 1 : index
// CHECK: %[[SMEM:.+]] = arith.constant 0 : index
// CHECK: %[[ARGC:.+]] = arith.constant 3 : index
// CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[SLOTS]]
// CHECK: call @tfc_cuda_launch(%[[I1]], %[[C2]], %[[C1]], %[[C1]], %[[C4]], %[[C1]], %[[C1]], %[[SMEM]], %[[ARGC]], %[[P]])
// The second launch reuses the slots: the runtime copies them at the launch.
// CHECK: %[[PB2:.+]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: %[[T0:.+]] = arith.constant 0 : index
// CHECK: %[[VB2:.+]] = arith.index_cast %[[PB2]] : index to i64
// CHECK: memref.store %[[VB2]], %[[SLOTS]][%[[T0]]]
// CHECK: %[[KI:.+]] = arith.index_cast %[[K]] : i32 to index
// CHECK: %[[T1:.+]] = arith.constant 1 : index
// CHECK: %[[VK:.+]] = arith.index_cast %[[KI]] : index to i64
// CHECK: memref.store %[[VK]], %[[SLOTS]][%[[T1]]]
// CHECK: %[[I0:.+]] = arith.constant 0 : index
// CHECK: %[[SMEM2:.+]] = arith.constant 0 : index
// CHECK: %[[ARGC2:.+]] = arith.constant 2 : index
// CHECK: %[[P2:.+]] = memref.extract_aligned_pointer_as_index %[[SLOTS]]
// CHECK: call @tfc_cuda_launch(%[[I0]], %[[C1]], %[[C1]], %[[C1]], %[[C4]], %[[C2]], %[[C1]], %[[SMEM2]], %[[ARGC2]], %[[P2]])
// CHECK-NOT: gpu.launch_func
// CHECK: func.func @evaluate
// CHECK: memref.alloca() : memref<2xi64>
// CHECK: call @tfc_cuda_launch
// CHECK: func.func private @tfc_cuda_launch(index, index, index, index, index, index, index, index, index, index)
// CHECK-NOT: gpu.binary
// CHECK: llvm.mlir.global external constant @tfc_cuda_image(".version 8.0\0A.target sm_80\0A{{.*}}.visible .entry tfc_k0(\0A{{.*}}.visible .entry tfc_k1(\0A{{.*}}\0A\00")
// CHECK: llvm.mlir.global external constant @tfc_cuda_image_size(193 : i64)
// The image's size counts its NUL: the 192 characters of the PTX and one.
// SIZE: "llvm.mlir.global"() {{.*}}global_type = !llvm.array<193 x i8>{{.*}}sym_name = "tfc_cuda_image"
// SIZE: "llvm.mlir.global"() {{.*}}sym_name = "tfc_cuda_image_size", value = 193 : i64
module attributes {gpu.container_module} {
  func.func @predict(%a: memref<4xf32>, %b: memref<2x2xf32>, %n: index, %k: i32) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @tfc_kernels::@tfc_k1 blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>, %b : memref<2x2xf32>, %n : index)
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c4, %c2, %c1) args(%b : memref<2x2xf32>, %k : i32)
    return
  }
  func.func @evaluate(%b: memref<2x2xf32>) {
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<2x2xf32>, %c0_i32 : i32)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target, assembly = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry tfc_k0(\n.param .u64 p0,\n.param .u32 p1\n)\n{\nret;\n}\n.visible .entry tfc_k1(\n.param .u64 p0,\n.param .u64 p1,\n.param .u64 p2\n)\n{\nret;\n}\n">]
}

// -----

// Buffers in the arena (memref.view, as tf-plan-memory places them): a
// view's aligned pointer is the arena's moved by the view's byte shift, added
// here explicitly (MLIR 19 folds extract_aligned_pointer_as_index through
// view-like ops, which drops a memref.view's shift: two buffers of one arena
// were handed to kernels as one, found on an H200). A subview of a view
// keeps the view's aligned pointer: the kernel adds the subview's static
// offset itself (the bare-pointer convention).
// CHECK-LABEL: func.func @arena_views
// CHECK-SAME: (%[[ARENA:.+]]: memref<?xi8>)
// CHECK-DAG: %[[SHIFT:.+]] = arith.constant 64 : index
// CHECK: %[[BASE0:.+]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[P0:.+]] = arith.addi %[[BASE0]], %[[ZERO:.+]] : index
// CHECK: %[[BASE1:.+]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[P1:.+]] = arith.addi %[[BASE1]], %[[SHIFT]] : index
// CHECK: %[[BASE2:.+]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[P2:.+]] = arith.addi %[[BASE2]], %[[SHIFT]] : index
// CHECK: call @tfc_cuda_launch
module attributes {gpu.container_module} {
  func.func @arena_views(%arena: memref<?xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %max = memref.view %arena[%c0][] : memref<?xi8> to memref<4xf32>
    %sum = memref.view %arena[%c64][] : memref<?xi8> to memref<4xf32>
    %tail = memref.subview %sum[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%max : memref<4xf32>, %sum : memref<4xf32>, %tail : memref<2xf32, strided<[1], offset: 2>>)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target, assembly = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry tfc_k0(\n.param .u64 p0,\n.param .u64 p1,\n.param .u64 p2\n)\n{\nret;\n}\n">]
}

// -----

// Launches with no image to launch from.
// expected-error @+1 {{tf-launches-to-runtime: no gpu.binary @tfc_kernels (run tf-merge-gpu-modules and gpu-module-to-binary first)}}
module attributes {gpu.container_module} {
  func.func @no_binary(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @tfc_kernels {
    gpu.func @tfc_k0(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// The binary must hold PTX text (gpu-module-to-binary{format=isa}), not a cubin.
module attributes {gpu.container_module} {
  func.func @cubin(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  // expected-error @+1 {{tf-launches-to-runtime: expected one PTX object (gpu-module-to-binary{format=isa})}}
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target, bin = "\7FELF">]
}

// -----

// A kernel that tf-merge-gpu-modules did not name has no index.
module attributes {gpu.container_module} {
  func.func @unnamed(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{tf-launches-to-runtime: not a kernel of tf-merge-gpu-modules}}
    gpu.launch_func @tfc_kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target, assembly = ".visible .entry kernel(\n.param .u64 p0\n)\n{\nret;\n}\n">]
}

// -----

// Only buffers and integers fit an 8-byte slot.
module attributes {gpu.container_module} {
  func.func @float_param(%a: memref<4xf32>, %x: f32) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{tf-launches-to-runtime: a kernel parameter of type 'f32' (only buffers and integers are passed)}}
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %x : f32)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target, assembly = ".visible .entry tfc_k0(\n.param .u64 p0,\n.param .f32 p1\n)\n{\nret;\n}\n">]
}
