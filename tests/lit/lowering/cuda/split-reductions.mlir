// RUN: tf-opt %s --split-input-file --tf-split-reductions | FileCheck %s

// A loss: one result over 2048 x 10 elements. The outer reduction dim (2048)
// splits into 128 slices of 16 rows (128 threads of 160 elements each; 128
// is its largest divisor at most sqrt(20480) = 143, 8192 / 1 and 20480 / 16):
// partials filled with 0, the input read through a (128, 16) view, then
// the result plus its 128 partials in order. The zero fill of the result
// moves after stage 1, right before stage 2.
// CHECK-LABEL: func.func @loss
// CHECK-SAME: (%[[X:.+]]: memref<2048x10xf32>, %[[Y:.+]]: memref<f32>)
// CHECK: %[[V:.+]] = memref.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [128, 16, 10]
// CHECK: %[[P:.+]] = memref.alloc() : memref<128xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[P]] : memref<128xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN:.+]], #[[PART:.+]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[V]] : memref<128x16x10xf32>) outs(%[[P]] : memref<128xf32>)
// CHECK:   arith.addf
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[Y]] : memref<f32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]}
// CHECK-SAME: ins(%[[P]] : memref<128xf32>) outs(%[[Y]] : memref<f32>)
// CHECK:   %[[S:.+]] = arith.addf %{{.+}}, %{{.+}} : f32
// CHECK:   linalg.yield %[[S]]
func.func @loss(%x: memref<2048x10xf32>, %y: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<2048x10xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %c: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %c, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A bias gradient: 96 results over 128 x 16 rows: the outer reduction dim
// (128) splits in 32 slices of 4 rows x 16 (at most sqrt(2048) = 46 and
// 8192 / 96 = 86; 32 is its largest divisor so): stage 1 keeps the result's
// dim innermost (coalesced), stage 2 combines with the max.
// CHECK-LABEL: func.func @column_max
// CHECK: memref.expand_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] output_shape [32, 4, 16, 96]
// CHECK: memref.alloc() : memref<32x96xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
// CHECK:   arith.maximumf
func.func @column_max(%x: memref<128x16x96xf32>, %y: memref<96xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>],
                  iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x : memref<128x16x96xf32>) outs(%y : memref<96xf32>) {
  ^bb0(%a: f32, %c: f32):
    %m = arith.maximumf %c, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Left alone: enough results for the GPU (one thread each), a combining
// step that is not associative, and a reduction too short to split.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: memref.alloc
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @left_alone(%rows: memref<8192x64xf32>, %r: memref<8192xf32>, %x: memref<2048xf32>, %y: memref<f32>, %s: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%rows : memref<8192x64xf32>) outs(%r : memref<8192xf32>) {
  ^bb0(%a: f32, %c: f32):
    %t = arith.addf %c, %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<2048xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %c: f32):
    %t = arith.subf %c, %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%s : memref<32xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %c: f32):
    %t = arith.addf %c, %a : f32
    linalg.yield %t : f32
  }
  return
}
