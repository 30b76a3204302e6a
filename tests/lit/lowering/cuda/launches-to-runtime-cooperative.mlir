// RUN: tf-opt %s --tf-launches-to-runtime=image=ptx | FileCheck %s

// A persistent kernel's launch (tf-grid-sync marked it) calls
// tfc_cuda_launch_cooperative with the same arguments: its grid is the most
// it asks for; the others call tfc_cuda_launch. The manifest's record says
// the model is persistent.
// CHECK-LABEL: module attributes {tfc.cuda = {arch = [], image = "ptx", kernels = ["tfc_k0", "tfc_k1"], persistent = true, precision = "fp32"}}
// CHECK-LABEL: func.func @train_step
// CHECK: call @tfc_cuda_launch_cooperative(%{{.+}}, %c264{{.*}}, %c1{{.*}}, %c1{{.*}}, %c256{{.*}}, %c1{{.*}}, %c1{{.*}}, %{{.+}}, %{{.+}}, %{{.+}}) : (index, index, index, index, index, index, index, index, index, index) -> ()
// CHECK: call @tfc_cuda_launch(%{{.+}}, %c4{{.*}},
// CHECK-NOT: gpu.launch_func
// CHECK-DAG: func.func private @tfc_cuda_launch(index, index, index, index, index, index, index, index, index, index)
// CHECK-DAG: func.func private @tfc_cuda_launch_cooperative(index, index, index, index, index, index, index, index, index, index)
module attributes {gpu.container_module} {
  func.func @train_step(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    %c264 = arith.constant 264 : index
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c264, %c1, %c1) threads in (%c256, %c1, %c1) args(%a : memref<4xf32>) {tfc.cooperative}
    gpu.launch_func @tfc_kernels::@tfc_k1 blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.binary @tfc_kernels [#gpu.object<#nvvm.target, assembly = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry tfc_k0(\n.param .u64 p0\n)\n{\nret;\n}\n.visible .entry tfc_k1(\n.param .u64 p0\n)\n{\nret;\n}\n">]
}
