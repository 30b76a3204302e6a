//===- CudaHandModel.cpp - a CUDA model written by hand, for the runtime --===//
//
// What `tfc compile --target=cuda` puts in a model's object, written out for
// one small model, so that the CUDA runtime's binary (libtfc_runtime_cuda.a)
// is tested end to end without the compiler: the manifest with its device
// and "cuda" records, a PTX image of two kernels, and tfc_entry_predict,
// which does what generated host code does: launches by kernel index with
// argument slots, and a GEMM through tfc_cuda_sgemm.
//
//   y[2, 4] = x[2, 3] @ w[3, 4]   (the kernels are empty: on a GPU they
//                                  would do nothing, and the fake driver
//                                  runs none, so y is the GEMM's alone)
//
//===----------------------------------------------------------------------===//

#include <cstdint>

extern "C" {
void tfc_cuda_launch(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                     intptr_t, intptr_t, intptr_t);
void tfc_cuda_sgemm(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                    intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                    intptr_t, intptr_t);

extern const char tfc_manifest[] = R"({"version": 1, "model": "cuda_hand", "batch": 2,
 "device": "cuda",
 "cuda": {"arch": [], "image": "ptx", "kernels": ["tfc_hand_touch", "tfc_hand_mark"]},
 "params": [{"name": "w", "dtype": "f32", "shape": [3, 4], "init": {"kind": "normal", "scale": 1.0}}],
 "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
 "entries": [{"name": "predict", "symbol": "tfc_entry_predict", "arena_bytes": 256,
   "args": [{"name": "x", "kind": "input", "dtype": "f32", "shape": [2, 3]},
            {"name": "w", "kind": "param", "dtype": "f32", "shape": [3, 4]}],
   "results": [{"name": "y", "kind": "output", "dtype": "f32", "shape": [2, 4]}]}]})";

extern const char tfc_cuda_image[] = R"(//
.version 8.0
.target sm_90
.address_size 64

.visible .entry tfc_hand_touch(
	.param .u64 .ptr .global .align 4 tfc_hand_touch_param_0,
	.param .u64 tfc_hand_touch_param_1
)
{
	ret;
}

.visible .entry tfc_hand_mark(
	.param .u64 .ptr .global .align 4 tfc_hand_mark_param_0,
	.param .u64 .ptr .global .align 4 tfc_hand_mark_param_1,
	.param .u32 tfc_hand_mark_param_2
)
{
	ret;
}
)";
extern const int64_t tfc_cuda_image_size = sizeof tfc_cuda_image;

/// buffers: x, w, y, the arena.
void tfc_entry_predict(void **buffers) {
  intptr_t x = intptr_t(buffers[0]), w = intptr_t(buffers[1]), y = intptr_t(buffers[2]);
  intptr_t arena = intptr_t(buffers[3]);
  intptr_t touch[2] = {arena + 64, 8};
  tfc_cuda_launch(0, 1, 1, 1, 64, 1, 1, 0, 2, intptr_t(touch));
  tfc_cuda_sgemm(1, 2, 4, 3, x, 3, 0, 0, w, 4, 0, 0, y, 4, 0, 0);
  intptr_t mark[3] = {y, arena, 8};
  tfc_cuda_launch(1, 2, 1, 1, 4, 1, 1, 0, 3, intptr_t(mark));
}
}
