// RUN: tf-opt %s --tf-updates-in-place --split-input-file | FileCheck %s

// The optimizer's update reads each parameter and its state element by
// element as it writes their next values: it writes them over the
// arguments, and each result names the argument that holds it.
// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[P:[a-z0-9]+]]: memref<4xf32>, %[[M:[a-z0-9]+]]: memref<4xf32>, %[[G:[a-z0-9]+]]: memref<4xf32>, %[[NP:[a-z0-9]+]]: memref<4xf32>, %[[NM:[a-z0-9]+]]: memref<4xf32>)
// CHECK-SAME: results = [{in_place_of = 0 : i64, kind = "param", name = "w"}, {in_place_of = 1 : i64, kind = "state", name = "w.m"}]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]], %[[M]], %[[G]] : memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%[[P]], %[[M]] : memref<4xf32>, memref<4xf32>)
#id = affine_map<(i) -> (i)>
func.func @update(%p: memref<4xf32>, %m: memref<4xf32>, %g: memref<4xf32>, %np: memref<4xf32>, %nm: memref<4xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "state", name = "w.m"}, {kind = "input", name = "g"}], results = [{kind = "param", name = "w"}, {kind = "state", name = "w.m"}]}} {
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %m, %g : memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%np, %nm : memref<4xf32>, memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32, %n: f32):
    %mm = arith.addf %b, %c : f32
    %s = arith.subf %a, %mm : f32
    linalg.yield %s, %mm : f32, f32
  }
  return
}

// -----

// An update right after its gradient, before a reduction that still reads
// the parameter (a weight's update before the product that propagates the
// gradient through it): it moves after that reader, then writes in place.
// The loss is no parameter: it keeps its out-param.
// CHECK-LABEL: func.func @sunk
// CHECK-SAME: (%[[P:[a-z0-9]+]]: memref<4xf32>, %[[G:[a-z0-9]+]]: memref<4xf32>, %[[LOSS:[a-z0-9]+]]: memref<f32>, %[[NP:[a-z0-9]+]]: memref<4xf32>)
// CHECK-SAME: results = [{kind = "loss", name = "loss"}, {in_place_of = 0 : i64, kind = "param", name = "w"}]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]] : memref<4xf32>) outs(%[[LOSS]] : memref<f32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]], %[[G]] : memref<4xf32>, memref<4xf32>) outs(%[[P]] : memref<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @sunk(%p: memref<4xf32>, %g: memref<4xf32>, %loss: memref<f32>, %np: memref<4xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "input", name = "g"}], results = [{kind = "loss", name = "loss"}, {kind = "param", name = "w"}]}} {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%np : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%p : memref<4xf32>) outs(%loss : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The update cannot move past the parameter's last reader: something in
// between reads the new value. It keeps its out-param.
// CHECK-LABEL: func.func @blocked
// CHECK-SAME: %[[NP:[a-z0-9]+]]: memref<4xf32>) attributes
// CHECK-NOT: in_place_of
// CHECK: outs(%[[NP]] : memref<4xf32>)
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @blocked(%p: memref<4xf32>, %g: memref<4xf32>, %loss: memref<f32>, %np: memref<4xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "input", name = "g"}], results = [{kind = "loss", name = "loss"}, {kind = "param", name = "w"}]}} {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%np : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  %t = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%np, %p : memref<4xf32>, memref<4xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%t : memref<4xf32>) outs(%loss : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A view of the new value made before the update is no write: the update
// itself is what moves after the parameter's last reader, and the norm
// reads the new value through the view.
// CHECK-LABEL: func.func @view_first
// CHECK-SAME: (%[[P:[a-z0-9]+]]: memref<4xf32>, %[[G:[a-z0-9]+]]: memref<4xf32>, %[[Y:[a-z0-9]+]]: memref<4xf32>, %[[NORM:[a-z0-9]+]]: memref<f32>, %[[NP:[a-z0-9]+]]: memref<4xf32>)
// CHECK-SAME: in_place_of = 0
// CHECK: %[[V:.+]] = memref.subview %[[P]]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[G]], %[[P]] : memref<4xf32>, memref<4xf32>) outs(%[[Y]] : memref<4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]], %[[G]] : memref<4xf32>, memref<4xf32>) outs(%[[P]] : memref<4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[V]] : memref<2xf32, strided<[1]>>) outs(%[[NORM]] : memref<f32>)
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @view_first(%p: memref<4xf32>, %g: memref<4xf32>, %y: memref<4xf32>, %norm: memref<f32>, %np: memref<4xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "input", name = "g"}], results = [{kind = "output", name = "y"}, {kind = "metric", name = "norm"}, {kind = "param", name = "w"}]}} {
  %v = memref.subview %np[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%np : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%g, %p : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%v : memref<2xf32, strided<[1]>>) outs(%norm : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The update loads the parameter in its body through a view made outside
// it, at an index of its own: not in place.
// CHECK-LABEL: func.func @body_load
// CHECK-NOT: in_place_of
// CHECK: outs(%arg2 : memref<4xf32>)
#id = affine_map<(i) -> (i)>
func.func @body_load(%p: memref<4xf32>, %g: memref<4xf32>, %np: memref<4xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "input", name = "g"}], results = [{kind = "param", name = "w"}]}} {
  %c3 = arith.constant 3 : index
  %cast = memref.cast %p : memref<4xf32> to memref<?xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%np : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %last = memref.load %cast[%c3] : memref<?xf32>
    %s = arith.subf %a, %last : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Element (i, j) of the new value reads element (j, i) of the old: written
// in place, iteration (j, i) would read what iteration (i, j) wrote.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: in_place_of
// CHECK: outs(%arg2 : memref<2x2xf32>)
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @transposed(%p: memref<2x2xf32>, %g: memref<2x2xf32>, %np: memref<2x2xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "input", name = "g"}], results = [{kind = "param", name = "w"}]}} {
  linalg.generic {indexing_maps = [#tr, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %g : memref<2x2xf32>, memref<2x2xf32>) outs(%np : memref<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The update reads the parameter through a view: not in place (only the
// buffer itself at one map is known to be read element by element).
// CHECK-LABEL: func.func @view
// CHECK-NOT: in_place_of
// CHECK: %[[OUT:.+]] = memref.collapse_shape %arg2
// CHECK: outs(%[[OUT]] : memref<4xf32>)
#id = affine_map<(i) -> (i)>
func.func @view(%p: memref<2x2xf32>, %g: memref<4xf32>, %np: memref<2x2xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "input", name = "g"}], results = [{kind = "param", name = "w"}]}} {
  %flat = memref.collapse_shape %p [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  %out = memref.collapse_shape %np [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%flat, %g : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A kernel call after the update takes a pointer this cannot trace to its
// buffer: it might read the parameter, so the update stays where it is,
// into its out-param.
// CHECK-LABEL: func.func @unknown_pointer
// CHECK-NOT: in_place_of
// CHECK: outs(%arg2 : memref<4xf32>)
// CHECK: call @kernel
#id = affine_map<(i) -> (i)>
func.func private @kernel(index)
func.func @unknown_pointer(%p: memref<4xf32>, %g: memref<4xf32>, %np: memref<4xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "input", name = "g"}], results = [{kind = "param", name = "w"}]}} {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%np : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  %c3 = arith.constant 3 : index
  %base = memref.extract_aligned_pointer_as_index %p : memref<4xf32> -> index
  %scrambled = arith.muli %base, %c3 : index
  call @kernel(%scrambled) : (index) -> ()
  return
}

// -----

// Outside entries, and for results with no argument of their kind and
// name, nothing changes.
// CHECK-LABEL: func.func @no_argument
// CHECK-NOT: in_place_of
// CHECK: outs(%arg2 : memref<4xf32>)
// CHECK-LABEL: func.func @not_an_entry
// CHECK: outs(%arg2 : memref<4xf32>)
#id = affine_map<(i) -> (i)>
func.func @no_argument(%p: memref<4xf32>, %g: memref<4xf32>, %np: memref<4xf32>) attributes {tfc.entry = "train_step", tfc.abi = {args = [{kind = "param", name = "w"}, {kind = "input", name = "g"}], results = [{kind = "param", name = "v"}]}} {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%np : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}
func.func @not_an_entry(%p: memref<4xf32>, %g: memref<4xf32>, %np: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%np : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}
