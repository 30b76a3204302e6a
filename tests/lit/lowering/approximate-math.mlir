// RUN: tf-opt %s --split-input-file --tf-approximate-math | FileCheck %s

// exp becomes arithmetic (a range reduction, a polynomial and a scaling by a
// power of two built from the exponent bits): no call is left for LLVM to
// make per element.
// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: arith.bitcast
// CHECK-NOT: math.exp
// CHECK: return
func.func @exp(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}

// -----

// log, tanh and erf too (cross_entropy, tanh, gelu).
// CHECK-LABEL: func.func @log_tanh_erf
// CHECK-NOT: math.log
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: return
func.func @log_tanh_erf(%x: f32) -> (f32, f32, f32) {
  %l = math.log %x : f32
  %t = math.tanh %x : f32
  %e = math.erf %x : f32
  return %l, %t, %e : f32, f32, f32
}

// -----

// sqrt stays: LLVM has a vector instruction for it.
// CHECK-LABEL: func.func @sqrt
// CHECK: math.sqrt
func.func @sqrt(%x: f32) -> f32 {
  %s = math.sqrt %x : f32
  return %s : f32
}
