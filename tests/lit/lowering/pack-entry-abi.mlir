// RUN: tf-opt %s --tf-pack-entry-abi | FileCheck %s

// The wrapper loads each buffer pointer from its array argument, builds the
// descriptors (the arena's size is its planned bytes) and calls the entry,
// now private; the manifest describes the model (an input's index bound
// too) and the entry.
// CHECK-LABEL: llvm.mlir.global external constant @tfc_manifest
// CHECK-SAME: \22batch\22:2
// CHECK-SAME: \22arena_bytes\22:256
// CHECK-SAME: {\22dtype\22:\22i32\22,\22kind\22:\22input\22,\22name\22:\22ids\22,\22shape\22:[2,5]}
// CHECK-SAME: {\22dtype\22:\22f32\22,\22kind\22:\22output\22,\22name\22:\22y\22,\22shape\22:[2]}
// CHECK-SAME: \22symbol\22:\22tfc_entry_predict\22
// CHECK-SAME: \22inputs\22:[{\22dtype\22:\22i32\22,\22index_bound\22:7,\22name\22:\22ids\22,\22shape\22:[2,5]}]
// CHECK-SAME: {\22dtype\22:\22f32\22,\22init\22:{\22kind\22:\22normal\22,\22scale\22:0.5},\22name\22:\22w\22,\22shape\22:[5]}
// CHECK-SAME: \22version\22:1
// CHECK: func.func @tfc_entry_predict(%[[BUFFERS:.*]]: !llvm.ptr)
// CHECK: llvm.getelementptr %[[BUFFERS]][0]
// CHECK: llvm.load
// CHECK: llvm.getelementptr %[[BUFFERS]][3]
// CHECK: llvm.mlir.constant(256 : index)
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<?xi8>
// CHECK: call @predict(
// CHECK: func.func private @predict
module attributes {tfc.batch = 2 : i64, tfc.model = "m",
                   tfc.inputs = [{name = "ids", type = tensor<2x5xi32>, index_bound = 7 : i64}],
                   tfc.params = [{name = "w", type = tensor<5xf32>, init = #tf.init<normal, 0.5>}]} {
  func.func @predict(%ids: memref<2x5xi32>, %w: memref<5xf32>, %y: memref<2xf32>, %arena: memref<?xi8>)
      attributes {tfc.entry = "predict", tfc.arena_bytes = 256 : i64,
                  tfc.abi = {args = [{kind = "input", name = "ids"}, {kind = "param", name = "w"}],
                             results = [{kind = "output", name = "y"}]}} {
    return
  }
}
