// RUN: tf-opt %s --split-input-file --tf-split-reductions | FileCheck %s

// A loss: one result over 2048 x 10 elements, read whole and in order: a
// full reduction, flattened to 20480 elements and sliced interleaved (slice
// s sums elements s, s + 1280, ...: adjacent threads read adjacent
// elements), 1280 slices of 16 (the largest divisor at most 8192 and
// 20480 / 16); its 1280 partials split again (32 slices of 40, at most
// sqrt(1280) = 36), then the result plus those 32 in order: three stages.
// The zero fill of the result moves right before the last.
// CHECK: #[[INTERLEAVED:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @loss
// CHECK-SAME: (%[[X:.+]]: memref<2048x10xf32>, %[[Y:.+]]: memref<f32>)
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1]] : memref<2048x10xf32> into memref<20480xf32>
// CHECK: %[[V:.+]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [16, 1280]
// CHECK: %[[P:.+]] = memref.alloc() : memref<1280xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[P]] : memref<1280xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[INTERLEAVED]], #{{.+}}], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[V]] : memref<16x1280xf32>) outs(%[[P]] : memref<1280xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[V2:.+]] = memref.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [32, 40]
// CHECK: %[[P2:.+]] = memref.alloc() : memref<32xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[V2]] : memref<32x40xf32>) outs(%[[P2]] : memref<32xf32>)
// CHECK-NOT: arith.mulf
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[Y]] : memref<f32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]}
// CHECK-SAME: ins(%[[P2]] : memref<32xf32>) outs(%[[Y]] : memref<f32>)
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

// -----

// Long rows: an arg-max over 1,000 classes for 64 x 256 positions. Enough
// results for the GPU, but each thread would read its own row, its lanes
// 4,000 bytes apart. The row splits into 40 lanes (the divisor of 1,000 in
// [16, 64] nearest 32) of 25 elements: stage 1 has the lane as its
// innermost parallel dim (adjacent threads read adjacent elements), each
// lane's first best element and its index r * 40 + s; stage 2 takes a
// lane's partial when it is better, or as good and earlier (the first
// best of the row). The fills of the results move after stage 1.
// CHECK-LABEL: func.func @argmax_long_rows
// CHECK-SAME: (%[[X:.+]]: memref<64x256x1000xf32>, %[[V:.+]]: memref<64x256xf32>, %[[I:.+]]: memref<64x256xi32>)
// CHECK: %[[E:.+]] = memref.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [64, 256, 25, 40]
// CHECK: %[[PV:.+]] = memref.alloc() : memref<64x256x40xf32>
// CHECK: %[[PI:.+]] = memref.alloc() : memref<64x256x40xi32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[PV]]
// CHECK: %[[MAXI:.+]] = arith.constant 2147483647 : i32
// CHECK: linalg.fill ins(%[[MAXI]] : i32) outs(%[[PI]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[E]] : memref<64x256x25x40xf32>) outs(%[[PV]], %[[PI]] :
// CHECK:   %[[R:.+]] = linalg.index 2 : index
// CHECK:   %[[S:.+]] = linalg.index 3 : index
// CHECK:   %[[C40:.+]] = arith.constant 40 : index
// CHECK:   %[[OFF:.+]] = arith.muli %[[R]], %[[C40]]
// CHECK:   arith.addi %[[OFF]], %[[S]]
// CHECK:   arith.cmpf ogt
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[V]]
// CHECK: linalg.fill ins(%{{.+}} : i32) outs(%[[I]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[PV]], %[[PI]] : {{.*}}) outs(%[[V]], %[[I]] :
// CHECK: ^bb0(%[[PVAL:.+]]: f32, %[[PIDX:.+]]: i32, %[[VAL:.+]]: f32, %[[IDX:.+]]: i32):
// CHECK:   %[[BETTER:.+]] = arith.cmpf ogt, %[[PVAL]], %[[VAL]] : f32
// CHECK:   %[[TIE:.+]] = arith.cmpf oeq, %[[PVAL]], %[[VAL]] : f32
// CHECK:   %[[EARLIER:.+]] = arith.cmpi slt, %[[PIDX]], %[[IDX]] : i32
// CHECK:   %[[BOTH:.+]] = arith.andi %[[TIE]], %[[EARLIER]]
// CHECK:   %[[TAKE:.+]] = arith.ori %[[BETTER]], %[[BOTH]]
// CHECK:   %[[NV:.+]] = arith.select %[[TAKE]], %[[PVAL]], %[[VAL]] : f32
// CHECK:   %[[NI:.+]] = arith.select %[[TAKE]], %[[PIDX]], %[[IDX]] : i32
// CHECK:   linalg.yield %[[NV]], %[[NI]]
func.func @argmax_long_rows(%x: memref<64x256x1000xf32>, %v: memref<64x256xf32>, %i: memref<64x256xi32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i32
  linalg.fill ins(%ninf : f32) outs(%v : memref<64x256xf32>)
  linalg.fill ins(%zero : i32) outs(%i : memref<64x256xi32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<64x256x1000xf32>) outs(%v, %i : memref<64x256xf32>, memref<64x256xi32>) {
  ^bb0(%a: f32, %bv: f32, %bi: i32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %gt = arith.cmpf ogt, %a, %bv : f32
    %nv = arith.select %gt, %a, %bv : f32
    %ni = arith.select %gt, %ki, %bi : i32
    linalg.yield %nv, %ni : f32, i32
  }
  return
}

// -----

// A sum over rows of 512 for 8,192 results: 32 lanes of 16; the partials
// start at 0, the result plus its 32 partials in order.
// CHECK-LABEL: func.func @row_sums
// CHECK: memref.expand_shape %{{.+}} {{\[\[}}0], [1, 2]] output_shape [8192, 16, 32]
// CHECK: %[[P:.+]] = memref.alloc() : memref<8192x32xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%[[P]] : memref<8192x32xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[P]] : memref<8192x32xf32>)
// CHECK:   arith.addf
// CHECK-NOT: arith.mulf
func.func @row_sums(%x: memref<8192x512xf32>, %y: memref<8192xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<8192xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8192x512xf32>) outs(%y : memref<8192xf32>) {
  ^bb0(%a: f32, %c: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %c, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Long rows left alone: an arg-max whose index starts at 1 (a tie with the
// init would keep 1, and stage 2 cannot tell the init from a partial), one
// whose index is not filled right before, a row of 257 (no divisor in
// [16, 64]), a reduction over the outer dim (each thread already reads
// next to its neighbours), and rows that are not contiguous.
// CHECK-LABEL: func.func @long_rows_left_alone
// CHECK-NOT: memref.alloc
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: linalg.generic
func.func @long_rows_left_alone(%x: memref<8192x1000xf32>, %v: memref<8192xf32>, %i: memref<8192xi32>,
                                %odd: memref<8192x257xf32>, %cols: memref<1000x8192xf32>,
                                %strided: memref<8192x512xf32, strided<[1024, 2]>>) {
  %one = arith.constant 1 : i32
  linalg.fill ins(%one : i32) outs(%i : memref<8192xi32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8192x1000xf32>) outs(%v, %i : memref<8192xf32>, memref<8192xi32>) {
  ^bb0(%a: f32, %bv: f32, %bi: i32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %gt = arith.cmpf ogt, %a, %bv : f32
    %nv = arith.select %gt, %a, %bv : f32
    %ni = arith.select %gt, %ki, %bi : i32
    linalg.yield %nv, %ni : f32, i32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8192x1000xf32>) outs(%v, %i : memref<8192xf32>, memref<8192xi32>) {
  ^bb0(%a: f32, %bv: f32, %bi: i32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %gt = arith.cmpf ogt, %a, %bv : f32
    %nv = arith.select %gt, %a, %bv : f32
    %ni = arith.select %gt, %ki, %bi : i32
    linalg.yield %nv, %ni : f32, i32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%odd : memref<8192x257xf32>) outs(%v : memref<8192xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%cols : memref<1000x8192xf32>) outs(%v : memref<8192xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%strided : memref<8192x512xf32, strided<[1024, 2]>>) outs(%v : memref<8192xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.maximumf %c, %a : f32
    linalg.yield %s : f32
  }
  return
}
