// RUN: tf-opt %s --tf-plan-memory | FileCheck %s --check-prefix=ORDER
// RUN: tf-opt %s --tf-plan-memory="concurrent-window=8" | FileCheck %s --check-prefix=CONCURRENT
// RUN: tf-opt %s --tf-plan-memory="concurrent-window=1" | FileCheck %s --check-prefix=WINDOW

// Two branches: b from a (a's last reader, off the path to the output d)
// and c from the input, then d from c. In program order c takes a's bytes
// once b is made (192 bytes). Concurrently the copy into c would then
// overwrite a while b may still be read from it: a, b, c and d each keep
// bytes of their own (256). With a window of one op, the copy into b counts
// as done before the copy into c, and c shares a's bytes again.
// ORDER: tfc.arena_buffers = array<i64: 0, 64, 0, 3, 64, 128, 2, 10, 0, 64, 4, 7, 128, 192, 6, 8>
// ORDER-SAME: tfc.arena_bytes = 192
// CONCURRENT: tfc.arena_bytes = 256
// WINDOW: tfc.arena_bytes = 192
// The runtime call records its position in the live ranges.
// ORDER: call @use(%{{.+}}) {tfc.plan_position = 10 : i64}
func.func private @use(index)
func.func @branches(%in: memref<16xf32>, %out: memref<16xf32>, %out2: memref<16xf32>) attributes {tfc.entry = "train_step"} {
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%a : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
  %c = memref.alloc() : memref<16xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%c : memref<16xf32>)
  %d = memref.alloc() : memref<16xf32>
  linalg.copy ins(%c : memref<16xf32>) outs(%d : memref<16xf32>)
  linalg.copy ins(%d : memref<16xf32>) outs(%out2 : memref<16xf32>)
  %p = memref.extract_aligned_pointer_as_index %b : memref<16xf32> -> index
  call @use(%p) : (index) -> ()
  return
}
