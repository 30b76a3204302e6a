// RUN: tf-opt %s --tf-await-previous-kernel | FileCheck %s

// Every kernel starts with the marker (a memory clobber: no load or store
// moves above it); a device function that is not a kernel does not.
// CHECK-LABEL: gpu.func @scale
// CHECK-NEXT: llvm.inline_asm has_side_effects "// tfc: await the previous kernel", "~{memory}"  : () -> ()
// CHECK-NEXT: arith.constant
// CHECK-NEXT: memref.load
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT: llvm.inline_asm
// CHECK-LABEL: gpu.func @fill
// CHECK-NEXT: llvm.inline_asm has_side_effects "// tfc: await the previous kernel"
module attributes {gpu.container_module} {
  gpu.module @tfc_kernels {
    gpu.func @scale(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @helper(%a: f32) -> f32 {
      gpu.return %a : f32
    }
    gpu.func @fill(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
}
