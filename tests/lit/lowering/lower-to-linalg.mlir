// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg --verify-diagnostics | FileCheck %s

// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @broadcast_add
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<3xf32>)
func.func @broadcast_add(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[E0:.+]] = tensor.empty() : tensor<2x3xf32>
  // CHECK: %[[BB:.+]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[B]] : tensor<3xf32>) outs(%[[E0]] : tensor<2x3xf32>)
  // CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
  // CHECK-NEXT: linalg.yield %[[IN]] : f32
  // CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[BB]] : tensor<2x3xf32>, tensor<2x3xf32>)
  // CHECK: arith.addf
  %0 = tf.broadcast_in_dim %b [1] : tensor<3xf32> to tensor<2x3xf32>
  %1 = tf.add %a, %0 : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// A size-1 operand dim that broadcasts reads index 0.
// CHECK-DAG: #[[ZERO:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @broadcast_size_one
func.func @broadcast_size_one(%a: tensor<2x1xf32>) -> tensor<2x3xf32> {
  // CHECK: linalg.generic {indexing_maps = [#[[ZERO]], #{{.+}}]
  %0 = tf.broadcast_in_dim %a [0, 1] : tensor<2x1xf32> to tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: arith.negf
  // CHECK: math.exp
  // CHECK: math.log
  // CHECK: math.sqrt
  // CHECK: math.rsqrt
  // CHECK: math.tanh
  // CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: arith.maximumf %{{.+}}, %[[Z]] : f32
  // CHECK: %[[S:.+]] = arith.constant 0.707106769 : f32
  // CHECK-NEXT: %[[XS:.+]] = arith.mulf %{{.+}}, %[[S]] : f32
  // CHECK-NEXT: math.erf %[[XS]] : f32
  %0 = tf.neg %x : tensor<4xf32>
  %1 = tf.exp %0 : tensor<4xf32>
  %2 = tf.log %1 : tensor<4xf32>
  %3 = tf.sqrt %2 : tensor<4xf32>
  %4 = tf.rsqrt %3 : tensor<4xf32>
  %5 = tf.tanh %4 : tensor<4xf32>
  %6 = tf.relu %5 : tensor<4xf32>
  %7 = tf.gelu %6 : tensor<4xf32>
  return %5, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @trig
func.func @trig(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: math.sin
  // CHECK: math.cos
  %0 = tf.sin %x : tensor<4xf32>
  %1 = tf.cos %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erf
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: linalg.generic {{.+}} ins(%[[X]] : tensor<4xf32>)
  // CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
  // CHECK-NEXT: %[[E:.+]] = math.erf %[[IN]] : f32
  // CHECK-NEXT: linalg.yield %[[E]] : f32
  %0 = tf.erf %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: arith.subf
  // CHECK: arith.mulf
  // CHECK: arith.divf
  // CHECK: arith.maximumf
  // CHECK: arith.minimumf
  %0 = tf.sub %a, %b : tensor<4xf32>
  %1 = tf.mul %0, %b : tensor<4xf32>
  %2 = tf.div %1, %b : tensor<4xf32>
  %3 = tf.max %2, %b : tensor<4xf32>
  %4 = tf.min %3, %b : tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @compare_select_cast
func.func @compare_select_cast(%a: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>) {
  // CHECK: arith.cmpf olt
  // CHECK: arith.cmpi eq
  // CHECK: arith.cmpf une
  // CHECK: arith.andi
  // CHECK: arith.ori
  // CHECK: %[[T:.+]] = arith.constant true
  // CHECK-NEXT: arith.xori %{{.+}}, %[[T]] : i1
  // CHECK: arith.select
  // CHECK: arith.uitofp %{{.+}} : i1 to f32
  // CHECK: arith.fptosi %{{.+}} : f32 to i32
  // CHECK: arith.cmpi ne
  %lt = tf.compare lt, %a, %a : tensor<4xf32>
  %eq = tf.compare eq, %i, %i : tensor<4xi32>
  %ne = tf.compare ne, %a, %a : tensor<4xf32>
  %and = tf.and %lt, %eq : tensor<4xi1>
  %or = tf.or %and, %ne : tensor<4xi1>
  %not = tf.not %or : tensor<4xi1>
  %s = tf.select %not, %a, %a : tensor<4xi1>, tensor<4xf32>
  %f = tf.cast %not : tensor<4xi1> to tensor<4xf32>
  %t = tf.cast %s : tensor<4xf32> to tensor<4xi32>
  %b = tf.cast %i : tensor<4xi32> to tensor<4xi1>
  return %s, %not, %f, %t, %b : tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>
}

// -----

// CHECK-DAG: #[[T:.+]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-LABEL: func.func @transpose_reshape_constant
func.func @transpose_reshape_constant(%x: tensor<2x3x4xf32>) -> (tensor<3x4x2xf32>, tensor<6x4xf32>, tensor<2xf32>) {
  // CHECK: linalg.generic {indexing_maps = [#[[T]], #{{.+}}]
  // CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  // CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = tf.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = tf.reshape %x : tensor<2x3x4xf32> to tensor<6x4xf32>
  %2 = tf.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0, %1, %2 : tensor<3x4x2xf32>, tensor<6x4xf32>, tensor<2xf32>
}

// -----

// Reshapes never become tensor.reshape (bufferization would copy the value
// it reads): a split is an expand_shape; a regrouping with no common
// grouping goes through 1-d; a same-shape reshape is nothing.
// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.+]]: tensor<6x4xf32>)
func.func @reshapes(%x: tensor<6x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x6xf32>, tensor<6x4xf32>) {
  // CHECK-NOT: tensor.reshape
  // CHECK: %[[E:.+]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  // CHECK: %[[F:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  // CHECK: %[[R:.+]] = tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
  // CHECK: return %[[E]], %[[R]], %[[X]]
  %0 = tf.reshape %x : tensor<6x4xf32> to tensor<2x3x4xf32>
  %1 = tf.reshape %x : tensor<6x4xf32> to tensor<4x6xf32>
  %2 = tf.reshape %x : tensor<6x4xf32> to tensor<6x4xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<4x6xf32>, tensor<6x4xf32>
}

// -----

// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  // CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[I0:.+]] = linalg.fill ins(%[[Z]] : f32)
  // CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "parallel", "reduction"]} ins(%{{.+}} : tensor<2x3x4xf32>) outs(%[[I0]] : tensor<3xf32>)
  // CHECK: arith.addf
  // CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
  // CHECK: linalg.fill ins(%[[NINF]] : f32)
  // CHECK: arith.maximumf
  // CHECK: arith.addf
  // CHECK: %[[N:.+]] = arith.constant 8.000000e+00 : f32
  // CHECK-NEXT: arith.divf %{{.+}}, %[[N]] : f32
  %0 = tf.reduce_sum %x [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %1 = tf.reduce_max %x [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %2 = tf.reduce_mean %x [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// The transposes live in the indexing maps: A^T is read as (k, m).
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batched_matmul
func.func @batched_matmul(%a: tensor<5x3x2xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  // CHECK: %[[INIT:.+]] = linalg.fill
  // CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<5x3x2xf32>, tensor<5x3x4xf32>) outs(%[[INIT]] : tensor<5x2x4xf32>)
  // CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %[[ACC:.+]]: f32):
  // CHECK-NEXT: %[[P:.+]] = arith.mulf %[[X]], %[[Y]] : f32
  // CHECK-NEXT: %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : f32
  // CHECK-NEXT: linalg.yield %[[S]] : f32
  %0 = tf.matmul %a, %b transpose_lhs : tensor<5x3x2xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @slice_concat
// CHECK-SAME: (%[[X:.+]]: tensor<2x6xf32>)
func.func @slice_concat(%x: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x12xf32>) {
  // CHECK: tensor.extract_slice %[[X]][0, 1] [2, 2] [1, 2] : tensor<2x6xf32> to tensor<2x2xf32>
  // CHECK: %[[E:.+]] = tensor.empty() : tensor<2x12xf32>
  // CHECK: %[[S0:.+]] = tensor.insert_slice %[[X]] into %[[E]][0, 0] [2, 6] [1, 1]
  // CHECK: tensor.insert_slice %[[X]] into %[[S0]][0, 6] [2, 6] [1, 1]
  %0 = tf.slice %x start [0, 1] limit [2, 5] stride [1, 2] : tensor<2x6xf32> -> tensor<2x2xf32>
  %1 = tf.concat %x, %x axis 1 : tensor<2x6xf32>, tensor<2x6xf32> -> tensor<2x12xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x12xf32>
}

// -----

// CHECK-LABEL: func.func @one_hot_gather
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x3xi32>, %[[T:.+]]: tensor<10x4xf32>)
func.func @one_hot_gather(%ids: tensor<2x3xi32>, %t: tensor<10x4xf32>) -> (tensor<2x3x10xf32>, tensor<2x3x4xf32>) {
  // CHECK: ins(%[[IDS]] : tensor<2x3xi32>) outs(%{{.+}} : tensor<2x3x10xf32>)
  // CHECK: %[[C:.+]] = linalg.index 2 : index
  // CHECK: %[[CI:.+]] = arith.index_cast %[[C]] : index to i32
  // CHECK: %[[HIT:.+]] = arith.cmpi eq, %{{.+}}, %[[CI]] : i32
  // CHECK: arith.uitofp %[[HIT]] : i1 to f32
  // CHECK: ins(%[[IDS]] : tensor<2x3xi32>) outs(%{{.+}} : tensor<2x3x4xf32>)
  // CHECK: ^bb0(%[[ID:.+]]: i32, %{{.+}}: f32):
  // CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i32
  // CHECK-DAG: %[[LAST:.+]] = arith.constant 9 : i32
  // CHECK: %[[LOW:.+]] = arith.maxsi %[[ID]], %[[ZERO]] : i32
  // CHECK: %[[IN:.+]] = arith.minsi %[[LOW]], %[[LAST]] : i32
  // CHECK: %[[ROW:.+]] = arith.index_cast %[[IN]] : i32 to index
  // CHECK: %[[COL:.+]] = linalg.index 2 : index
  // CHECK: tensor.extract %[[T]][%[[ROW]], %[[COL]]] : tensor<10x4xf32>
  %0 = tf.one_hot %ids depth 10 : tensor<2x3xi32> -> tensor<2x3x10xf32>
  %1 = tf.gather %t, %ids : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x10xf32>, tensor<2x3x4xf32>
}

// -----

// A `columns` table (a linear layer's weight, [dim, rows]) is read at
// [d, id]; the id is clamped into its second dim.
// CHECK-LABEL: func.func @gather_columns
// CHECK-SAME: (%[[IDS:.+]]: tensor<6xi32>, %[[W:.+]]: tensor<4x10xf32>)
func.func @gather_columns(%ids: tensor<6xi32>, %w: tensor<4x10xf32>) -> tensor<6x4xf32> {
  // CHECK: ins(%[[IDS]] : tensor<6xi32>) outs(%{{.+}} : tensor<6x4xf32>)
  // CHECK: ^bb0(%[[ID:.+]]: i32, %{{.+}}: f32):
  // CHECK-DAG: %[[LAST:.+]] = arith.constant 9 : i32
  // CHECK: %[[IN:.+]] = arith.minsi %{{.+}}, %[[LAST]] : i32
  // CHECK: %[[COL:.+]] = arith.index_cast %[[IN]] : i32 to index
  // CHECK: %[[D:.+]] = linalg.index 1 : index
  // CHECK: tensor.extract %[[W]][%[[D]], %[[COL]]] : tensor<4x10xf32>
  %0 = tf.gather %w, %ids columns : tensor<4x10xf32>, tensor<6xi32> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// argmax carries (best, index); a strict ogt keeps the first maximum.
// CHECK-LABEL: func.func @argmax_mse
func.func @argmax_mse(%x: tensor<2x6xf32>, %y: tensor<2x6xf32>) -> (tensor<2xi32>, tensor<f32>) {
  // CHECK: %[[R:.+]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
  // CHECK: %[[BETTER:.+]] = arith.cmpf ogt
  // CHECK: arith.select %[[BETTER]]
  // CHECK: arith.select %[[BETTER]]
  // CHECK: iterator_types = ["reduction", "reduction"]
  // CHECK: arith.subf
  // CHECK: %[[N:.+]] = arith.constant 1.200000e+01 : f32
  // CHECK-NEXT: arith.divf %{{.+}}, %[[N]] : f32
  // CHECK: return %[[R]]#1
  %0 = tf.argmax %x axis 1 : tensor<2x6xf32> -> tensor<2xi32>
  %1 = tf.mse %x, %y : tensor<2x6xf32>
  return %0, %1 : tensor<2xi32>, tensor<f32>
}

// -----

// softmax: max, then the sum of exp(x - max), then the normalisation.
// CHECK-DAG: #[[SID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
func.func @softmax(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[SID]], #[[SROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x3xf32>)
  // CHECK: arith.maximumf
  // CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[SID]], #[[SROW]], #[[SROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<2x3xf32>, tensor<2xf32>)
  // CHECK: math.exp
  // CHECK: linalg.generic {indexing_maps = [#[[SID]], #[[SROW]], #[[SROW]], #[[SID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  // CHECK: %[[E:.+]] = math.exp
  // CHECK-NEXT: arith.divf %[[E]]
  // The log form subtracts log(sum) instead.
  // CHECK: %[[LOGSUM:.+]] = math.log
  // CHECK-NEXT: arith.subf %{{.+}}, %[[LOGSUM]]
  %0 = tf.softmax %x axis 1 : tensor<2x3xf32>
  %1 = tf.log_softmax %x axis 1 : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-DAG: #[[FEAT:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: iterator_types = ["parallel", "reduction"]
  // CHECK: iterator_types = ["parallel", "reduction"]
  // CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}, #[[FEAT]], #[[FEAT]], #{{.+}}], iterator_types = ["parallel", "parallel"]}
  // CHECK: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
  // CHECK: math.rsqrt
  %0 = tf.layer_norm %x, %g, %b : tensor<2x4xf32>, tensor<4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Attention decomposes into q k^T, the scale, the mask fill (-9e15),
// softmax and weights v, all lowered in turn.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x3x4xf32>, %m: tensor<2x3x3xi1>) -> (tensor<2x3x4xf32>, tensor<2x3x3xf32>) {
  // CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
  // CHECK: arith.constant dense<5.000000e-01> : tensor<2x3x3xf32>
  // CHECK: arith.mulf
  // CHECK: arith.constant dense<-9.000000e+15> : tensor<2x3x3xf32>
  // CHECK: arith.select
  // CHECK: math.exp
  // CHECK: %[[W:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
  // CHECK: %[[V:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[W]], %{{.+}} : tensor<2x3x3xf32>, tensor<2x3x4xf32>)
  // CHECK: return %[[V]], %[[W]]
  // CHECK-NOT: tf.
  %0:2 = tf.attention %q, %q, %q mask %m scale 0.5 with_weights : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xi1> -> tensor<2x3x4xf32>, tensor<2x3x3xf32>
  return %0#0, %0#1 : tensor<2x3x4xf32>, tensor<2x3x3xf32>
}

// -----

// conv1d, kernel <= width: zero padding by tensor.pad, one marked GEMM over
// the windows from zeros, loops (n, o, t, c, j) with c and j the reduction
// (K = C x kernel): out[n, o, t] += w[o, c, j] * xpad[n, c, t + j]; then
// the bias added to the sums (a loop a gemm fusion makes its epilogue). The
// windows are never sliced out (tf-gemm-to-runtime reads them in place); no
// per-tap GEMMs.
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[WGT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-DAG: #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 + d4)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @conv1d
// CHECK-SAME: (%{{.+}}: tensor<1x2x5xf32>, %[[W:.+]]: tensor<4x2x3xf32>, %[[B:.+]]: tensor<4xf32>)
func.func @conv1d(%x: tensor<1x2x5xf32>, %w: tensor<4x2x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x5xf32> {
  // CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1] high[0, 0, 1]
  // CHECK: tensor<1x2x5xf32> to tensor<1x2x7xf32>
  // CHECK: %[[INIT:.+]] = linalg.fill {{.*}} -> tensor<1x4x5xf32>
  // CHECK-NOT: tensor.extract_slice
  // CHECK: %[[OUTV:.+]] = linalg.generic {indexing_maps = [#[[WGT]], #[[WIN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[W]], %[[P]] : tensor<4x2x3xf32>, tensor<1x2x7xf32>) outs(%[[INIT]] : tensor<1x4x5xf32>) attrs = {tfc.matmul}
  // CHECK-NOT: tfc.matmul
  // CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[BIAS]], #{{.+}}]{{.*}} ins(%[[OUTV]], %[[B]] : tensor<1x4x5xf32>, tensor<4xf32>)
  // CHECK: arith.addf
  // CHECK: return %[[SUM]]
  %0 = tf.conv1d %x, %w, %b padding 1 : tensor<1x2x5xf32>, tensor<4x2x3xf32>, tensor<4xf32> -> tensor<1x4x5xf32>
  return %0 : tensor<1x4x5xf32>
}

// -----

// conv1d, width < kernel (a weight gradient's shape): one marked GEMM per
// output position t, summing over the channels c as a batch reduction (the
// first loop, a reduction that C does not index):
// outT[t] = sum_c xpad[:, c, t : t + K] @ w[:, c, :]^T; then [N, O, T].
// CHECK-DAG: #[[WIN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
// CHECK-DAG: #[[WGT:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3)>
// CHECK-DAG: #[[POS:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-DAG: #[[TR:.+]] = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-LABEL: func.func @conv1d_wide_kernel
// CHECK-SAME: (%{{.+}}: tensor<2x3x6xf32>, %[[W:.+]]: tensor<4x3x6xf32>)
func.func @conv1d_wide_kernel(%x: tensor<2x3x6xf32>, %w: tensor<4x3x6xf32>) -> tensor<2x4x3xf32> {
  // CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1] high[0, 0, 1]
  // CHECK: %[[X0:.+]] = tensor.extract_slice %[[P]][0, 0, 0] [2, 3, 6] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x3x6xf32>
  // CHECK: %[[Z0:.+]] = linalg.fill {{.*}} -> tensor<2x4xf32>
  // CHECK: %[[S0:.+]] = linalg.generic {indexing_maps = [#[[WIN]], #[[WGT]], #[[POS]]], iterator_types = ["reduction", "parallel", "parallel", "reduction"]} ins(%[[X0]], %[[W]] : tensor<2x3x6xf32>, tensor<4x3x6xf32>) outs(%[[Z0]] : tensor<2x4xf32>) attrs = {tfc.matmul}
  // CHECK: %[[I0:.+]] = tensor.insert_slice %[[S0]] into %{{.+}}[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<3x2x4xf32>
  // CHECK: tensor.extract_slice %[[P]][0, 0, 1] [2, 3, 6]
  // CHECK: %[[S1:.+]] = linalg.generic {{.*}} attrs = {tfc.matmul}
  // CHECK: %[[I1:.+]] = tensor.insert_slice %[[S1]] into %[[I0]][1, 0, 0]
  // CHECK: tensor.extract_slice %[[P]][0, 0, 2] [2, 3, 6]
  // CHECK: %[[S2:.+]] = linalg.generic {{.*}} attrs = {tfc.matmul}
  // CHECK: %[[I2:.+]] = tensor.insert_slice %[[S2]] into %[[I1]][2, 0, 0]
  // CHECK: linalg.generic {indexing_maps = [#[[TR]], #{{.+}}]{{.*}} ins(%[[I2]] : tensor<3x2x4xf32>) outs(%{{.+}} : tensor<2x4x3xf32>)
  %0 = tf.conv1d %x, %w padding 1 : tensor<2x3x6xf32>, tensor<4x3x6xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// The same weight-gradient convolution of transposes, x^T [C, N, W] and
// dy^T [O, N, W] (what the conv1d VJP builds): the GEMMs read x and dy
// through the permutation, padded along x's last dim, and the transposes
// are never lowered.
// CHECK-DAG: #[[XWIN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[DY:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @conv1d_wide_kernel_through_transposes
// CHECK-SAME: (%[[X:.+]]: tensor<3x2x6xf32>, %[[DYARG:.+]]: tensor<3x4x6xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1] high[0, 0, 1]
// CHECK: %[[X0:.+]] = tensor.extract_slice %[[P]][0, 0, 0] [3, 2, 6] [1, 1, 1] : tensor<3x2x8xf32> to tensor<3x2x6xf32>
// CHECK: linalg.generic {indexing_maps = [#[[XWIN]], #[[DY]], #{{.+}}], iterator_types = ["reduction", "parallel", "parallel", "reduction"]} ins(%[[X0]], %[[DYARG]] : tensor<3x2x6xf32>, tensor<3x4x6xf32>) outs(%{{.+}} : tensor<2x4xf32>) attrs = {tfc.matmul}
// CHECK-COUNT-2: linalg.generic {{.*}} attrs = {tfc.matmul}
// CHECK-NOT: tf.transpose
func.func @conv1d_wide_kernel_through_transposes(%x: tensor<3x2x6xf32>, %dy: tensor<3x4x6xf32>) -> tensor<2x4x3xf32> {
  %xt = tf.transpose %x [1, 0, 2] : tensor<3x2x6xf32> -> tensor<2x3x6xf32>
  %dyt = tf.transpose %dy [1, 0, 2] : tensor<3x4x6xf32> -> tensor<4x3x6xf32>
  %0 = tf.conv1d %xt, %dyt padding 1 : tensor<2x3x6xf32>, tensor<4x3x6xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// cross_entropy: log_softmax, then a full reduction over the label positions
// reading the labelled class.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[L:.+]]: tensor<2x3x5xf32>, %[[Y:.+]]: tensor<2x5xi32>)
func.func @cross_entropy(%logits: tensor<2x3x5xf32>, %labels: tensor<2x5xi32>) -> tensor<f32> {
  // CHECK: %[[LOGP:.+]] = linalg.generic {{.*}}outs(%{{.+}} : tensor<2x3x5xf32>)
  // CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[Y]] : tensor<2x5xi32>)
  // CHECK: %[[I0:.+]] = linalg.index 0 : index
  // CHECK: %[[I1:.+]] = linalg.index 1 : index
  // CHECK: %[[LOW:.+]] = arith.maxsi %{{.+}}, %{{.+}} : i32
  // CHECK: %[[IN:.+]] = arith.minsi %[[LOW]], %{{.+}} : i32
  // CHECK: %[[C:.+]] = arith.index_cast %[[IN]] : i32 to index
  // CHECK: tensor.extract %[[LOGP]][%[[I0]], %[[C]], %[[I1]]] : tensor<2x3x5xf32>
  // CHECK: arith.subf
  // CHECK: arith.constant 1.000000e+01 : f32
  %0 = tf.cross_entropy %logits, %labels axis 1 : tensor<2x3x5xf32>, tensor<2x5xi32>
  return %0 : tensor<f32>
}

// -----

// dropout: the runtime draws the mask into bytes (tfc_dropout_mask: the
// buffer, 32 elements, the first element's index 0, the seed, key 3, the
// integer threshold ceil(0.25 * 2^32) = 1073741824), an elementwise generic
// applies it with the 1/(1 - rate) scaling; without `training` it is the
// identity.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[S:.+]]: tensor<i32>)
func.func @dropout(%x: tensor<4x8xf32>, %s: tensor<i32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: %[[SEED:.+]] = tensor.extract %[[S]][] : tensor<i32>
  // CHECK: %[[SEEDI:.+]] = arith.index_castui %[[SEED]] : i32 to index
  // CHECK: %[[FIRST:.+]] = arith.constant 0 : index
  // CHECK: %[[MASK:.+]] = memref.alloc() : memref<4x8xi8>
  // CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[MASK]]
  // CHECK-DAG: %[[N:.+]] = arith.constant 32 : index
  // CHECK-DAG: %[[KEY:.+]] = arith.constant 3 : index
  // CHECK-DAG: %[[T:.+]] = arith.constant 1073741824 : index
  // CHECK: call @tfc_dropout_mask(%[[P]], %[[N]], %[[FIRST]], %[[SEEDI]], %[[KEY]], %[[T]])
  // CHECK: %[[M:.+]] = bufferization.to_tensor %[[MASK]] restrict writable
  // CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[M]] : tensor<4x8xf32>, tensor<4x8xi8>)
  // CHECK: %[[DROP:.+]] = arith.cmpi ne, %{{.+}}, %{{.+}} : i8
  // CHECK: arith.constant 7.500000e-01 : f32
  // CHECK: arith.select %[[DROP]]
  // CHECK: return %[[R]], %[[X]]
  // CHECK: func.func private @tfc_dropout_mask(index, index, index, index, index, index)
  %0 = tf.dropout %x, %s rate 0.25 key 3 training : tensor<4x8xf32>
  %1 = tf.dropout %x, %s rate 0.25 key 4 : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// dropout on a rank's share of a data-parallel batch: the mask counts its
// elements from sample_offset * sample_size (8 elements a sample), the
// offset read from its 0-d tensor as a signed index.
// CHECK-LABEL: func.func @dropout_sample_offset
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[S:.+]]: tensor<i32>, %[[O:.+]]: tensor<i32>)
func.func @dropout_sample_offset(%x: tensor<4x8xf32>, %s: tensor<i32>, %o: tensor<i32>) -> tensor<4x8xf32> {
  // CHECK: %[[SEED:.+]] = tensor.extract %[[S]][] : tensor<i32>
  // CHECK: %[[SEEDI:.+]] = arith.index_castui %[[SEED]] : i32 to index
  // CHECK: %[[OFF:.+]] = tensor.extract %[[O]][] : tensor<i32>
  // CHECK: %[[OFFI:.+]] = arith.index_cast %[[OFF]] : i32 to index
  // CHECK-DAG: %[[SIZE:.+]] = arith.constant 8 : index
  // CHECK: %[[FIRST:.+]] = arith.muli %[[OFFI]], %[[SIZE]] : index
  // CHECK: %[[MASK:.+]] = memref.alloc() : memref<4x8xi8>
  // CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[MASK]]
  // CHECK: call @tfc_dropout_mask(%[[P]], %{{.+}}, %[[FIRST]], %[[SEEDI]], %{{.+}}, %{{.+}})
  // CHECK: linalg.generic
  %0 = tf.dropout %x, %s sample_offset %o sample_size 8 rate 0.25 key 3 training : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A tf.fusion "gemm": its epilogue (bias and relu) becomes one generic,
// marked for tf-gemm-to-runtime, that reads the product through its init
// and writes over it (no second buffer); the same for a convolution's bias
// and relu over its [samples, channels, time] product, the GEMM starting
// from zeros (outside a fusion the bias starts every chain: @conv1d).
// CHECK-LABEL: func.func @fusion_gemm
// CHECK: %[[P:.+]] = linalg.generic {{.*}} attrs = {tfc.matmul}
// CHECK: %[[E:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<4xf32>) outs(%[[P]] : tensor<8x4xf32>) attrs = {tfc.gemm_epilogue}
// CHECK: ^bb0(%[[BIAS:.+]]: f32, %[[OUT:.+]]: f32):
// CHECK: arith.addf %[[OUT]], %[[BIAS]]
// CHECK: arith.maximumf
// CHECK: %[[ZERO:.+]] = linalg.fill {{.*}} -> tensor<2x8x6xf32>
// CHECK: %[[C:.+]] = linalg.generic {{.*}} outs(%[[ZERO]] : tensor<2x8x6xf32>) attrs = {tfc.matmul}
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.+}} : tensor<8xf32>) outs(%[[C]] : tensor<2x8x6xf32>) attrs = {tfc.gemm_epilogue}
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: return %[[E]], %[[Y]]
func.func @fusion_gemm(%x: tensor<8x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>, %xc: tensor<2x3x6xf32>, %wc: tensor<8x3x3xf32>, %bc: tensor<8xf32>) -> (tensor<8x4xf32>, tensor<2x8x6xf32>) {
  %r = tf.fusion "gemm" : tensor<8x4xf32> {
    %p = tf.matmul %x, %w transpose_rhs : tensor<8x3xf32>, tensor<4x3xf32> -> tensor<8x4xf32>
    %bb = tf.broadcast_in_dim %b [1] : tensor<4xf32> to tensor<8x4xf32>
    %s = tf.add %p, %bb : tensor<8x4xf32>
    %y = tf.relu %s : tensor<8x4xf32>
    tf.yield %y : tensor<8x4xf32>
  }
  %c = tf.fusion "gemm" : tensor<2x8x6xf32> {
    %p = tf.conv1d %xc, %wc, %bc padding 1 : tensor<2x3x6xf32>, tensor<8x3x3xf32>, tensor<8xf32> -> tensor<2x8x6xf32>
    %y = tf.relu %p : tensor<2x8x6xf32>
    tf.yield %y : tensor<2x8x6xf32>
  }
  return %r, %c : tensor<8x4xf32>, tensor<2x8x6xf32>
}

// -----

// A tf.fusion becomes one loop nest: the bias broadcast, add and relu are
// one generic, and a value also read outside (the sum) is a second output of
// the same loop.
// CHECK-LABEL: func.func @fusion_loop
// CHECK: %[[R:.+]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK-NOT: tf.fusion
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @fusion_loop(%x: tensor<8x4xf32>, %b: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %r:2 = tf.fusion "loop" : tensor<8x4xf32>, tensor<8x4xf32> {
    %bb = tf.broadcast_in_dim %b [1] : tensor<4xf32> to tensor<8x4xf32>
    %s = tf.add %x, %bb : tensor<8x4xf32>
    %y = tf.relu %s : tensor<8x4xf32>
    tf.yield %s, %y : tensor<8x4xf32>, tensor<8x4xf32>
  }
  return %r#0, %r#1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A reduction group: the scale and mask fill run inside softmax's three
// stages (max, sum of exponentials, normalisation), each reading the
// logits, never a materialised scaled copy; the splat constants are
// scalars in the loop bodies, not tensors read from memory.
// CHECK-LABEL: func.func @fusion_softmax
// CHECK-SAME: (%[[L:.+]]: tensor<4x8xf32>, %[[M:.+]]: tensor<4x8xi1>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[M]], %[[L]] : tensor<4x8xi1>, tensor<4x8xf32>)
// CHECK: arith.constant -9.000000e+15 : f32
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: arith.select
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @fusion_softmax(%l: tensor<4x8xf32>, %m: tensor<4x8xi1>) -> tensor<4x8xf32> {
  %w = tf.fusion "reduction" : tensor<4x8xf32> {
    %c = tf.constant dense<0.5> : tensor<4x8xf32>
    %f = tf.constant dense<-9.0e15> : tensor<4x8xf32>
    %s = tf.mul %l, %c : tensor<4x8xf32>
    %sel = tf.select %m, %s, %f : tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>
    %y = tf.softmax %sel axis 1 : tensor<4x8xf32>
    tf.yield %y : tensor<4x8xf32>
  }
  return %w : tensor<4x8xf32>
}

// -----

// Attention calls the fused runtime kernel, reading q, k and v where the
// QKV projection wrote them: through the reshape, the heads' transpose and
// the slices, q[b, h, t, d] = qkv[b, t, 6 h + d] has strides (36, 6, 12),
// k and v start 2 and 4 floats (8 and 16 bytes) in. The mask broadcast from
// one [Tq, Tk] matrix is read with batch strides 0. The values are written
// where the heads merge again: o[b, h, t, c] = merged[b, t, 2 h + c], strides
// (12, 2, 4) in the buffer of the reshape, which takes the transpose's and
// the reshape's place.
// CHECK-LABEL: func.func @attention_heads
// CHECK: %[[QKV:.+]] = bufferization.to_memref %arg0 read_only : memref<2x3x12xf32>
// CHECK: %[[Q:.+]] = memref.extract_aligned_pointer_as_index %[[QKV]]
// CHECK: %[[KBASE:.+]] = memref.extract_aligned_pointer_as_index
// CHECK: %[[K:.+]] = arith.addi %[[KBASE]], %c8
// CHECK: %[[VBASE:.+]] = memref.extract_aligned_pointer_as_index
// CHECK: %[[V:.+]] = arith.addi %[[VBASE]], %c16
// CHECK: %[[MASK:.+]] = bufferization.to_memref %arg1 read_only : memref<3x3xi1>
// CHECK: %[[M:.+]] = memref.extract_aligned_pointer_as_index %[[MASK]]
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<2x3x4xf32>
// CHECK: %[[O:.+]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: call @tfc_attention_forward(%c2{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %cst{{(_[0-9]+)?}},
// CHECK-SAME: %[[Q]], %c36{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}},
// CHECK-SAME: %[[K]], %c36{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}},
// CHECK-SAME: %[[V]], %c36{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}},
// CHECK-SAME: %[[M]], %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}},
// CHECK-SAME: %[[O]], %c12{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @attention_heads(%qkv: tensor<2x3x12xf32>, %m: tensor<3x3xi1>) -> tensor<2x3x4xf32> {
  %r = tf.reshape %qkv : tensor<2x3x12xf32> to tensor<2x3x2x6xf32>
  %t = tf.transpose %r [0, 2, 1, 3] : tensor<2x3x2x6xf32> -> tensor<2x2x3x6xf32>
  %q = tf.slice %t start [0, 0, 0, 0] limit [2, 2, 3, 2] stride [1, 1, 1, 1] : tensor<2x2x3x6xf32> -> tensor<2x2x3x2xf32>
  %k = tf.slice %t start [0, 0, 0, 2] limit [2, 2, 3, 4] stride [1, 1, 1, 1] : tensor<2x2x3x6xf32> -> tensor<2x2x3x2xf32>
  %v = tf.slice %t start [0, 0, 0, 4] limit [2, 2, 3, 6] stride [1, 1, 1, 1] : tensor<2x2x3x6xf32> -> tensor<2x2x3x2xf32>
  %mb = tf.broadcast_in_dim %m [2, 3] : tensor<3x3xi1> to tensor<2x2x3x3xi1>
  %o = tf.attention %q, %k, %v mask %mb scale 0.5 : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x3xi1> -> tensor<2x2x3x2xf32>
  %ot = tf.transpose %o [0, 2, 1, 3] : tensor<2x2x3x2xf32> -> tensor<2x3x2x2xf32>
  %merged = tf.reshape %ot : tensor<2x3x2x2xf32> to tensor<2x3x4xf32>
  return %merged : tensor<2x3x4xf32>
}

// -----

// The adjoints of q, k and v concatenated, transposed back and reshaped (the
// QKV projection's gradient) are written straight into the [6, 12] buffer
// of the reshape: dq[b, h, t, c] at 36 b + 6 h + 12 t + c, dk 2 and dv 4
// floats (8 and 16 bytes) further.
// CHECK-LABEL: func.func @attention_grad_into_projection
// CHECK: %[[D:.+]] = memref.alloc() : memref<6x12xf32>
// CHECK: %[[BASE:.+]] = memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: %[[DK:.+]] = arith.addi %[[BASE]], %c8
// CHECK: %[[DV:.+]] = arith.addi %[[BASE]], %c16
// CHECK: call @tfc_attention_backward(
// CHECK-SAME: %[[BASE]], %c36{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}}, %[[DK]], %c36{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}}, %[[DV]], %c36{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}},
// CHECK-SAME: %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: %[[R:.+]] = bufferization.to_tensor %[[D]] restrict writable
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[R]]
func.func @attention_grad_into_projection(%q: tensor<2x2x3x2xf32>, %g: tensor<2x2x3x2xf32>) -> tensor<6x12xf32> {
  %dq, %dk, %dv = tf.attention_grad %q, %q, %q grad %g scale 0.5 : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32> -> tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>
  %c = tf.concat %dq, %dk, %dv axis 3 : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32> -> tensor<2x2x3x6xf32>
  %t = tf.transpose %c [0, 2, 1, 3] : tensor<2x2x3x6xf32> -> tensor<2x3x2x6xf32>
  %r = tf.reshape %t : tensor<2x3x2x6xf32> to tensor<6x12xf32>
  return %r : tensor<6x12xf32>
}

// -----

// The backward kernel writes three fresh buffers. A q whose last dim is not
// contiguous (a slice with stride 2) is read from its own buffer, which
// bufferization makes contiguous; a rank-3 batch is the kernel's inner loop
// (outer 1).
// CHECK-LABEL: func.func @attention_grad
// CHECK: %[[QS:.+]] = tensor.extract_slice %arg0
// CHECK: %[[QB:.+]] = bufferization.to_memref %[[QS]] read_only : memref<2x3x2xf32>
// CHECK: %[[Q:.+]] = memref.extract_aligned_pointer_as_index %[[QB]]
// CHECK: %[[DQ:.+]] = memref.alloc() : memref<2x3x2xf32>
// CHECK: %[[DK:.+]] = memref.alloc() : memref<2x5x2xf32>
// CHECK: %[[DV:.+]] = memref.alloc() : memref<2x5x3xf32>
// CHECK: call @tfc_attention_backward(%c1{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c5{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %cst{{(_[0-9]+)?}}, %[[Q]], %c0{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}},
// CHECK: bufferization.to_tensor %[[DQ]] restrict writable
// CHECK: bufferization.to_tensor %[[DK]] restrict writable
// CHECK: bufferization.to_tensor %[[DV]] restrict writable
func.func @attention_grad(%x: tensor<2x3x4xf32>, %k: tensor<2x5x2xf32>, %v: tensor<2x5x3xf32>, %g: tensor<2x3x3xf32>) -> (tensor<2x3x2xf32>, tensor<2x5x2xf32>, tensor<2x5x3xf32>) {
  %q = tf.slice %x start [0, 0, 0] limit [2, 3, 4] stride [1, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v grad %g scale 0.5 : tensor<2x3x2xf32>, tensor<2x5x2xf32>, tensor<2x5x3xf32>, tensor<2x3x3xf32> -> tensor<2x3x2xf32>, tensor<2x5x2xf32>, tensor<2x5x3xf32>
  return %dq, %dk, %dv : tensor<2x3x2xf32>, tensor<2x5x2xf32>, tensor<2x5x3xf32>
}

// -----

// tf.layer_norm_grad is one call of the runtime's fused kernel: rows and
// width, 64 rows per block of the parameter sums, epsilon, the inputs'
// pointers, no gate (0), then dx, dgamma, dbeta and a scratch of 2 x 3
// blocks x 8 floats.
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK-DAG: %[[ROWS:.+]] = arith.constant 130 : index
// CHECK-DAG: %[[D:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[BLOCK:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[NONE:.+]] = arith.constant 0 : index
// CHECK: %[[DX:.+]] = memref.alloc() : memref<2x65x8xf32>
// CHECK: %[[DG:.+]] = memref.alloc() : memref<8xf32>
// CHECK: %[[DB:.+]] = memref.alloc() : memref<8xf32>
// CHECK: %[[SCRATCH:.+]] = memref.alloc() : memref<48xf32>
// CHECK: call @tfc_layer_norm_backward(%[[ROWS]], %[[D]], %[[BLOCK]], %[[EPS]], %{{.+}}, %{{.+}}, %{{.+}}, %[[NONE]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0{{(_[0-9]+)?}}) : (index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index) -> ()
// CHECK: bufferization.to_tensor %[[DX]] restrict writable
// CHECK-LABEL: func.func private @tfc_layer_norm_backward
func.func @layer_norm_grad(%x: tensor<2x65x8xf32>, %gamma: tensor<8xf32>, %g: tensor<2x65x8xf32>) -> (tensor<2x65x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dgamma, %dbeta = tf.layer_norm_grad %x, %gamma grad %g {epsilon = 1.0e-5 : f32} : tensor<2x65x8xf32>, tensor<8xf32>
  return %dx, %dgamma, %dbeta : tensor<2x65x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A weight gradient with 16 or more output channels (GEMM columns) is one
// marked generic over all its taps (loops c, t, n, o, j): outT[t, n, o] +=
// x[c, n, t + j] * dy[c, o, j], read through the transposes, for
// tf-gemm-to-runtime's tfc_sgemm_taps; then [N, O, T].
// CHECK-DAG: #[[XT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1 + d4)>
// CHECK-DAG: #[[DYT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// CHECK-DAG: #[[OUTT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3)>
// CHECK-LABEL: func.func @conv1d_wide_kernel_taps
// CHECK-SAME: (%[[X:.+]]: tensor<3x2x6xf32>, %[[DY:.+]]: tensor<3x16x6xf32>)
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1] high[0, 0, 1]
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<3x2x16xf32>
// CHECK: %[[T:.+]] = linalg.generic {indexing_maps = [#[[XT]], #[[DYT]], #[[OUTT]]], iterator_types = ["reduction", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[DY]] : tensor<3x2x8xf32>, tensor<3x16x6xf32>) outs(%[[Z]] : tensor<3x2x16xf32>) attrs = {tfc.matmul}
// CHECK-NOT: tfc.matmul
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<3x2x16xf32>) outs(%{{.+}} : tensor<2x16x3xf32>)
func.func @conv1d_wide_kernel_taps(%x: tensor<3x2x6xf32>, %dy: tensor<3x16x6xf32>) -> tensor<2x16x3xf32> {
  %xt = tf.transpose %x [1, 0, 2] : tensor<3x2x6xf32> -> tensor<2x3x6xf32>
  %dyt = tf.transpose %dy [1, 0, 2] : tensor<3x16x6xf32> -> tensor<16x3x6xf32>
  %0 = tf.conv1d %xt, %dyt padding 1 : tensor<2x3x6xf32>, tensor<16x3x6xf32> -> tensor<2x16x3xf32>
  return %0 : tensor<2x16x3xf32>
}

// -----

// So is one with a single output channel (a GEMV the runtime runs for all
// taps in one pass over the samples); two to fifteen channels stay a GEMM
// per tap (@conv1d_wide_kernel_through_transposes).
// CHECK-LABEL: func.func @conv1d_one_channel_taps
// CHECK: %[[P:.+]] = tensor.pad
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %{{.+}} : tensor<3x2x8xf32>, tensor<3x1x6xf32>) outs(%{{.+}} : tensor<3x2x1xf32>) attrs = {tfc.matmul}
// CHECK-NOT: tfc.matmul
func.func @conv1d_one_channel_taps(%x: tensor<3x2x6xf32>, %dy: tensor<3x1x6xf32>) -> tensor<2x1x3xf32> {
  %xt = tf.transpose %x [1, 0, 2] : tensor<3x2x6xf32> -> tensor<2x3x6xf32>
  %dyt = tf.transpose %dy [1, 0, 2] : tensor<3x1x6xf32> -> tensor<1x3x6xf32>
  %0 = tf.conv1d %xt, %dyt padding 1 : tensor<2x3x6xf32>, tensor<1x3x6xf32> -> tensor<2x1x3xf32>
  return %0 : tensor<2x1x3xf32>
}
