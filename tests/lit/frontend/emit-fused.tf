# --emit=fused stops after tf-fuse: the entry functions in tf ops, grouped
# into tf.fusion regions; the dump has a file for the pass. After lowering,
# a fusion is one linalg.generic: the bias add, relu and scale of this model
# are one loop, the epilogue of the GEMM, which stays a GEMM.
# RUN: tfc compile %s --emit=fused | FileCheck %s
# RUN: rm -rf %t && tfc compile %s --emit=fused --dump-ir=%t -o %t.out
# RUN: FileCheck %s --input-file=%t/06-tf-fuse.mlir
# RUN: tfc compile %s --emit=linalg | FileCheck %s --check-prefix=LINALG
# RUN: tfc compile %s -o %t.exe -v 2>&1 | FileCheck %s --check-prefix=VERBOSE

# CHECK-LABEL: func.func @predict
# CHECK: %[[Y:.+]] = tf.fusion "gemm" : tensor<8x4xf32> {
# CHECK:   %[[MM:.+]] = tf.matmul
# CHECK:   tf.broadcast_in_dim
# CHECK:   tf.add %[[MM]]
# CHECK:   tf.relu
# CHECK:   tf.mul
# CHECK:   tf.yield
# CHECK: }
# CHECK: return %[[Y]]

# LINALG-LABEL: func.func @predict
# LINALG: linalg.generic {{.*}}tfc.matmul
# LINALG: linalg.generic
# LINALG-SAME: ins(%{{.+}}, %{{.+}} : tensor<8x4xf32>, tensor<4xf32>)
# LINALG-SAME: tfc.gemm_epilogue
# LINALG: arith.addf
# LINALG: arith.maximumf
# LINALG: arith.mulf
# LINALG-NOT: linalg.generic
# LINALG: return

# VERBOSE: tfc: time: mlir {{.+}} s, translate {{.+}} s, llvm-opt+codegen {{.+}} s, link {{.+}} s, total {{.+}} s

model m {
  input x: f32[8, 3]
  output y = relu(linear(x, 4)) * 2.0
}
