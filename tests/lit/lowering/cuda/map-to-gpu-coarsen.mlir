// RUN: tf-opt %s --split-input-file --tf-map-to-gpu | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-map-to-gpu=coarsen=false | FileCheck %s --check-prefix=ONE

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// A long elementwise nest (256 x 256 = 65,536 iterations, the innermost dim
// a multiple of 4): 4 consecutive iterations a thread, 16,384 threads on 64
// blocks. Thread n takes row n / 64, columns 4 (n % 64) to 4 (n % 64) + 3.
// Where both row-major buffers (the result, and the bias broadcast along
// the rows) are 16-byte aligned, each is read or written as one vector of
// the 4; otherwise 4 elements each, every load first, then the 4 bodies,
// then the stores. The result is not read (the body ignores it).
// CHECK-LABEL: func.func @bias_add
// CHECK-SAME: (%[[X:.+]]: memref<256x256xf32>, %[[B:.+]]: memref<256xf32>, %[[Y:.+]]: memref<256x256xf32>)
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: gpu.launch blocks(%[[BID:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C64]], %{{.+}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256
// CHECK:   %[[N:.+]] = arith.addi %{{.+}}, %[[T]]
// CHECK:   arith.cmpi ult, %[[N]], %c16384
// CHECK:   %[[G:.+]] = arith.remui %[[N]], %c64
// CHECK:   %[[ROW:.+]] = arith.divui %[[N]], %c64
// CHECK:   %[[COL:.+]] = arith.muli %[[G]], %c4
// CHECK-DAG: %[[PY:.+]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK-DAG: %[[PX:.+]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK-DAG: %[[PB:.+]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-DAG: arith.andi %[[PY]], %c15
// CHECK:   scf.if %{{.+}} {
// CHECK-DAG: memref.assume_alignment %[[Y]], 16
// CHECK-DAG: memref.assume_alignment %[[X]], 16
// CHECK-DAG: memref.assume_alignment %[[B]], 16
// CHECK:     %[[VX:.+]] = vector.load %[[X]][%[[ROW]], %[[COL]]] : memref<256x256xf32>, vector<4xf32>
// CHECK:     %[[VB:.+]] = vector.load %[[B]][%[[COL]]] : memref<256xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.addf
// CHECK:     %[[V:.+]] = vector.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK:     vector.store %[[V]], %[[Y]][%[[ROW]], %[[COL]]] : memref<256x256xf32>, vector<4xf32>
// CHECK:   } else {
// CHECK-COUNT-4: memref.load %[[X]]
// CHECK-NOT: memref.store
// CHECK-COUNT-4: arith.addf
// CHECK-COUNT-4: memref.store %{{.+}}, %[[Y]]
// CHECK-NOT: vector.
// CHECK:   gpu.terminator
// ONE-LABEL: func.func @bias_add
// ONE: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c256{{.*}}, %{{.+}}) threads
// ONE-NOT: vector.
// ONE-COUNT-1: arith.addf
// ONE-NOT: arith.addf
// ONE: gpu.terminator
func.func @bias_add(%x: memref<256x256xf32>, %b: memref<256xf32>, %y: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<256x256xf32>, memref<256xf32>) outs(%y : memref<256x256xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// A transposed input is read an element at a time even where the buffers
// are aligned (its 4 elements are a column); the result still a vector.
// CHECK-LABEL: func.func @transposed_input
// CHECK: scf.if
// CHECK-NOT: vector.load
// CHECK-COUNT-4: memref.load
// CHECK: vector.store
// CHECK: } else {
func.func @transposed_input(%x: memref<256x256xf32>, %y: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<256x256xf32>) outs(%y : memref<256x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Left one iteration a thread: too short (16,384 iterations), an innermost
// dim not a multiple of 4, a transposed result (its 4 elements are not
// one vector), and a reduction.
// CHECK-LABEL: func.func @short
// CHECK-NOT: vector.
// CHECK: return
func.func @short(%x: memref<128x128xf32>, %y: memref<128x128xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<128x128xf32>) outs(%y : memref<128x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @odd_rows
// CHECK-NOT: vector.
// CHECK: return
func.func @odd_rows(%x: memref<256x258xf32>, %y: memref<256x258xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<256x258xf32>) outs(%y : memref<256x258xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @transposed_result
// CHECK-NOT: vector.
// CHECK: return
func.func @transposed_result(%x: memref<256x256xf32>, %y: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [#id, #tr], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<256x256xf32>) outs(%y : memref<256x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @row_sums
// CHECK-NOT: vector.
// CHECK: return
#rows = affine_map<(d0, d1) -> (d0)>
func.func @row_sums(%x: memref<1024x256xf32>, %y: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1024x256xf32>) outs(%y : memref<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A second result of bf16 bits (i16: tf-bf16-gemm-operands' copy beside a
// producer's fp32 result): 2-byte elements coarsen too, their 4 one 8-byte
// vector.
// CHECK-LABEL: func.func @with_bf16_bits
// CHECK: scf.if %{{.+}} {
// CHECK:     vector.load %{{.+}} : memref<256x256xf32>, vector<4xf32>
// CHECK:     vector.store %{{.+}} : memref<256x256xf32>, vector<4xf32>
// CHECK:     %[[BITS:.+]] = vector.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : vector<4xi16>
// CHECK:     vector.store %[[BITS]], %{{.+}} : memref<256x256xi16>, vector<4xi16>
// CHECK:   } else {
// CHECK-COUNT-4: memref.store %{{.+}} : memref<256x256xi16>
func.func @with_bf16_bits(%x: memref<256x256xf32>, %y: memref<256x256xf32>, %bits: memref<256x256xi16>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<256x256xf32>) outs(%y, %bits : memref<256x256xf32>, memref<256x256xi16>) {
  ^bb0(%a: f32, %o: f32, %h: i16):
    %s = arith.mulf %a, %a : f32
    %i = arith.bitcast %s : f32 to i32
    %c16 = arith.constant 16 : i32
    %hi = arith.shrui %i, %c16 : i32
    %t = arith.trunci %hi : i32 to i16
    linalg.yield %s, %t : f32, i16
  }
  return
}
