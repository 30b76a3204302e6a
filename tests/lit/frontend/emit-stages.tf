# Every stage after linalg, down to a linked executable.
# RUN: tfc compile %s --emit=buffers | FileCheck %s --check-prefix=BUFFERS
# RUN: tfc compile %s --emit=llvm -v 2>%t.err | FileCheck %s --check-prefix=LLVM
# RUN: FileCheck %s --check-prefix=VERBOSE --input-file=%t.err
# RUN: tfc compile %s --emit=obj -o %t.o && nm %t.o | FileCheck %s --check-prefix=OBJ
# The object (the optimised parts joined, its entries optnone) links with the
# runtime into an executable that runs.
# RUN: c++ %t.o %tfc_runtime -o %t.linked -lpthread -lm -ldl && %t.linked info | FileCheck %s --check-prefix=INFO
# RUN: rm -f %t.exe && tfc compile %s -o %t.exe && %t.exe info | FileCheck %s --check-prefix=INFO
# RUN: not tfc compile %s -o - 2>&1 | FileCheck %s --check-prefix=STDOUT

# BUFFERS: func.func private @tfc_sgemm
# BUFFERS: func.func @tfc_entry_predict(%{{.*}}: !llvm.ptr)
# BUFFERS: func.func private @predict(
# BUFFERS-SAME: memref<?xi8>
# BUFFERS-SAME: tfc.arena_bytes
# BUFFERS-NOT: memref.alloc
# BUFFERS: call @tfc_sgemm

# LLVM: @tfc_manifest = {{.*}}constant
# LLVM: define void @tfc_entry_predict(ptr
# LLVM: call void @tfc_sgemm
# VERBOSE: tfc: entry 'predict': peak memory {{[0-9]+}} bytes of intermediate buffers
# VERBOSE: tfc: time: mlir {{.*}} s, translate {{.*}} s, llvm-opt {{.*}} s, write {{.*}} s, total

# OBJ-DAG: R tfc_manifest
# OBJ-DAG: T tfc_entry_predict
# OBJ-DAG: U tfc_sgemm

# INFO: model stages, compiled for batch 4
# INFO: x                        f32[4, 3]
# INFO: y                        f32[4, 2]
# INFO: out                                  weight[2, 3]  bias[2]
# INFO: predict: peak of intermediate buffers

# STDOUT: an executable cannot go to stdout

model stages {
  input x: f32[batch, 3]
  output y = softmax(linear(x, 2, name: "out"), axis: -1)
}

train stages {
  batch 4
}
