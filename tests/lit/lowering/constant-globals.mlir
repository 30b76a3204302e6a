// tf-constant-globals: each tensor constant's memref.global made before
// One-Shot Bufferize, walking the module in program order (each new global
// goes to the module's front, so the last made is first), one a value; the
// constants stay, and the bufferization then uses those globals. Without
// the pass, MLIR 19 bufferizes the functions in an order of its own (a
// pointer-keyed map): the globals' order and names changed from run to run
// (models/same-ir-every-run.tf).
// RUN: tf-opt %s --tf-constant-globals | FileCheck %s

// CHECK: memref.global "private" constant @__constant_2xf32_0 : memref<2xf32> = dense<[3.000000e+00, 4.000000e+00]> {alignment = 64 : i64}
// CHECK-NEXT: memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]> {alignment = 64 : i64}
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @first
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]>
// CHECK-LABEL: func.func @second
// CHECK: arith.constant dense<[3.000000e+00, 4.000000e+00]>
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]>
func.func @first() -> tensor<2xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}

func.func @second() -> (tensor<2xf32>, tensor<2xf32>) {
  %c = arith.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %d = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c, %d : tensor<2xf32>, tensor<2xf32>
}
