// RUN: tf-opt %s --tf-bf16-gemm-operands=min-macs=0 --cse --split-input-file | FileCheck %s
// RUN: tf-opt %s --tf-bf16-gemm-operands --split-input-file | FileCheck %s --check-prefix=LARGE
// RUN: tf-opt %s --tf-bf16-gemm-operands="min-macs=0 fuse-producers=false" --split-input-file | FileCheck %s --check-prefix=NOFUSE
// RUN: tf-opt %s --tf-bf16-gemm-operands="min-macs=0 keep-activation-copies=true" --split-input-file | FileCheck %s --check-prefix=KEEP
// RUN: tf-opt %s --tf-bf16-gemm-operands="min-macs=0 bf16-activations=false" --split-input-file | FileCheck %s --check-prefix=NOBITS
// RUN: tf-opt %s --tf-bf16-gemm-operands="min-macs=0 attention-outputs=false" --split-input-file | FileCheck %s --check-prefix=NOATT
// RUN: tf-opt %s --tf-bf16-gemm-operands="min-macs=0 gemm-results=false" --split-input-file | FileCheck %s --check-prefix=NORESULTS
// RUN: tf-opt %s --tf-bf16-gemm-operands="min-macs=0 attention-inputs=false" --split-input-file | FileCheck %s --check-prefix=NOINPUTS
// --precision bf16: each cuBLASLt call reads A and B from bf16 copies (their
// bits as i16) made right before it, as the call reads them; the call's
// transpose flags gain kBf16 (2), its leading dimensions become the
// copies' rows. By default only products of 2^28 multiply-adds or more.

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// Y (8x3) = X (rows 2.. of a 10x4 buffer) W^T (W stored 3x4). X's view
// keeps its offset (a strided layout); W's, contiguous from its start, has
// the identity layout (tf-map-to-gpu then reads it 4 floats at a time).
// CHECK-LABEL: func.func @plain
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[XV:.*]] = memref.reinterpret_cast %arg0 to offset: [8], sizes: [8, 4], strides: [4, 1] : memref<10x4xf32> to memref<8x4xf32, strided<[4, 1], offset: 8>>
// CHECK: %[[X16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK: linalg.generic {{.*}} ins(%[[XV]] : memref<8x4xf32, strided<[4, 1], offset: 8>>) outs(%[[X16]] : memref<8x4xi16>) attrs = {tfc.bf16_cast}
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: i16):
// CHECK: %[[BITS:.*]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK: arith.cmpi ugt
// CHECK: arith.shrui %[[BITS]]
// CHECK: arith.select
// CHECK: %[[HALF:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK: linalg.yield %[[HALF]] : i16
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X16]]
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[WV:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [3, 4], strides: [4, 1] : memref<3x4xf32> to memref<3x4xf32>{{$}}
// CHECK: %[[W16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x4xi16>
// CHECK: linalg.generic {{.*}} ins(%[[WV]] : {{.*}}) outs(%[[W16]] : memref<3x4xi16>) attrs = {tfc.bf16_cast}
// CHECK: %[[WP:.*]] = memref.extract_aligned_pointer_as_index %[[W16]]
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %[[C3]], %[[C4]], %[[XP]], %[[C4]], %[[C0]], %[[C2]], %[[WP]], %[[C4]], %[[C0]], %[[C3]], %{{.*}})
// CHECK-NOT: memref.extract_aligned_pointer_as_index %arg0
// LARGE-LABEL: func.func @plain
// LARGE-NOT: tfc.bf16_cast
// LARGE: call @tfc_cuda_sgemm
func.func @plain(%x: memref<10x4xf32>, %w: memref<3x4xf32>, %y: memref<8x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %xb = memref.extract_aligned_pointer_as_index %x : memref<10x4xf32> -> index
  %xp = arith.addi %xb, %c32 : index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<3x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x3xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c3, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c1, %yp, %c3, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_sgemm_bias_grad(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// A linear layer's backward: dX = dY W and dW = dY^T X (with db): dY is
// copied once; W and X once each, X's beside W's (the nest nearest before
// its product, past the first product).
// CHECK-LABEL: func.func @shared
// CHECK: memref.reinterpret_cast %arg0
// CHECK: tfc.bf16_cast
// CHECK: memref.reinterpret_cast %arg1
// CHECK: tfc.bf16_cast
// CHECK-NOT: memref.reinterpret_cast %arg0
// CHECK: memref.reinterpret_cast %arg2
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm_bias_grad(
func.func @shared(%dy: memref<8x3xf32>, %w: memref<3x4xf32>, %x: memref<8x4xf32>, %dx: memref<8x4xf32>, %dw: memref<3x4xf32>, %db: memref<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %dyp = memref.extract_aligned_pointer_as_index %dy : memref<8x3xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<3x4xf32> -> index
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  %dwp = memref.extract_aligned_pointer_as_index %dw : memref<3x4xf32> -> index
  %dbp = memref.extract_aligned_pointer_as_index %db : memref<3xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c3, %dyp, %c3, %c0, %c0, %wp, %c4, %c0, %c0, %dxp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %dyp2 = memref.extract_aligned_pointer_as_index %dy : memref<8x3xf32> -> index
  call @tfc_cuda_sgemm_bias_grad(%c1, %c3, %c4, %c8, %dyp2, %c3, %c0, %c1, %xp, %c4, %c0, %c0, %dwp, %c4, %c0, %c0, %c0, %dbp) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// Something between the calls writes X (or a view of it): X is copied
// again. A GEMM writing another buffer does not stop the reuse of W.
// CHECK-LABEL: func.func @clobbered
// CHECK: memref.reinterpret_cast %arg0
// CHECK: tfc.bf16_cast
// CHECK: memref.reinterpret_cast %arg1
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK: linalg.fill
// CHECK: %[[X2:.*]] = memref.alloc() {{.*}} : memref<8x4xi16>
// CHECK: tfc.bf16_cast
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
func.func @clobbered(%x: memref<8x4xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  %zp = memref.extract_aligned_pointer_as_index %z : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %half = memref.subview %x[0, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1]>>
  linalg.fill ins(%one : f32) outs(%half : memref<4x4xf32, strided<[4, 1]>>)
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %zp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// A batch of 2 products of A (2 x 8x4, 40 apart) and a shared B: A's copy
// is 3-D and contiguous (stride 32), B's 2-D (stride 0).
// CHECK-LABEL: func.func @batch
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [2, 8, 4], strides: [40, 4, 1]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<2x8x4xi16>
// CHECK: memref.reinterpret_cast %arg1 to offset: [0], sizes: [4, 4], strides: [4, 1]
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x4xi16>
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C32]], %{{.*}}, %{{.*}}, %{{.*}}, %[[C0]],
func.func @batch(%a: memref<80xf32>, %b: memref<4x4xf32>, %c: memref<2x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c40 = arith.constant 40 : index
  %ap = memref.extract_aligned_pointer_as_index %a : memref<80xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %b : memref<4x4xf32> -> index
  %cp = memref.extract_aligned_pointer_as_index %c : memref<2x8x4xf32> -> index
  call @tfc_cuda_sgemm(%c2, %c8, %c4, %c4, %ap, %c4, %c40, %c0, %bp, %c4, %c0, %c0, %cp, %c4, %c32, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// X (2 x 8 x 4, read as one 16 x 4 matrix) was last written whole by an
// elementwise generic (a ReLU, say): that generic writes the copy beside X,
// a second result of X's shape, and no copy nest is made. W, an argument,
// is copied. With fuse-producers=false, X gets a copy of its own.
// CHECK-LABEL: func.func @produced
// CHECK: %[[X16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x8x4xi16>
// CHECK: linalg.generic {{.*}} outs(%arg1, %[[X16]] : memref<2x8x4xf32>, memref<2x8x4xi16>) attrs = {tfc.keep = 1 : i64} {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i16):
// CHECK:   %[[R:.*]] = arith.maximumf
// CHECK:   %[[H:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK:   linalg.yield %[[R]], %[[H]] : f32, i16
// CHECK: memref.reinterpret_cast %arg2
// CHECK: tfc.bf16_cast
// CHECK-NOT: tfc.bf16_cast
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X16]]
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[XP]],
// NOFUSE-LABEL: func.func @produced
// NOFUSE: linalg.generic {{.*}} outs(%arg1 : memref<2x8x4xf32>)
// NOFUSE-COUNT-2: tfc.bf16_cast
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @produced(%in: memref<2x8x4xf32>, %x: memref<2x8x4xf32>, %w: memref<4x4xf32>, %y: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%in : memref<2x8x4xf32>) outs(%x : memref<2x8x4xf32>) attrs = {tfc.keep = 1} {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  %xp = memref.extract_aligned_pointer_as_index %x : memref<2x8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<16x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c16, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_layer_norm_forward(index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32)

// X (16 x 4) was last written whole by the layer norm's kernel: its call's
// y16, 0 before, points at the copy, and the kernel writes it beside X; W
// is copied. With fuse-producers=false, X gets a copy nest of its own. A
// norm writing only part of a buffer, or one that already has a y16, does
// not make the copy (@norm_partial below).
// CHECK-LABEL: func.func @norm_produced
// CHECK: %[[X16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x4xi16>
// CHECK: %[[XP16:.*]] = memref.extract_aligned_pointer_as_index %[[X16]]
// CHECK: call @tfc_cuda_layer_norm_forward(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[XP16]], %c0
// CHECK: tfc.bf16_cast
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[XP16]],
// NOFUSE-LABEL: func.func @norm_produced
// NOFUSE: call @tfc_cuda_layer_norm_forward(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c0,
// NOFUSE-COUNT-2: tfc.bf16_cast
func.func @norm_produced(%in: memref<16x4xf32>, %g: memref<4xf32>, %b: memref<4xf32>, %w: memref<4x4xf32>, %y: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() : memref<16x4xf32>
  %inp = memref.extract_aligned_pointer_as_index %in : memref<16x4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  %xp = memref.extract_aligned_pointer_as_index %x : memref<16x4xf32> -> index
  call @tfc_cuda_layer_norm_forward(%c16, %c4, %eps, %inp, %gp, %bp, %xp, %c1, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one) : (index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<16x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c16, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_layer_norm_forward(index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32)

// The product reads 8 of the norm's 16 rows: a copy nest of its own.
// CHECK-LABEL: func.func @norm_partial
// CHECK: call @tfc_cuda_layer_norm_forward(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c0,
// CHECK-COUNT-2: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
func.func @norm_partial(%in: memref<16x4xf32>, %g: memref<4xf32>, %b: memref<4xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() : memref<16x4xf32>
  %inp = memref.extract_aligned_pointer_as_index %in : memref<16x4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  %xp = memref.extract_aligned_pointer_as_index %x : memref<16x4xf32> -> index
  call @tfc_cuda_layer_norm_forward(%c16, %c4, %eps, %inp, %gp, %bp, %xp, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one) : (index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// The generic writes only half of X (a view), or X is written again after
// it: a copy of its own each time.
// CHECK-LABEL: func.func @not_produced
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<4x4xf32, strided<[4, 1]>>) {
// CHECK-COUNT-2: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_produced(%x: memref<8x4xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %half = memref.subview %x[0, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1]>>
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%half : memref<4x4xf32, strided<[4, 1]>>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// Other work between two products (a loop nest writing Z), and X read in
// fp32 after them (copied into T): the activation X (an allocation) is
// copied again rather than its copy kept alive across the work, as a
// forward's activation's would be until the backward, at the step's peak,
// beside X itself; the parameter W (an argument) keeps its copy. Nor is
// X's copy made beside its producer when other work lies between the
// producer and the product.
// With keep-activation-copies (--bf16-keep-activation-copies), X's copy is
// kept across the other work: two copies, both before the first product.
// KEEP-LABEL: func.func @apart
// KEEP: tfc.bf16_cast
// KEEP: tfc.bf16_cast
// KEEP: call @tfc_cuda_sgemm(
// KEEP-NOT: tfc.bf16_cast
// KEEP: call @tfc_cuda_sgemm(
// KEEP: return
// CHECK-LABEL: func.func @apart
// CHECK: %[[X:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[X]] : memref<8x4xf32>) {
// CHECK: linalg.generic {{.*}} outs(%arg2 : memref<8x4xf32>) {
// CHECK: memref.reinterpret_cast %[[X]]
// CHECK: tfc.bf16_cast
// CHECK: memref.reinterpret_cast %arg0
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK: linalg.generic {{.*}} outs(%arg2 : memref<8x4xf32>) {
// CHECK: memref.alloc() {{.*}} : memref<8x4xi16>
// CHECK: tfc.bf16_cast
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @apart(%w: memref<4x4xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>, %t: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%x : memref<8x4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  }
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%z : memref<8x4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  }
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%z : memref<8x4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  }
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c1) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x4xf32>) outs(%t : memref<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// One loop nest writes X and V, each whole, that two products read: both
// copies are made beside it (two more results, the nest rebuilt twice), and
// a third product, reading X again after them, reuses X's copy.
// CHECK-LABEL: func.func @two_results
// CHECK: linalg.generic {{.*}} outs(%arg1, %arg2, %{{.*}}, %{{.*}} : memref<8x4xf32>, memref<8x4xf32>, memref<8x4xi16>, memref<8x4xi16>)
// CHECK: linalg.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, i16, i16
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_results(%in: memref<8x4xf32>, %x: memref<8x4xf32>, %v: memref<8x4xf32>, %w: memref<4x4xf32>, %z: memref<8x4xf32>, %u: memref<8x4xf32>, %t: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<8x4xf32>) outs(%x, %v : memref<8x4xf32>, memref<8x4xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %n = arith.negf %a : f32
    linalg.yield %a, %n : f32, f32
  }
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %vp = memref.extract_aligned_pointer_as_index %v : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %zp = memref.extract_aligned_pointer_as_index %z : memref<8x4xf32> -> index
  %up = memref.extract_aligned_pointer_as_index %u : memref<8x4xf32> -> index
  %tp = memref.extract_aligned_pointer_as_index %t : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %zp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %vp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %up, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %tp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// H = X W, then its epilogue adds the bias in place (as tf-gemm-to-runtime
// leaves a loop nest after the call), and only the next product reads H:
// the epilogue writes H's copy and no longer H, which nothing reads after
// it. Its body still reads the product's value, now as an input: the
// product's bf16 bits (gemm-results: cuBLASLt stores it in bf16, kBf16 in
// its Accumulate flag), widened; with gemm-results=false its f32 value.
// CHECK-LABEL: func.func @epilogue_unread
// CHECK-NOT: memref.alloc() : memref<8x4xf32>
// CHECK-COUNT-2: tfc.bf16_cast
// CHECK: %[[Z16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK: %[[ZP:.*]] = memref.extract_aligned_pointer_as_index %[[Z16]]
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2, %[[ZP]], %c4, %c0, %c2)
// CHECK: %[[H16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK: linalg.generic {{.*}} ins(%arg2, %[[Z16]] : memref<4xf32>, memref<8x4xi16>) outs(%[[H16]] : memref<8x4xi16>) attrs = {tfc.gemm_epilogue} {
// CHECK: ^bb0(%[[B:.*]]: f32, %[[O:.*]]: i16, %{{.*}}: i16):
// CHECK: %[[WORD:.*]] = arith.extui %[[O]] : i16 to i32
// CHECK: %[[HIGH:.*]] = arith.shli %[[WORD]], %{{.*}} : i32
// CHECK: %[[V:.*]] = arith.bitcast %[[HIGH]] : i32 to f32
// CHECK: arith.addf %[[V]], %[[B]] : f32
// CHECK: linalg.yield %{{.*}} : i16
// CHECK-NOT: tfc.bf16_cast
// CHECK: %[[HP:.*]] = memref.extract_aligned_pointer_as_index %[[H16]]
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[HP]],
// NORESULTS-LABEL: func.func @epilogue_unread
// NORESULTS: %[[H:.*]] = memref.alloc() : memref<8x4xf32>
// NORESULTS: call @tfc_cuda_sgemm(
// NORESULTS: %[[H16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// NORESULTS: linalg.generic {{.*}} ins(%arg2, %[[H]] : memref<4xf32>, memref<8x4xf32>) outs(%[[H16]] : memref<8x4xi16>) attrs = {tfc.gemm_epilogue} {
// NORESULTS: ^bb0(%[[B:.*]]: f32, %[[O:.*]]: f32, %{{.*}}: i16):
// NORESULTS: arith.addf %[[O]], %[[B]] : f32
// NORESULTS: linalg.yield %{{.*}} : i16
// NORESULTS-NOT: tfc.bf16_cast
// NORESULTS: %[[HP:.*]] = memref.extract_aligned_pointer_as_index %[[H16]]
// NORESULTS: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[HP]],
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @epilogue_unread(%x: memref<8x4xf32>, %w: memref<4x4xf32>, %bias: memref<4xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %h = memref.alloc() : memref<8x4xf32>
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %hp = memref.extract_aligned_pointer_as_index %h : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %hp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<4xf32>) outs(%h : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%b: f32, %o: f32):
    %s = arith.addf %o, %b : f32
    linalg.yield %s : f32
  }
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %hp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// A ReLU's output H, an activation: the forward's product reads it, then,
// after other work, the backward's weight gradient dW = dY^T H copies it
// again and its gradient tests it against zero. By default H is kept as
// its bits alone: the weight gradient reads the ReLU's copy (no copy nest),
// the test reads the bits widened to f32 (the high half of a word), and H
// (unread in fp32) is not allocated. With bf16-activations=false, H stays
// fp32 beside its copy, copied again for the weight gradient and tested
// in fp32.
// CHECK-LABEL: func.func @activation_bits
// CHECK-NOT: memref<8x4xf32>{{$}}
// CHECK: %[[H16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK: linalg.generic {{.*}} ins(%arg0 : memref<8x4xf32>) outs(%[[H16]] : memref<8x4xi16>) {
// CHECK: arith.maximumf
// CHECK: linalg.yield %{{.*}} : i16
// CHECK: %[[HP:.*]] = memref.extract_aligned_pointer_as_index %[[H16]]
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[HP]],
// CHECK: linalg.fill
// CHECK: memref.reinterpret_cast %arg3
// CHECK: tfc.bf16_cast
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[HP]],
// CHECK: linalg.generic {{.*}} ins(%[[H16]], %arg3 : memref<8x4xi16>, memref<8x4xf32>) outs(%arg5 : memref<8x4xf32>) {
// CHECK: ^bb0(%[[E:.*]]: i16, %[[G:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[WORD:.*]] = arith.extui %[[E]] : i16 to i32
// CHECK: %[[HIGH:.*]] = arith.shli %[[WORD]], %{{.*}} : i32
// CHECK: %[[V:.*]] = arith.bitcast %[[HIGH]] : i32 to f32
// CHECK: arith.cmpf ogt, %[[V]], %{{.*}} : f32
// NOBITS-LABEL: func.func @activation_bits
// NOBITS: %[[H:.*]] = memref.alloc() : memref<8x4xf32>
// NOBITS: linalg.generic {{.*}} outs(%[[H]], %{{.*}} : memref<8x4xf32>, memref<8x4xi16>) {
// NOBITS: linalg.fill
// NOBITS: memref.reinterpret_cast %[[H]]
// NOBITS: tfc.bf16_cast
// NOBITS: call @tfc_cuda_sgemm(
// NOBITS: linalg.generic {{.*}} ins(%[[H]], %arg3 : memref<8x4xf32>, memref<8x4xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @activation_bits(%in: memref<8x4xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>, %dy: memref<8x4xf32>, %dw: memref<4x4xf32>, %dh: memref<8x4xf32>, %z: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<8x4xf32>) outs(%h : memref<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  %hp = memref.extract_aligned_pointer_as_index %h : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %hp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.fill ins(%zero : f32) outs(%z : memref<8x4xf32>)
  %dyp = memref.extract_aligned_pointer_as_index %dy : memref<8x4xf32> -> index
  %dwp = memref.extract_aligned_pointer_as_index %dw : memref<4x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c4, %c4, %c8, %dyp, %c4, %c0, %c1, %hp, %c4, %c0, %c0, %dwp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %dy : memref<8x4xf32>, memref<8x4xf32>) outs(%dh : memref<8x4xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %p = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %p, %g, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// As above, but the later loop nest uses H's value, not only its sign: H
// stays fp32 beside its copy.
// CHECK-LABEL: func.func @activation_read
// CHECK: %[[H:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[H]], %{{.*}} : memref<8x4xf32>, memref<8x4xi16>) {
// CHECK: call @tfc_cuda_sgemm(
// CHECK: linalg.generic {{.*}} ins(%[[H]], %arg3 : memref<8x4xf32>, memref<8x4xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @activation_read(%in: memref<8x4xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>, %dy: memref<8x4xf32>, %dh: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<8x4xf32>) outs(%h : memref<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  %hp = memref.extract_aligned_pointer_as_index %h : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %hp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %dy : memref<8x4xf32>, memref<8x4xf32>) outs(%dh : memref<8x4xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %r = arith.mulf %a, %g : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// As @apart, but nothing but the products reads X: its producer writes its
// copy, across the other work, and that alone (X, unread in fp32, is not
// allocated); both products read it (half X's bytes held until the second,
// not all of them).
// CHECK-LABEL: func.func @apart_last
// CHECK-NOT: memref<8x4xf32>{{$}}
// CHECK: %[[X16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK: linalg.generic {{.*}} outs(%[[X16]] : memref<8x4xi16>) {
// CHECK: linalg.generic {{.*}} outs(%arg2 : memref<8x4xf32>) {
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X16]]
// CHECK: memref.reinterpret_cast %arg0
// CHECK: tfc.bf16_cast
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[XP]],
// CHECK: linalg.generic {{.*}} outs(%arg2 : memref<8x4xf32>) {
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[XP]],
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @apart_last(%w: memref<4x4xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%x : memref<8x4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  }
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%z : memref<8x4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  }
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%z : memref<8x4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  }
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c1) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

// The attention forward's out, which a product reads whole: the forward
// writes its bits beside it (out16, its last argument), no copy nest.
// out is [batch 2, tokens 4, heads 2 x dv 2] (strides 16, 2, 4), the
// product reads it as 8 x 4.
func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_forward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @attention_out
// CHECK: %[[O16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x4xi16>
// CHECK: %[[O16P:.*]] = memref.extract_aligned_pointer_as_index %[[O16]]
// CHECK: call @tfc_cuda_attention_forward({{.*}}, %[[O16P]], %c0)
// CHECK-NOT: memref<8x4xf32>) outs({{.*}}tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[O16P]], %c4{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c2
// NOATT-LABEL: func.func @attention_out
// NOATT: call @tfc_cuda_attention_forward({{.*}}, %c0, %c0)
// NOATT: tfc.bf16_cast
// NOFUSE-LABEL: func.func @attention_out
// NOFUSE: call @tfc_cuda_attention_forward({{.*}}, %c0, %c0)
// NOFUSE: tfc.bf16_cast
func.func @attention_out(%qkv: memref<8x12xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %scale = arith.constant 0.5 : f32
  %qp = memref.extract_aligned_pointer_as_index %qkv : memref<8x12xf32> -> index
  %kp = arith.addi %qp, %c8 : index
  %vp = arith.addi %qp, %c16 : index
  %o = memref.alloc() : memref<2x4x4xf32>
  %op = memref.extract_aligned_pointer_as_index %o : memref<2x4x4xf32> -> index
  call @tfc_cuda_attention_forward(%c2, %c2, %c4, %c4, %c2, %c2, %scale, %qp, %c48, %c6, %c12, %kp, %c48, %c6, %c12, %vp, %c48, %c6, %c12, %c0, %c0, %c0, %c0, %op, %c16, %c2, %c4, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %op, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

// A product reading half of out (its first batch item): a copy nest.
func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_forward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @attention_out_partial
// CHECK: call @tfc_cuda_attention_forward({{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: tfc.bf16_cast
func.func @attention_out_partial(%qkv: memref<8x12xf32>, %w: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %scale = arith.constant 0.5 : f32
  %qp = memref.extract_aligned_pointer_as_index %qkv : memref<8x12xf32> -> index
  %kp = arith.addi %qp, %c8 : index
  %vp = arith.addi %qp, %c16 : index
  %o = memref.alloc() : memref<2x4x4xf32>
  %op = memref.extract_aligned_pointer_as_index %o : memref<2x4x4xf32> -> index
  call @tfc_cuda_attention_forward(%c2, %c2, %c4, %c4, %c2, %c2, %scale, %qp, %c48, %c6, %c12, %kp, %c48, %c6, %c12, %vp, %c48, %c6, %c12, %c0, %c0, %c0, %c0, %op, %c16, %c2, %c4, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<4x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c4, %c4, %c4, %op, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

// The attention backward's dq, dk and dv side by side in one buffer (the
// QKV projection's gradient, [8 tokens, heads 2 x (dq, dk, dv) 2 each]:
// offsets 0, 2 and 4 elements), which only the two products read: the
// kernel stores them as bf16 bits alone (gradsBf16 = 7) at 0, 4 and 8
// bytes of a 2-byte buffer; no copy nest, no f32 buffer.
func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_backward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @attention_grads
// CHECK-NOT: memref<8x12xf32>{{$}}
// CHECK: %[[G16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x12xi16>
// CHECK: %[[GP:.*]] = memref.extract_aligned_pointer_as_index %[[G16]]
// CHECK-DAG: %[[DK:.*]] = arith.addi %[[GP]], %c4
// CHECK-DAG: %[[DV:.*]] = arith.addi %[[GP]], %c8
// CHECK: call @tfc_cuda_attention_backward({{.*}}, %[[GP]], %c48{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}}, %[[DK]], %c48{{(_[0-9]+)?}}, %c6{{(_[0-9]+)?}}, %c12{{(_[0-9]+)?}}, %[[DV]], {{.*}}, %c7, %c0)
// CHECK-NOT: memref<8x12xf32>) outs({{.*}}tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[GP]],
// CHECK: call @tfc_cuda_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[GP]],
// NOATT-LABEL: func.func @attention_grads
// NOATT: call @tfc_cuda_attention_backward({{.*}}, %c0, %c0)
// NOATT: tfc.bf16_cast
func.func @attention_grads(%qkv: memref<8x12xf32>, %do: memref<8x4xf32>, %w: memref<4x12xf32>, %x: memref<8x4xf32>, %dx: memref<8x4xf32>, %dw: memref<12x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %scale = arith.constant 0.5 : f32
  %qp = memref.extract_aligned_pointer_as_index %qkv : memref<8x12xf32> -> index
  %kp = arith.addi %qp, %c8 : index
  %vp = arith.addi %qp, %c16 : index
  %dop = memref.extract_aligned_pointer_as_index %do : memref<8x4xf32> -> index
  %g = memref.alloc() : memref<8x12xf32>
  %gp = memref.extract_aligned_pointer_as_index %g : memref<8x12xf32> -> index
  %gk = arith.addi %gp, %c8 : index
  %gv = arith.addi %gp, %c16 : index
  call @tfc_cuda_attention_backward(%c2, %c2, %c4, %c4, %c2, %c2, %scale, %qp, %c48, %c6, %c12, %kp, %c48, %c6, %c12, %vp, %c48, %c6, %c12, %c0, %c0, %c0, %c0, %dop, %c16, %c2, %c4, %gp, %c48, %c6, %c12, %gk, %c48, %c6, %c12, %gv, %c48, %c6, %c12, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x12xf32> -> index
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  %dwp = memref.extract_aligned_pointer_as_index %dw : memref<12x4xf32> -> index
  // dX = dQKV W^T; dW = dQKV^T X
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c12, %gp, %c12, %c0, %c0, %wp, %c12, %c0, %c1, %dxp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  call @tfc_cuda_sgemm(%c1, %c12, %c4, %c8, %gp, %c12, %c0, %c1, %xp, %c4, %c0, %c0, %dwp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

// The same with the gradient read in f32 after the products too: stored
// f32, copied (gradsBf16 stays 0).
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_backward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @attention_grads_read
// CHECK: call @tfc_cuda_attention_backward({{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: tfc.bf16_cast
func.func @attention_grads_read(%qkv: memref<8x12xf32>, %do: memref<8x4xf32>, %w: memref<4x12xf32>, %dx: memref<8x4xf32>, %z: memref<8x12xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %scale = arith.constant 0.5 : f32
  %qp = memref.extract_aligned_pointer_as_index %qkv : memref<8x12xf32> -> index
  %kp = arith.addi %qp, %c8 : index
  %vp = arith.addi %qp, %c16 : index
  %dop = memref.extract_aligned_pointer_as_index %do : memref<8x4xf32> -> index
  %g = memref.alloc() : memref<8x12xf32>
  %gp = memref.extract_aligned_pointer_as_index %g : memref<8x12xf32> -> index
  %gk = arith.addi %gp, %c8 : index
  %gv = arith.addi %gp, %c16 : index
  call @tfc_cuda_attention_backward(%c2, %c2, %c4, %c4, %c2, %c2, %scale, %qp, %c48, %c6, %c12, %kp, %c48, %c6, %c12, %vp, %c48, %c6, %c12, %c0, %c0, %c0, %c0, %dop, %c16, %c2, %c4, %gp, %c48, %c6, %c12, %gk, %c48, %c6, %c12, %gv, %c48, %c6, %c12, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x12xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c12, %gp, %c12, %c0, %c0, %wp, %c12, %c0, %c1, %dxp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<8x12xf32>) outs(%z : memref<8x12xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// Parameters' copies (the arguments tfc.abi names params) are made at the
// start, side by side, however late their products come (tf-merge-launches
// then runs them as one launch); an activation's right before its
// product, an input's (%arg3) beside the nest nearest before its product
// (the fill, past the third product and W3's copy). A parameter written
// before its product (%arg2, by the fill) is copied after the write. W1's
// copy serves its second product too.
// CHECK-LABEL: func.func @parameters_first(
// CHECK-NEXT: memref.reinterpret_cast %arg0 to offset: [0], sizes: [4, 4]
// CHECK-NOT: linalg.fill
// CHECK: tfc.bf16_cast
// CHECK-NOT: linalg.fill
// CHECK: memref.reinterpret_cast %arg1 to offset: [16], sizes: [4, 4], strides: [4, 1]
// CHECK-NOT: linalg.fill
// CHECK: tfc.bf16_cast
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[H:.*]] : memref<8x4xf32>)
// CHECK: memref.reinterpret_cast %[[H]]
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<4x4xf32>)
// CHECK-NEXT: memref.reinterpret_cast %arg3
// CHECK: tfc.bf16_cast
// CHECK: memref.reinterpret_cast %arg2
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
func.func @parameters_first(%w1: memref<4x4xf32>, %w2: memref<8x4xf32>, %w3: memref<4x4xf32>, %x: memref<8x4xf32>, %y1: memref<8x4xf32>, %y2: memref<8x4xf32>, %y3: memref<8x4xf32>, %y4: memref<8x4xf32>) attributes {tfc.abi = {args = [{kind = "param", name = "w1"}, {kind = "param", name = "w2"}, {kind = "param", name = "w3"}, {kind = "input", name = "x"}], results = []}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %h = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%one : f32) outs(%h : memref<8x4xf32>)
  %hp = memref.extract_aligned_pointer_as_index %h : memref<8x4xf32> -> index
  %w1p = memref.extract_aligned_pointer_as_index %w1 : memref<4x4xf32> -> index
  %y1p = memref.extract_aligned_pointer_as_index %y1 : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %hp, %c4, %c0, %c0, %w1p, %c4, %c0, %c0, %y1p, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  // Rows 4..8 of %w2 (64 bytes on), through a view made after the start.
  %low = memref.subview %w2[4, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1], offset: 16>>
  %w2b = memref.extract_aligned_pointer_as_index %low : memref<4x4xf32, strided<[4, 1], offset: 16>> -> index
  %w2p = arith.addi %w2b, %c64 : index
  %y2p = memref.extract_aligned_pointer_as_index %y2 : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %hp, %c4, %c0, %c0, %w2p, %c4, %c0, %c0, %y2p, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.fill ins(%one : f32) outs(%w3 : memref<4x4xf32>)
  %w3p = memref.extract_aligned_pointer_as_index %w3 : memref<4x4xf32> -> index
  %y3p = memref.extract_aligned_pointer_as_index %y3 : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %hp, %c4, %c0, %c0, %w3p, %c4, %c0, %c0, %y3p, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %y4p = memref.extract_aligned_pointer_as_index %y4 : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %w1p, %c4, %c0, %c0, %y4p, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// An activation's copy goes right after the loop nest nearest before its
// product where only runtime calls (products, a layer norm's backward) and
// copies that leave it alone lie between (attention's output copied again
// in the backward, beside the ReLU's gradient before the FFN's products):
// the two nests side by side are one launch (here the nest writes its own
// result's copy alone). Not past a product writing it (%a by the second
// call), nor past other work (the memref.copy).
// CHECK-LABEL: func.func @copy_beside_nest
// CHECK: linalg.generic {{.*}} ins(%arg1 : memref<8x4xf32>)
// CHECK-NOT: call
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [8, 4]
// CHECK-NEXT: memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK-NEXT: linalg.generic {{.*}} attrs = {tfc.bf16_cast}
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK: memref.reinterpret_cast %arg1
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
// CHECK: memref.copy
// CHECK: memref.reinterpret_cast %arg2
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_sgemm(
func.func @copy_beside_nest(%x: memref<8x4xf32>, %a: memref<8x4xf32>, %b: memref<8x4xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>) attributes {tfc.abi = {args = [{kind = "input", name = "x"}, {kind = "input", name = "a"}, {kind = "input", name = "b"}, {kind = "param", name = "w"}], results = []}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %g = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<8x4xf32>) outs(%g : memref<8x4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %twice = arith.addf %i, %i : f32
    linalg.yield %twice : f32
  }
  %gp = memref.extract_aligned_pointer_as_index %g : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  %ap = memref.extract_aligned_pointer_as_index %a : memref<8x4xf32> -> index
  // Writes %y (neither %x nor %a's copy's source): X's copy passes it.
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %gp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %zp = memref.extract_aligned_pointer_as_index %z : memref<8x4xf32> -> index
  // X W into %a: %a's copy below may not pass it.
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %ap, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %ap, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %zp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  memref.copy %y, %z : memref<8x4xf32> to memref<8x4xf32>
  %bp = memref.extract_aligned_pointer_as_index %b : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %bp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %zp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_layer_norm_backward(index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index)

// A layer norm backward storing dx's dropout (a post-norm layer's dropout
// gradient) into a buffer that only copies of all of it read afterwards
// stores its bf16 bits alone (DropoutBits 1), which the copies become:
// no copy nest, no f32 buffer. Read in f32 too (@dropout_read), it stays.
// CHECK-LABEL: func.func @dropout_as_bits
// CHECK: %[[BITS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK: %[[BP:.+]] = memref.extract_aligned_pointer_as_index %[[BITS]]
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], %c1,
// CHECK-NOT: memref.alloc() : memref<8x4xf32>
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], %{{[^,]+}}, %{{[^,]+}}, %c2,
// NOFUSE-LABEL: func.func @dropout_as_bits
// NOFUSE: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0,
// NOFUSE: tfc.bf16_cast
func.func @dropout_as_bits(%x: memref<8x4xf32>, %gamma: memref<4xf32>, %g: memref<8x4xf32>, %seed: memref<i32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>, %dx: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %threshold = arith.constant 1073741824 : index
  %eps = arith.constant 1.0e-5 : f32
  %keep = arith.constant 0.75 : f32
  %drop = memref.alloc() : memref<8x4xf32>
  %dgamma = memref.alloc() : memref<4xf32>
  %dbeta = memref.alloc() : memref<4xf32>
  %scratch = memref.alloc() : memref<8xf32>
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %gammap = memref.extract_aligned_pointer_as_index %gamma : memref<4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<8x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  %dgp = memref.extract_aligned_pointer_as_index %dgamma : memref<4xf32> -> index
  %dbp = memref.extract_aligned_pointer_as_index %dbeta : memref<4xf32> -> index
  %sp = memref.extract_aligned_pointer_as_index %scratch : memref<8xf32> -> index
  %dropp = memref.extract_aligned_pointer_as_index %drop : memref<8x4xf32> -> index
  %seedp = memref.extract_aligned_pointer_as_index %seed : memref<i32> -> index
  call @tfc_cuda_layer_norm_backward(%c8, %c4, %c16, %eps, %xp, %gammap, %gp, %c0, %dxp, %dgp, %dbp, %sp, %dropp, %c0, %seedp, %c0, %c0, %c3, %threshold, %keep, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  %a = memref.extract_aligned_pointer_as_index %drop : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %a, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// CHECK-LABEL: func.func @dropout_read
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0,
// CHECK: tfc.bf16_cast
// CHECK: memref.copy
func.func @dropout_read(%x: memref<8x4xf32>, %gamma: memref<4xf32>, %g: memref<8x4xf32>, %seed: memref<i32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>, %dx: memref<8x4xf32>, %z: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %threshold = arith.constant 1073741824 : index
  %eps = arith.constant 1.0e-5 : f32
  %keep = arith.constant 0.75 : f32
  %drop = memref.alloc() : memref<8x4xf32>
  %dgamma = memref.alloc() : memref<4xf32>
  %dbeta = memref.alloc() : memref<4xf32>
  %scratch = memref.alloc() : memref<8xf32>
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %gammap = memref.extract_aligned_pointer_as_index %gamma : memref<4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<8x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  %dgp = memref.extract_aligned_pointer_as_index %dgamma : memref<4xf32> -> index
  %dbp = memref.extract_aligned_pointer_as_index %dbeta : memref<4xf32> -> index
  %sp = memref.extract_aligned_pointer_as_index %scratch : memref<8xf32> -> index
  %dropp = memref.extract_aligned_pointer_as_index %drop : memref<8x4xf32> -> index
  %seedp = memref.extract_aligned_pointer_as_index %seed : memref<i32> -> index
  call @tfc_cuda_layer_norm_backward(%c8, %c4, %c16, %eps, %xp, %gammap, %gp, %c0, %dxp, %dgp, %dbp, %sp, %dropp, %c0, %seedp, %c0, %c0, %c3, %threshold, %keep, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  %a = memref.extract_aligned_pointer_as_index %drop : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %a, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  memref.copy %drop, %z : memref<8x4xf32> to memref<8x4xf32>
  return
}

// Without a dropout (no seed), dx itself that only copies of all of it read
// afterwards: the kernel stores its bits alone in the dropout's place
// (DropoutBits 1, the seed still 0: no mask) and dx goes (0). Read in f32
// too (@dx_read), it stays.
// CHECK-LABEL: func.func @dx_as_bits
// CHECK: %[[BITS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK: %[[BP:.+]] = memref.extract_aligned_pointer_as_index %[[BITS]]
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], %c1{{(_[0-9]+)?}}, %c0,
// CHECK-NOT: memref.alloc() : memref<8x4xf32>
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], %{{[^,]+}}, %{{[^,]+}}, %c2,
// NOFUSE-LABEL: func.func @dx_as_bits
// NOFUSE: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0, %c0,
// NOFUSE: tfc.bf16_cast
func.func @dx_as_bits(%x: memref<8x4xf32>, %gamma: memref<4xf32>, %g: memref<8x4xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %dx = memref.alloc() : memref<8x4xf32>
  %dgamma = memref.alloc() : memref<4xf32>
  %dbeta = memref.alloc() : memref<4xf32>
  %scratch = memref.alloc() : memref<8xf32>
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %gammap = memref.extract_aligned_pointer_as_index %gamma : memref<4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<8x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  %dgp = memref.extract_aligned_pointer_as_index %dgamma : memref<4xf32> -> index
  %dbp = memref.extract_aligned_pointer_as_index %dbeta : memref<4xf32> -> index
  %sp = memref.extract_aligned_pointer_as_index %scratch : memref<8xf32> -> index
  call @tfc_cuda_layer_norm_backward(%c8, %c4, %c16, %eps, %xp, %gammap, %gp, %c0, %dxp, %dgp, %dbp, %sp, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  %a = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %a, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// CHECK-LABEL: func.func @dx_read
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0, %c0,
// CHECK: tfc.bf16_cast
// CHECK: memref.copy
func.func @dx_read(%x: memref<8x4xf32>, %gamma: memref<4xf32>, %g: memref<8x4xf32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %dx = memref.alloc() : memref<8x4xf32>
  %dgamma = memref.alloc() : memref<4xf32>
  %dbeta = memref.alloc() : memref<4xf32>
  %scratch = memref.alloc() : memref<8xf32>
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %gammap = memref.extract_aligned_pointer_as_index %gamma : memref<4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<8x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  %dgp = memref.extract_aligned_pointer_as_index %dgamma : memref<4xf32> -> index
  %dbp = memref.extract_aligned_pointer_as_index %dbeta : memref<4xf32> -> index
  %sp = memref.extract_aligned_pointer_as_index %scratch : memref<8xf32> -> index
  call @tfc_cuda_layer_norm_backward(%c8, %c4, %c16, %eps, %xp, %gammap, %gp, %c0, %dxp, %dgp, %dbp, %sp, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  %a = memref.extract_aligned_pointer_as_index %dx : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %a, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  memref.copy %dx, %z : memref<8x4xf32> to memref<8x4xf32>
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_cross_entropy_fused(index, index, index, f32, index, index, index, index, index, index, index, index, index)

// A train step's loss and gradient in one call whose dlogits only copies of
// all of it read afterwards: the kernel stores its bf16 bits alone
// (DlogitsBits 1), which the copy becomes: no copy nest, no f32 buffer.
// Read in f32 too (@dlogits_read), it stays.
// CHECK-LABEL: func.func @dlogits_as_bits
// CHECK: %[[BITS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xi16>
// CHECK: %[[BP:.+]] = memref.extract_aligned_pointer_as_index %[[BITS]]
// CHECK: call @tfc_cuda_cross_entropy_fused(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}})
// CHECK-NOT: memref.alloc() : memref<8x4xf32>
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], %{{[^,]+}}, %{{[^,]+}}, %c2,
// NOFUSE-LABEL: func.func @dlogits_as_bits
// NOFUSE: call @tfc_cuda_cross_entropy_fused({{.*}}, %c0)
// NOFUSE: tfc.bf16_cast
func.func @dlogits_as_bits(%logits: memref<8x4xf32>, %labels: memref<8xi32>, %g: memref<f32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %count = arith.constant 8.0 : f32
  %rows = memref.alloc() : memref<8xf32>
  %loss = memref.alloc() : memref<f32>
  %d = memref.alloc() : memref<8x4xf32>
  %lp = memref.extract_aligned_pointer_as_index %logits : memref<8x4xf32> -> index
  %yl = memref.extract_aligned_pointer_as_index %labels : memref<8xi32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<f32> -> index
  %rp = memref.extract_aligned_pointer_as_index %rows : memref<8xf32> -> index
  %op = memref.extract_aligned_pointer_as_index %loss : memref<f32> -> index
  %dp = memref.extract_aligned_pointer_as_index %d : memref<8x4xf32> -> index
  call @tfc_cuda_cross_entropy_fused(%c8, %c4, %c1, %count, %lp, %yl, %gp, %rp, %op, %dp, %c0, %c0, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  %a = memref.extract_aligned_pointer_as_index %d : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %a, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// CHECK-LABEL: func.func @dlogits_read
// CHECK: call @tfc_cuda_cross_entropy_fused({{.*}}, %c0)
// CHECK: tfc.bf16_cast
// CHECK: memref.copy
func.func @dlogits_read(%logits: memref<8x4xf32>, %labels: memref<8xi32>, %g: memref<f32>, %w: memref<4x4xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %count = arith.constant 8.0 : f32
  %rows = memref.alloc() : memref<8xf32>
  %loss = memref.alloc() : memref<f32>
  %d = memref.alloc() : memref<8x4xf32>
  %lp = memref.extract_aligned_pointer_as_index %logits : memref<8x4xf32> -> index
  %yl = memref.extract_aligned_pointer_as_index %labels : memref<8xi32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<f32> -> index
  %rp = memref.extract_aligned_pointer_as_index %rows : memref<8xf32> -> index
  %op = memref.extract_aligned_pointer_as_index %loss : memref<f32> -> index
  %dp = memref.extract_aligned_pointer_as_index %d : memref<8x4xf32> -> index
  call @tfc_cuda_cross_entropy_fused(%c8, %c4, %c1, %count, %lp, %yl, %gp, %rp, %op, %dp, %c0, %c0, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  %a = memref.extract_aligned_pointer_as_index %d : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %a, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  memref.copy %d, %z : memref<8x4xf32> to memref<8x4xf32>
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_layer_norm_forward(index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32)
func.func private @tfc_cuda_layer_norm_backward(index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index)

// The output net's activation (relu(layer_norm(x)), the classifier's A),
// which the backward reads for the weight gradient's product and as the
// norm's ReLU gate: its y16 copy is kept alone. The forward stores no y
// (Y 0), the weight gradient reads the bits (no copy nest of y), and the
// backward reads its gate from them (GateBits 1); y's f32 buffer goes.
// With bf16-activations=false y stays, copied again for the weight
// gradient; read by anything else (@gate_read), too.
// CHECK-LABEL: func.func @gate_as_bits
// CHECK: %[[BITS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<16x4xi16>
// CHECK: %[[BP:.+]] = memref.extract_aligned_pointer_as_index %[[BITS]]
// CHECK: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %[[BP]],
// CHECK-NOT: memref.alloc() : memref<16x4xf32>
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], %{{[^,]+}}, %{{[^,]+}}, %c2,
// CHECK-NOT: memref.alloc() : memref<16x4xf32>
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], %{{[^,]+}}, %{{[^,]+}}, %c3,
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BP]], {{.+}}, %c1{{(_[0-9]+)?}}) :
// NOBITS-LABEL: func.func @gate_as_bits
// NOBITS: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[YP:[^,]+]], %c1{{(_[0-9]+)?}}, %{{[^,]+}},
// NOBITS: tfc.bf16_cast
// NOBITS: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[YP]], {{.+}}, %c0) :
func.func @gate_as_bits(%in: memref<16x4xf32>, %g: memref<4xf32>, %b: memref<4xf32>, %w: memref<4x4xf32>, %logits: memref<16x4xf32>, %dlogits: memref<16x4xf32>, %dw: memref<4x4xf32>, %t: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %y = memref.alloc() : memref<16x4xf32>
  %inp = memref.extract_aligned_pointer_as_index %in : memref<16x4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<16x4xf32> -> index
  call @tfc_cuda_layer_norm_forward(%c16, %c4, %eps, %inp, %gp, %bp, %yp, %c1, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one) : (index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %lp = memref.extract_aligned_pointer_as_index %logits : memref<16x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c16, %c4, %c4, %yp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %lp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  // Other work (the loss): the forward's copy is not held across it.
  memref.copy %logits, %dlogits : memref<16x4xf32> to memref<16x4xf32>
  // dW = y^T dlogits.
  %dlp = memref.extract_aligned_pointer_as_index %dlogits : memref<16x4xf32> -> index
  %dwp = memref.extract_aligned_pointer_as_index %dw : memref<4x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c4, %c4, %c16, %yp, %c4, %c0, %c1, %dlp, %c4, %c0, %c0, %dwp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  // The norm's backward, the ReLU's gate y.
  %dx = memref.alloc() : memref<16x4xf32>
  %dgamma = memref.alloc() : memref<4xf32>
  %dbeta = memref.alloc() : memref<4xf32>
  %scratch = memref.alloc() : memref<8xf32>
  %tp = memref.extract_aligned_pointer_as_index %t : memref<16x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<16x4xf32> -> index
  %dgp = memref.extract_aligned_pointer_as_index %dgamma : memref<4xf32> -> index
  %dbp = memref.extract_aligned_pointer_as_index %dbeta : memref<4xf32> -> index
  %sp = memref.extract_aligned_pointer_as_index %scratch : memref<8xf32> -> index
  call @tfc_cuda_layer_norm_backward(%c16, %c4, %c16, %eps, %inp, %gp, %tp, %yp, %dxp, %dgp, %dbp, %sp, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index) -> ()
  memref.copy %dx, %in : memref<16x4xf32> to memref<16x4xf32>
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_layer_norm_forward(index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32)
func.func private @tfc_cuda_layer_norm_backward(index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index)

// CHECK-LABEL: func.func @gate_read
// CHECK: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[YP:[^,]+]], %c1{{(_[0-9]+)?}}, %{{[^,]+}},
// CHECK: tfc.bf16_cast
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[YP]], {{.+}}, %c0) :
// CHECK: memref.copy
func.func @gate_read(%in: memref<16x4xf32>, %g: memref<4xf32>, %b: memref<4xf32>, %w: memref<4x4xf32>, %logits: memref<16x4xf32>, %dlogits: memref<16x4xf32>, %dw: memref<4x4xf32>, %t: memref<16x4xf32>, %z: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %y = memref.alloc() : memref<16x4xf32>
  %inp = memref.extract_aligned_pointer_as_index %in : memref<16x4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<16x4xf32> -> index
  call @tfc_cuda_layer_norm_forward(%c16, %c4, %eps, %inp, %gp, %bp, %yp, %c1, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one) : (index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32) -> ()
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %lp = memref.extract_aligned_pointer_as_index %logits : memref<16x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c16, %c4, %c4, %yp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %lp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  memref.copy %logits, %dlogits : memref<16x4xf32> to memref<16x4xf32>
  %dlp = memref.extract_aligned_pointer_as_index %dlogits : memref<16x4xf32> -> index
  %dwp = memref.extract_aligned_pointer_as_index %dw : memref<4x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c4, %c4, %c16, %yp, %c4, %c0, %c1, %dlp, %c4, %c0, %c0, %dwp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %dx = memref.alloc() : memref<16x4xf32>
  %dgamma = memref.alloc() : memref<4xf32>
  %dbeta = memref.alloc() : memref<4xf32>
  %scratch = memref.alloc() : memref<8xf32>
  %tp = memref.extract_aligned_pointer_as_index %t : memref<16x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<16x4xf32> -> index
  %dgp = memref.extract_aligned_pointer_as_index %dgamma : memref<4xf32> -> index
  %dbp = memref.extract_aligned_pointer_as_index %dbeta : memref<4xf32> -> index
  %sp = memref.extract_aligned_pointer_as_index %scratch : memref<8xf32> -> index
  call @tfc_cuda_layer_norm_backward(%c16, %c4, %c16, %eps, %inp, %gp, %tp, %yp, %dxp, %dgp, %dbp, %sp, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index) -> ()
  memref.copy %y, %z : memref<16x4xf32> to memref<16x4xf32>
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// A product that only loop nests read after it (the FFN's first, before
// its bias and ReLU): stored as bf16 by cuBLASLt (kBf16, 2, in its
// Accumulate flag), the nests reading the bits widened (one through a
// collapse of the buffer); no f32 buffer. gemm-results=false keeps it f32.
// CHECK-LABEL: func.func @result_bits
// CHECK: %[[Z16:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x4xi16>
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[Z16]] {{\[}}[0, 1], [2]] : memref<2x4x4xi16> into memref<8x4xi16>
// CHECK: %[[ZP:.+]] = memref.extract_aligned_pointer_as_index %[[Z16]]
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2{{(_[0-9]+)?}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2{{(_[0-9]+)?}}, %[[ZP]], %c4{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}) :
// CHECK-NOT: memref<2x4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[FLAT]], %arg2 : memref<8x4xi16>, memref<4xf32>) outs(%arg3 : memref<8x4xf32>) {
// CHECK: ^bb0(%[[E:.*]]: i16, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[WORD:.*]] = arith.extui %[[E]] : i16 to i32
// CHECK: %[[HIGH:.*]] = arith.shli %[[WORD]], %{{.*}} : i32
// CHECK: %[[V:.*]] = arith.bitcast %[[HIGH]] : i32 to f32
// CHECK: arith.addf %[[V]],
// CHECK: linalg.generic {{.*}} ins(%[[Z16]] : memref<2x4x4xi16>) outs(%arg4 : memref<2x4x4xf32>) {
// CHECK: arith.extui
// NORESULTS-LABEL: func.func @result_bits
// NORESULTS: %[[Z:.+]] = memref.alloc() : memref<2x4x4xf32>
// NORESULTS: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2{{(_[0-9]+)?}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2{{(_[0-9]+)?}}, %{{[^,]+}}, %c4, %c0, %c0) :
// NORESULTS-NOT: arith.extui
#id3 = affine_map<(d0, d1) -> (d0, d1)>
#row3 = affine_map<(d0, d1) -> (d1)>
#id33 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @result_bits(%x: memref<8x4xf32>, %w: memref<4x4xf32>, %bias: memref<4xf32>, %h: memref<8x4xf32>, %t: memref<2x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<2x4x4xf32>
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %zp = memref.extract_aligned_pointer_as_index %z : memref<2x4x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %zp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %flat = memref.collapse_shape %z [[0, 1], [2]] : memref<2x4x4xf32> into memref<8x4xf32>
  linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%flat, %bias : memref<8x4xf32>, memref<4xf32>) outs(%h : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id33, #id33], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%z : memref<2x4x4xf32>) outs(%t : memref<2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)

// Read by other than a loop nest (a copy), or accumulated into, the
// product stays fp32.
// CHECK-LABEL: func.func @result_read
// CHECK: %[[Z:.+]] = memref.alloc() : memref<8x4xf32>
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2, %{{[^,]+}}, %c4, %c0, %c0) :
// CHECK: call @tfc_cuda_sgemm(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2, %{{[^,]+}}, %c4, %c0, %c1) :
// CHECK-NOT: arith.extui
#id4 = affine_map<(d0, d1) -> (d0, d1)>
func.func @result_read(%x: memref<8x4xf32>, %w: memref<4x4xf32>, %h: memref<8x4xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %z = memref.alloc() : memref<8x4xf32>
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x4xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<4x4xf32> -> index
  %zp = memref.extract_aligned_pointer_as_index %z : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %zp, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<8x4xf32>) outs(%h : memref<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  memref.copy %z, %y : memref<8x4xf32> to memref<8x4xf32>
  %yp = memref.extract_aligned_pointer_as_index %y : memref<8x4xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c4, %c4, %xp, %c4, %c0, %c0, %wp, %c4, %c0, %c0, %yp, %c4, %c0, %c1) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

func.func private @tfc_cuda_layer_norm_forward(index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32)
func.func private @tfc_cuda_layer_norm_backward(index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index)

// The forward's y16 written again before the backward (a fill of its
// buffer): the gate stays y, in f32, and y stays.
// CHECK-LABEL: func.func @gate_bits_written
// CHECK: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[YP:[^,]+]], %c1, %{{[^,]+}},
// CHECK: linalg.fill
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[YP]], {{.+}}, %c0) :
func.func @gate_bits_written(%in: memref<16x4xf32>, %g: memref<4xf32>, %b: memref<4xf32>, %t: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0 : i16
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %y = memref.alloc() : memref<16x4xf32>
  %y16 = memref.alloc() : memref<16x4xi16>
  %inp = memref.extract_aligned_pointer_as_index %in : memref<16x4xf32> -> index
  %gp = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  %yp = memref.extract_aligned_pointer_as_index %y : memref<16x4xf32> -> index
  %y16p = memref.extract_aligned_pointer_as_index %y16 : memref<16x4xi16> -> index
  call @tfc_cuda_layer_norm_forward(%c16, %c4, %eps, %inp, %gp, %bp, %yp, %c1, %y16p, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one) : (index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, f32) -> ()
  linalg.fill ins(%zero : i16) outs(%y16 : memref<16x4xi16>)
  %dx = memref.alloc() : memref<16x4xf32>
  %dgamma = memref.alloc() : memref<4xf32>
  %dbeta = memref.alloc() : memref<4xf32>
  %scratch = memref.alloc() : memref<8xf32>
  %tp = memref.extract_aligned_pointer_as_index %t : memref<16x4xf32> -> index
  %dxp = memref.extract_aligned_pointer_as_index %dx : memref<16x4xf32> -> index
  %dgp = memref.extract_aligned_pointer_as_index %dgamma : memref<4xf32> -> index
  %dbp = memref.extract_aligned_pointer_as_index %dbeta : memref<4xf32> -> index
  %sp = memref.extract_aligned_pointer_as_index %scratch : memref<8xf32> -> index
  call @tfc_cuda_layer_norm_backward(%c16, %c4, %c16, %eps, %inp, %gp, %tp, %yp, %dxp, %dgp, %dbp, %sp, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %one, %c0) : (index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32, index) -> ()
  memref.copy %dx, %in : memref<16x4xf32> to memref<16x4xf32>
  return
}

// -----

// A QKV projection (its bias alone as epilogue) that only attention calls
// read, as q, k and v, on heads the tensor-core kernels take (d 16): stored
// in bf16 (Accumulate kBf16 = 2) with a bf16 copy of its bias, made at the
// step's start beside the weight's; the forward and the backward read the
// bits (q, k and v 32 bytes apart where they were 64) with inputsBf16 = 1,
// and the f32 buffer goes. Without attention-inputs: f32 as before.
// [batch 2, tokens 4] x 32 features; 2 heads of [q k v] x 16 (strides:
// batch 384, head 48, token 96).
func.func private @tfc_cuda_sgemm_fused(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_forward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_backward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @qkv_bits
// CHECK: %[[B16:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x96xi16>
// CHECK: %[[QKV:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x96xi16>
// CHECK-DAG: %[[QP:.*]] = memref.extract_aligned_pointer_as_index %[[QKV]]
// CHECK-DAG: %[[BP:.*]] = memref.extract_aligned_pointer_as_index %[[B16]]
// CHECK: call @tfc_cuda_sgemm_fused(%c1{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %c96{{(_[0-9]+)?}}, %c32{{(_[0-9]+)?}}, %{{.*}}, %c32{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %{{.*}}, %c32{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %[[QP]], %c96{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %[[BP]], %c0
// CHECK-DAG: %[[KP:.*]] = arith.addi %[[QP]], %c32{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[VP:.*]] = arith.addi %[[QP]], %c64{{(_[0-9]+)?}} : index
// CHECK: call @tfc_cuda_attention_forward({{.*}}, %[[QP]], %c384{{(_[0-9]+)?}}, %c48{{(_[0-9]+)?}}, %c96{{(_[0-9]+)?}}, %[[KP]], {{.*}}, %[[VP]], {{.*}}, %c1{{(_[0-9]+)?}})
// CHECK: call @tfc_cuda_attention_backward({{.*}}, %[[QP]], %c384{{(_[0-9]+)?}}, %c48{{(_[0-9]+)?}}, %c96{{(_[0-9]+)?}}, %{{.*}}, {{.*}}, %c1{{(_[0-9]+)?}})
// CHECK-NOT: memref<8x96xf32>
// CHECK: return
// NOINPUTS-LABEL: func.func @qkv_bits
// NOINPUTS-NOT: memref<8x96xi16>
// NOINPUTS: call @tfc_cuda_attention_forward({{.*}}, %c0, %c0)
func.func @qkv_bits(%x: memref<8x32xf32>, %w: memref<96x32xf32>, %bias: memref<96xf32>, %g: memref<8x32xf32>, %dqkv: memref<8x96xf32>) attributes {tfc.abi = {args = [{kind = "input", name = "x"}, {kind = "param", name = "w"}, {kind = "param", name = "bias"}], results = []}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c384 = arith.constant 384 : index
  %scale = arith.constant 0.25 : f32
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x32xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<96x32xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %bias : memref<96xf32> -> index
  %qkv = memref.alloc() : memref<8x96xf32>
  %qp = memref.extract_aligned_pointer_as_index %qkv : memref<8x96xf32> -> index
  call @tfc_cuda_sgemm_fused(%c1, %c8, %c96, %c32, %xp, %c32, %c0, %c0, %wp, %c32, %c0, %c1, %qp, %c96, %c0, %c0, %c0, %bp, %c0, %c0, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %kp = arith.addi %qp, %c64 : index
  %vp = arith.addi %qp, %c128 : index
  %o = memref.alloc() : memref<8x32xf32>
  %op = memref.extract_aligned_pointer_as_index %o : memref<8x32xf32> -> index
  call @tfc_cuda_attention_forward(%c2, %c2, %c4, %c4, %c16, %c16, %scale, %qp, %c384, %c48, %c96, %kp, %c384, %c48, %c96, %vp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %op, %c128, %c16, %c32, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %gp = memref.extract_aligned_pointer_as_index %g : memref<8x32xf32> -> index
  %dp = memref.extract_aligned_pointer_as_index %dqkv : memref<8x96xf32> -> index
  %dkp = arith.addi %dp, %c64 : index
  %dvp = arith.addi %dp, %c128 : index
  call @tfc_cuda_attention_backward(%c2, %c2, %c4, %c4, %c16, %c16, %scale, %qp, %c384, %c48, %c96, %kp, %c384, %c48, %c96, %vp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %gp, %c128, %c16, %c32, %dp, %c384, %c48, %c96, %dkp, %c384, %c48, %c96, %dvp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

// The same projection also read by a loop nest: it stays f32.
func.func private @tfc_cuda_sgemm_fused(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_forward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @qkv_read_elsewhere
// CHECK-NOT: memref<8x96xi16>
// CHECK: call @tfc_cuda_attention_forward({{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
func.func @qkv_read_elsewhere(%x: memref<8x32xf32>, %w: memref<96x32xf32>, %bias: memref<96xf32>, %y: memref<8x96xf32>) attributes {tfc.abi = {args = [{kind = "input", name = "x"}, {kind = "param", name = "w"}, {kind = "param", name = "bias"}], results = []}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c384 = arith.constant 384 : index
  %scale = arith.constant 0.25 : f32
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x32xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<96x32xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %bias : memref<96xf32> -> index
  %qkv = memref.alloc() : memref<8x96xf32>
  %qp = memref.extract_aligned_pointer_as_index %qkv : memref<8x96xf32> -> index
  call @tfc_cuda_sgemm_fused(%c1, %c8, %c96, %c32, %xp, %c32, %c0, %c0, %wp, %c32, %c0, %c1, %qp, %c96, %c0, %c0, %c0, %bp, %c0, %c0, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %kp = arith.addi %qp, %c64 : index
  %vp = arith.addi %qp, %c128 : index
  %o = memref.alloc() : memref<8x32xf32>
  %op = memref.extract_aligned_pointer_as_index %o : memref<8x32xf32> -> index
  call @tfc_cuda_attention_forward(%c2, %c2, %c4, %c4, %c16, %c16, %scale, %qp, %c384, %c48, %c96, %kp, %c384, %c48, %c96, %vp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %op, %c128, %c16, %c32, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%qkv : memref<8x96xf32>) outs(%y : memref<8x96xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// The out projection's input gradient (dO = dY W, a tfc_cuda_sgemm with no
// epilogue) that only the attention backward reads, as its dO, where that
// backward reads q, k and v as bits (the QKV projection above): stored in
// bf16 (Accumulate kBf16 = 2) and read as bits (inputsBf16 = kQkvBf16 |
// kDoBf16 = 3); the f32 buffer goes. Without attention-inputs: neither.
func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_sgemm_fused(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_forward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_backward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @dout_bits
// CHECK: call @tfc_cuda_attention_forward
// CHECK: %[[DO:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x32xi16>
// CHECK: %[[DP:.*]] = memref.extract_aligned_pointer_as_index %[[DO]]
// CHECK: call @tfc_cuda_sgemm(%c1{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %c32{{(_[0-9]+)?}}, %c32{{(_[0-9]+)?}}, %{{.*}}, %c32{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %{{.*}}, %c32{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %[[DP]], %c32{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}})
// CHECK: call @tfc_cuda_attention_backward({{.*}}, %c0{{(_[0-9]+)?}}, %[[DP]], %c128{{(_[0-9]+)?}}, %c16{{(_[0-9]+)?}}, %c32{{(_[0-9]+)?}}, {{.*}}, %c3{{(_[0-9]+)?}})
// CHECK-NOT: memref<8x32xf32>
// CHECK: return
// NOINPUTS-LABEL: func.func @dout_bits
// NOINPUTS: call @tfc_cuda_sgemm({{.*}}, %c32, %c0, %c0)
// NOINPUTS: call @tfc_cuda_attention_backward({{.*}}, %c0, %c0)
func.func @dout_bits(%x: memref<8x32xf32>, %w: memref<96x32xf32>, %bias: memref<96xf32>, %gy: memref<8x32xf32>, %wo: memref<32x32xf32>, %dqkv: memref<8x96xf32>) attributes {tfc.abi = {args = [{kind = "input", name = "x"}, {kind = "param", name = "w"}, {kind = "param", name = "bias"}, {kind = "input", name = "gy"}, {kind = "param", name = "wo"}], results = []}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c384 = arith.constant 384 : index
  %scale = arith.constant 0.25 : f32
  %xp = memref.extract_aligned_pointer_as_index %x : memref<8x32xf32> -> index
  %wp = memref.extract_aligned_pointer_as_index %w : memref<96x32xf32> -> index
  %bp = memref.extract_aligned_pointer_as_index %bias : memref<96xf32> -> index
  %qkv = memref.alloc() : memref<8x96xf32>
  %qp = memref.extract_aligned_pointer_as_index %qkv : memref<8x96xf32> -> index
  call @tfc_cuda_sgemm_fused(%c1, %c8, %c96, %c32, %xp, %c32, %c0, %c0, %wp, %c32, %c0, %c1, %qp, %c96, %c0, %c0, %c0, %bp, %c0, %c0, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %kp = arith.addi %qp, %c64 : index
  %vp = arith.addi %qp, %c128 : index
  %o = memref.alloc() : memref<8x32xf32>
  %op = memref.extract_aligned_pointer_as_index %o : memref<8x32xf32> -> index
  call @tfc_cuda_attention_forward(%c2, %c2, %c4, %c4, %c16, %c16, %scale, %qp, %c384, %c48, %c96, %kp, %c384, %c48, %c96, %vp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %op, %c128, %c16, %c32, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %gyp = memref.extract_aligned_pointer_as_index %gy : memref<8x32xf32> -> index
  %wop = memref.extract_aligned_pointer_as_index %wo : memref<32x32xf32> -> index
  %do = memref.alloc() : memref<8x32xf32>
  %dop = memref.extract_aligned_pointer_as_index %do : memref<8x32xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c32, %c32, %gyp, %c32, %c0, %c0, %wop, %c32, %c0, %c0, %dop, %c32, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %dp = memref.extract_aligned_pointer_as_index %dqkv : memref<8x96xf32> -> index
  %dkp = arith.addi %dp, %c64 : index
  %dvp = arith.addi %dp, %c128 : index
  call @tfc_cuda_attention_backward(%c2, %c2, %c4, %c4, %c16, %c16, %scale, %qp, %c384, %c48, %c96, %kp, %c384, %c48, %c96, %vp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %dop, %c128, %c16, %c32, %dp, %c384, %c48, %c96, %dkp, %c384, %c48, %c96, %dvp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}

// -----

// The same dO where the backward reads f32 q, k and v (function
// arguments, no projection here): it stays f32.
func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func private @tfc_cuda_attention_backward(index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @dout_beside_f32_qkv
// CHECK: call @tfc_cuda_sgemm({{.*}}, %c32{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
// CHECK: call @tfc_cuda_attention_backward({{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
func.func @dout_beside_f32_qkv(%qkv: memref<8x96xf32>, %gy: memref<8x32xf32>, %wo: memref<32x32xf32>, %dqkv: memref<8x96xf32>) attributes {tfc.abi = {args = [{kind = "input", name = "qkv"}, {kind = "input", name = "gy"}, {kind = "param", name = "wo"}], results = []}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c128 = arith.constant 128 : index
  %c384 = arith.constant 384 : index
  %scale = arith.constant 0.25 : f32
  %qp = memref.extract_aligned_pointer_as_index %qkv : memref<8x96xf32> -> index
  %kp = arith.addi %qp, %c64 : index
  %vp = arith.addi %qp, %c128 : index
  %gyp = memref.extract_aligned_pointer_as_index %gy : memref<8x32xf32> -> index
  %wop = memref.extract_aligned_pointer_as_index %wo : memref<32x32xf32> -> index
  %do = memref.alloc() : memref<8x32xf32>
  %dop = memref.extract_aligned_pointer_as_index %do : memref<8x32xf32> -> index
  call @tfc_cuda_sgemm(%c1, %c8, %c32, %c32, %gyp, %c32, %c0, %c0, %wop, %c32, %c0, %c0, %dop, %c32, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  %dp = memref.extract_aligned_pointer_as_index %dqkv : memref<8x96xf32> -> index
  %dkp = arith.addi %dp, %c64 : index
  %dvp = arith.addi %dp, %c128 : index
  call @tfc_cuda_attention_backward(%c2, %c2, %c4, %c4, %c16, %c16, %scale, %qp, %c384, %c48, %c96, %kp, %c384, %c48, %c96, %vp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %dop, %c128, %c16, %c32, %dp, %c384, %c48, %c96, %dkp, %c384, %c48, %c96, %dvp, %c384, %c48, %c96, %c0, %c0, %c0, %c0, %c0, %c0, %c0, %c0) : (index, index, index, index, index, index, f32, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}
