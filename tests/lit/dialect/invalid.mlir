// RUN: tf-opt %s --split-input-file --verify-diagnostics

// Every shape rule and verifier of the tf dialect rejects its ill-formed
// uses with a message naming the offending shapes.

func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{operands differ: lhs is 'tensor<2xf32>' but rhs is 'tensor<3xf32>'}}
  // expected-error @+1 {{'tf.add' op failed to infer returned types}}
  %0 = "tf.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+1 {{operands differ: lhs is 'tensor<2x3xf32>' but rhs is 'tensor<3x2xf32>'}}
  %0 = tf.mul %a, %b : tensor<2x3xf32>, tensor<3x2xf32>
  return
}

// -----

func.func @f(%a: tensor<2xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float values}}
  %0 = "tf.exp"(%a) : (tensor<2xi32>) -> tensor<2xi32>
  return
}

// -----

func.func @f(%a: tensor<2xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'tf.relu' op failed to infer returned types}}
  %0 = "tf.relu"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @f(%a: tensor<2xi1>) {
  // expected-error @+1 {{predicate 'lt' is not defined on i1 operands}}
  %0 = tf.compare lt, %a, %a : tensor<2xi1>
  return
}

// -----

func.func @f(%c: tensor<3xi1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{condition shape [3] differs from the value shape [2]}}
  %0 = tf.select %c, %a, %a : tensor<3xi1>, tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{changes the shape from [2] to [3]}}
  %0 = tf.cast %a : tensor<2xf32> to tensor<3xi32>
  return
}

// -----

func.func @f(%a: tensor<3xf32>) {
  // expected-error @+1 {{has 2 dims for an operand of rank 1}}
  %0 = tf.broadcast_in_dim %a [0, 1] : tensor<3xf32> to tensor<2x3xf32>
  return
}

// -----

func.func @f(%a: tensor<1x3xf32>) {
  // expected-error @+1 {{dims must be strictly increasing}}
  %0 = tf.broadcast_in_dim %a [1, 0] : tensor<1x3xf32> to tensor<3x3xf32>
  return
}

// -----

func.func @f(%a: tensor<3xf32>) {
  // expected-error @+1 {{dims[0] = 2 is out of range for the result 'tensor<2x3xf32>'}}
  %0 = tf.broadcast_in_dim %a [2] : tensor<3xf32> to tensor<2x3xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{cannot broadcast operand shape [4] to [2, 3]: operand dim 0 (4) maps to result dim 1 (3)}}
  %0 = tf.broadcast_in_dim %a [1] : tensor<4xf32> to tensor<2x3xf32>
  return
}

// -----

func.func @f(%a: tensor<3xf32>) {
  // expected-error @+1 {{changes the element type from 'f32' to 'i32'}}
  %0 = tf.broadcast_in_dim %a [1] : tensor<3xf32> to tensor<2x3xi32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape [2, 3] (6 elements) to [4] (4 elements)}}
  %0 = tf.reshape %a : tensor<2x3xf32> to tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{changes the element type from 'f32' to 'i32'}}
  %0 = tf.reshape %a : tensor<2x3xf32> to tensor<6xi32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{permutation [0] has 1 entries for 'tensor<2x3xf32>' of rank 2}}
  // expected-error @+1 {{'tf.transpose' op failed to infer returned types}}
  %0 = tf.transpose %a [0] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{[0, 0] is not a permutation of the dimensions of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'tf.transpose' op failed to infer returned types}}
  %0 = tf.transpose %a [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{start, limit and stride need 2 entries each}}
  // expected-error @+1 {{'tf.slice' op failed to infer returned types}}
  %0 = tf.slice %a start [0] limit [1] stride [1] : tensor<2x3xf32> -> tensor<1xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{stride 0 in dim 1 must be positive}}
  // expected-error @+1 {{'tf.slice' op failed to infer returned types}}
  %0 = tf.slice %a start [0, 0] limit [1, 1] stride [1, 0] : tensor<2x3xf32> -> tensor<1x1xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{range [1, 4) in dim 1 is empty or outside [2, 3]}}
  // expected-error @+1 {{'tf.slice' op failed to infer returned types}}
  %0 = tf.slice %a start [0, 1] limit [1, 4] stride [1, 1] : tensor<2x3xf32> -> tensor<1x3xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+2 {{needs at least one input}}
  // expected-error @+1 {{'tf.concat' op failed to infer returned types}}
  %0 = "tf.concat"() {axis = 0 : i64} : () -> tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x2xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+2 {{input #1 'tensor<3x3xf32>' does not match input #0 'tensor<2x2xf32>' outside the concatenation axis 0}}
  // expected-error @+1 {{'tf.concat' op failed to infer returned types}}
  %0 = tf.concat %a, %b axis 0 : tensor<2x2xf32>, tensor<3x3xf32> -> tensor<5x2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x2xf32>) {
  // expected-error @+2 {{axis 2 is out of range for 'tensor<2x2xf32>' (rank 2}}
  // expected-error @+1 {{'tf.concat' op failed to infer returned types}}
  %0 = tf.concat %a, %a axis 2 : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x2xf32>) {
  // expected-error @+2 {{needs at least one axis}}
  // expected-error @+1 {{'tf.reduce_sum' op failed to infer returned types}}
  %0 = tf.reduce_sum %a [] : tensor<2x2xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x2xf32>) {
  // expected-error @+2 {{axes must be sorted and unique, got [1, 0]}}
  // expected-error @+1 {{'tf.reduce_max' op failed to infer returned types}}
  %0 = tf.reduce_max %a [1, 0] : tensor<2x2xf32> -> tensor<f32>
  return
}

// -----

func.func @f(%a: tensor<2x2xf32>) {
  // expected-error @+2 {{axis 2 is out of range for 'tensor<2x2xf32>'}}
  // expected-error @+1 {{'tf.reduce_mean' op failed to infer returned types}}
  %0 = tf.reduce_mean %a [2] : tensor<2x2xf32> -> tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x2xf32>) {
  // expected-error @+2 {{axis -1 is out of range for 'tensor<2x2xf32>' (rank 2; the IR takes non-negative axes)}}
  // expected-error @+1 {{'tf.argmax' op failed to infer returned types}}
  %0 = tf.argmax %a axis -1 : tensor<2x2xf32> -> tensor<2xi32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %b: tensor<1x3x2xf32>) {
  // expected-error @+2 {{needs operands of equal rank >= 2, got 'tensor<2x3xf32>' and 'tensor<1x3x2xf32>'}}
  // expected-error @+1 {{'tf.matmul' op failed to infer returned types}}
  %0 = tf.matmul %a, %b : tensor<2x3xf32>, tensor<1x3x2xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x2x3xf32>, %b: tensor<3x3x2xf32>) {
  // expected-error @+2 {{batch dimensions differ: 'tensor<2x2x3xf32>' and 'tensor<3x3x2xf32>'}}
  // expected-error @+1 {{'tf.matmul' op failed to infer returned types}}
  %0 = tf.matmul %a, %b : tensor<2x2x3xf32>, tensor<3x3x2xf32> -> tensor<2x2x2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+2 {{contraction dimensions differ: lhs 'tensor<2x3xf32>' has K = 3, rhs 'tensor<4x3xf32>' has K = 4}}
  // expected-error @+1 {{'tf.matmul' op failed to infer returned types}}
  %0 = tf.matmul %a, %b : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+2 {{contraction dimensions differ: lhs 'tensor<2x3xf32>' (transposed) has K = 2, rhs 'tensor<4x3xf32>' (transposed) has K = 3}}
  // expected-error @+1 {{'tf.matmul' op failed to infer returned types}}
  %0 = tf.matmul %a, %b transpose_lhs transpose_rhs : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 3 is out of range for 'tensor<2x3xf32>'}}
  %0 = tf.softmax %a axis 3 : tensor<2x3xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range}}
  %0 = tf.log_softmax %a axis 2 : tensor<2x3xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %g: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{gamma 'tensor<4xf32>' must be [3] to normalise the last dimension of 'tensor<2x3xf32>'}}
  %0 = tf.layer_norm %a, %g, %b : tensor<2x3xf32>, tensor<4xf32>, tensor<3xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{beta 'tensor<2xf32>' must be [3]}}
  %0 = tf.layer_norm %a, %g, %b : tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{epsilon must be positive}}
  %0 = tf.layer_norm %a, %g, %g {epsilon = 0.0 : f32} : tensor<2x3xf32>, tensor<3xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'tf.layer_norm_grad' gamma 'tensor<4xf32>' must be [3] to normalise the last dimension of 'tensor<2x3xf32>'}}
  %0:3 = tf.layer_norm_grad %a, %g grad %a : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{epsilon must be positive}}
  %0:3 = tf.layer_norm_grad %a, %g grad %a {epsilon = -1.0 : f32} : tensor<2x3xf32>, tensor<3xf32>
  return
}

// -----

func.func @f(%a: tensor<f32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{needs an operand of rank >= 1}}
  %0 = tf.layer_norm %a, %g, %g : tensor<f32>, tensor<3xf32>
  return
}

// -----

func.func @f(%a: tensor<2xf32>, %s: tensor<i32>) {
  // expected-error @+1 {{must be in [0, 1)}}
  %0 = tf.dropout %a, %s rate 1.0 key 0 training : tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2xf32>, %s: tensor<i32>) {
  // expected-error @+2 {{needs both a sample_offset and a sample_size, or neither}}
  // expected-error @+1 {{'tf.dropout' op failed to infer returned types}}
  %0 = "tf.dropout"(%a, %s, %s) {rate = 0.1 : f32, key = 0 : i64, training} : (tensor<2xf32>, tensor<i32>, tensor<i32>) -> tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2xf32>, %s: tensor<i32>) {
  // expected-error @+1 {{sample_size 0 must be positive}}
  %0 = tf.dropout %a, %s sample_offset %s sample_size 0 rate 0.1 key 0 training : tensor<2xf32>
  return
}

// -----

// expected-error @+1 {{tf.sample_offset marks a tensor<i32> argument}}
func.func @f(%s: tensor<2xi32> {tf.sample_offset}) {
  return
}

// -----

func.func @f(%q: tensor<2x3xf32>, %k: tensor<1x2x3xf32>) {
  // expected-error @+2 {{needs q, k, v of equal rank >= 2}}
  // expected-error @+1 {{'tf.attention' op failed to infer returned types}}
  %0 = tf.attention %q, %k, %k scale 1.0 : tensor<2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @f(%q: tensor<1x2x3xf32>, %k: tensor<2x2x3xf32>) {
  // expected-error @+2 {{batch dimensions differ}}
  // expected-error @+1 {{'tf.attention' op failed to infer returned types}}
  %0 = tf.attention %q, %k, %k scale 1.0 : tensor<1x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32> -> tensor<1x2x3xf32>
  return
}

// -----

func.func @f(%q: tensor<2x3xf32>, %k: tensor<2x4xf32>) {
  // expected-error @+2 {{q 'tensor<2x3xf32>' and k 'tensor<2x4xf32>' differ in their feature dimension}}
  // expected-error @+1 {{'tf.attention' op failed to infer returned types}}
  %0 = tf.attention %q, %k, %k scale 1.0 : tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%q: tensor<2x3xf32>, %v: tensor<5x3xf32>) {
  // expected-error @+2 {{k 'tensor<2x3xf32>' and v 'tensor<5x3xf32>' differ in sequence length}}
  // expected-error @+1 {{'tf.attention' op failed to infer returned types}}
  %0 = tf.attention %q, %q, %v scale 1.0 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<5x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @f(%q: tensor<2x3xf32>, %m: tensor<3x3xi1>) {
  // expected-error @+2 {{mask 'tensor<3x3xi1>' must have the shape of the weights [2, 2]}}
  // expected-error @+1 {{'tf.attention' op failed to infer returned types}}
  %0 = tf.attention %q, %q, %q mask %m scale 1.0 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x3xi1> -> tensor<2x3xf32>
  return
}

// -----

func.func @f(%q: tensor<2x3xf32>) {
  // expected-error @+2 {{'tf.attention' op inferred type(s) 'tensor<2x3xf32>', 'tensor<2x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'tf.attention' op failed to infer returned types}}
  %0 = "tf.attention"(%q, %q, %q) {scale = 1.0 : f32, with_weights} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @f(%x: tensor<1x100xf32>, %w: tensor<4x1x3xf32>) {
  // expected-error @+2 {{needs input [N, Cin, W] and weight [Cout, Cin, K]}}
  // expected-error @+1 {{'tf.conv1d' op failed to infer returned types}}
  %0 = tf.conv1d %x, %w padding 0 : tensor<1x100xf32>, tensor<4x1x3xf32> -> tensor<1x4x98xf32>
  return
}

// -----

func.func @f(%x: tensor<1x2x100xf32>, %w: tensor<4x1x3xf32>) {
  // expected-error @+2 {{input 'tensor<1x2x100xf32>' has 2 channels but weight 'tensor<4x1x3xf32>' expects 1}}
  // expected-error @+1 {{'tf.conv1d' op failed to infer returned types}}
  %0 = tf.conv1d %x, %w padding 0 : tensor<1x2x100xf32>, tensor<4x1x3xf32> -> tensor<1x4x98xf32>
  return
}

// -----

func.func @f(%x: tensor<1x1x100xf32>, %w: tensor<4x1x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{bias 'tensor<3xf32>' must be [4]}}
  // expected-error @+1 {{'tf.conv1d' op failed to infer returned types}}
  %0 = tf.conv1d %x, %w, %b padding 0 : tensor<1x1x100xf32>, tensor<4x1x3xf32>, tensor<3xf32> -> tensor<1x4x98xf32>
  return
}

// -----

func.func @f(%x: tensor<1x1x100xf32>, %w: tensor<4x1x3xf32>) {
  // expected-error @+2 {{padding -1 must not be negative}}
  // expected-error @+1 {{'tf.conv1d' op failed to infer returned types}}
  %0 = tf.conv1d %x, %w padding -1 : tensor<1x1x100xf32>, tensor<4x1x3xf32> -> tensor<1x4x96xf32>
  return
}

// -----

func.func @f(%x: tensor<1x1x3xf32>, %w: tensor<4x1x5xf32>) {
  // expected-error @+2 {{kernel 5 is wider than the input 'tensor<1x1x3xf32>' padded by 0}}
  // expected-error @+1 {{'tf.conv1d' op failed to infer returned types}}
  %0 = tf.conv1d %x, %w padding 0 : tensor<1x1x3xf32>, tensor<4x1x5xf32> -> tensor<1x4x1xf32>
  return
}

// -----

func.func @f(%i: tensor<2xi32>) {
  // expected-error @+2 {{depth 0 must be positive}}
  // expected-error @+1 {{'tf.one_hot' op failed to infer returned types}}
  %0 = tf.one_hot %i depth 0 : tensor<2xi32> -> tensor<2x1xf32>
  return
}

// -----

func.func @f(%t: tensor<10xf32>, %i: tensor<2xi32>) {
  // expected-error @+2 {{table must be [rows, dim], got 'tensor<10xf32>'}}
  // expected-error @+1 {{'tf.gather' op failed to infer returned types}}
  %0 = tf.gather %t, %i : tensor<10xf32>, tensor<2xi32> -> tensor<2xf32>
  return
}

// -----

// A `columns` table is [dim, rows]: its lookups have its first dim.
func.func @f(%t: tensor<8x5xf32>, %i: tensor<2xi32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x8xf32>' are incompatible with return type(s) of operation 'tensor<2x5xf32>'}}
  // expected-error @+1 {{'tf.gather' op failed to infer returned types}}
  %0 = tf.gather %t, %i columns : tensor<8x5xf32>, tensor<2xi32> -> tensor<2x5xf32>
  return
}

// -----

func.func @f(%l: tensor<4x16x10xf32>, %y: tensor<4x10xi32>) {
  // expected-error @+1 {{labels 'tensor<4x10xi32>' must have the logits' shape [4, 16, 10] without the class axis 2: [4, 16]}}
  %0 = tf.cross_entropy %l, %y axis 2 : tensor<4x16x10xf32>, tensor<4x10xi32>
  return
}

// -----

func.func @f(%l: tensor<4x16x10xf32>, %y: tensor<4x16xi32>) {
  // expected-error @+1 {{class axis 3 is out of range}}
  %0 = tf.cross_entropy %l, %y axis 3 : tensor<4x16x10xf32>, tensor<4x16xi32>
  return
}

// -----

func.func @f(%l: tensor<4x16x10xf32>, %y: tensor<4x10xi32>, %g: tensor<f32>) {
  // expected-error @+1 {{labels 'tensor<4x10xi32>' must have the logits' shape [4, 16, 10] without the class axis 2: [4, 16]}}
  %0 = tf.cross_entropy_grad %l, %y grad %g axis 2 : tensor<4x16x10xf32>, tensor<4x10xi32>, tensor<f32>
  return
}

// -----

func.func @f(%l: tensor<4x16x10xf32>, %y: tensor<4x16xi32>, %g: tensor<f32>) {
  // expected-error @+1 {{class axis 3 is out of range}}
  %0 = tf.cross_entropy_grad %l, %y grad %g axis 3 : tensor<4x16x10xf32>, tensor<4x16xi32>, tensor<f32>
  return
}

// -----

func.func @f(%l: tensor<4x16x10xf32>, %y: tensor<4x16xi32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{grad 'tensor<1xf32>' must be a scalar: the adjoint of the loss}}
  %0 = tf.cross_entropy_grad %l, %y grad %g axis 2 : tensor<4x16x10xf32>, tensor<4x16xi32>, tensor<1xf32>
  return
}

// -----

func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{operands differ: lhs is 'tensor<2xf32>' but rhs is 'tensor<3xf32>'}}
  %0 = tf.mse %a, %b : tensor<2xf32>, tensor<3xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{element type must be f32, i32 or i1, got 'f64'}}
  %0 = tf.constant dense<1.0> : tensor<2xf64>
  return
}

// -----

func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{requires attribute 'predicate'}}
  %0 = "tf.compare"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return
}

// -----

func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{requires attribute 'axis'}}
  %0 = "tf.softmax"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @f(%a: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 must be 0D tensor of 32-bit signless integer values}}
  %0 = "tf.dropout"(%a, %a) {rate = 0.1 : f32, key = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

// expected-error @+1 {{unknown initialiser 'xavier'; expected zeros, ones, uniform or normal}}
func.func @f(%w: tensor<2xf32> {tf.param = "w", tf.init = #tf.init<xavier>}) {
  return
}

// -----

// expected-error @+1 {{initialiser scale must be positive, got -1}}
func.func @f(%w: tensor<2xf32> {tf.param = "w", tf.init = #tf.init<uniform, -1.0>}) {
  return
}

// -----

// expected-error @+1 {{unknown tf argument attribute 'tf.parameter'}}
func.func @f(%w: tensor<2xf32> {tf.parameter = "w"}) {
  return
}

// -----

// expected-error @+1 {{parameter 'w' must be a static f32 tensor, got 'tensor<2xi32>'}}
func.func @f(%w: tensor<2xi32> {tf.param = "w"}) {
  return
}

// -----

// expected-error @+1 {{tf.param must be a non-empty string}}
func.func @f(%w: tensor<2xf32> {tf.param = ""}) {
  return
}

// -----

// expected-error @+1 {{tf.init must be a #tf.init attribute}}
func.func @f(%w: tensor<2xf32> {tf.param = "w", tf.init = 1.0}) {
  return
}

// -----

// expected-error @+1 {{tf.input must be a non-empty string}}
func.func @f(%w: tensor<2xf32> {tf.input = 3}) {
  return
}

// -----

// expected-error @+1 {{tf.seed marks a tensor<i32> argument}}
func.func @f(%s: tensor<2xi32> {tf.seed}) {
  return
}

// -----

// expected-error @+1 {{the tf.loss must be a tensor<f32>}}
func.func @f(%a: tensor<2xf32>) -> (tensor<2xf32> {tf.loss}) {
  return %a : tensor<2xf32>
}

// -----

// expected-error @+1 {{tf.metric must be a non-empty string}}
func.func @f(%a: tensor<f32>) -> (tensor<f32> {tf.metric = ""}) {
  return %a : tensor<f32>
}

// -----

// expected-error @+1 {{unknown tf result attribute 'tf.outputs'}}
func.func @f(%a: tensor<f32>) -> (tensor<f32> {tf.outputs = "y"}) {
  return %a : tensor<f32>
}

// -----

func.func @f(%a: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = "tf.neg"(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @fusion_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tf.fusion' op kind must be "loop", "reduction", "gemm" or "horizontal", got "tile"}}
  %r = tf.fusion "tile" : tensor<4xf32> {
    %y = tf.relu %a : tensor<4xf32>
    tf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @gemm_fusion_without_matmul(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tf.fusion' op of kind "gemm" must hold exactly one tf.matmul or tf.conv1d}}
  %r = tf.fusion "gemm" : tensor<4x4xf32> {
    %y = tf.relu %a : tensor<4x4xf32>
    tf.yield %y : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @gemm_fusion_weight_gradient(%x: tensor<3x2x6xf32>, %dy: tensor<3x4x6xf32>) -> tensor<2x4x3xf32> {
  %xt = tf.transpose %x [1, 0, 2] : tensor<3x2x6xf32> -> tensor<2x3x6xf32>
  %dyt = tf.transpose %dy [1, 0, 2] : tensor<3x4x6xf32> -> tensor<4x3x6xf32>
  %r = tf.fusion "gemm" : tensor<2x4x3xf32> {
    // expected-error @+1 {{'tf.conv1d' op of a "gemm" fusion must be a matrix or a batch of them, row by row, got 'tensor<2x4x3xf32>'}}
    %p = tf.conv1d %xt, %dyt padding 1 : tensor<2x3x6xf32>, tensor<4x3x6xf32> -> tensor<2x4x3xf32>
    %y = tf.relu %p : tensor<2x4x3xf32>
    tf.yield %y : tensor<2x4x3xf32>
  }
  return %r : tensor<2x4x3xf32>
}

// -----

func.func @gemm_fusion_four_dims(%a: tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> {
  %r = tf.fusion "gemm" : tensor<2x2x4x4xf32> {
    // expected-error @+1 {{'tf.matmul' op of a "gemm" fusion must be a matrix or a batch of them, row by row, got 'tensor<2x2x4x4xf32>'}}
    %p = tf.matmul %a, %a : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>
    %y = tf.relu %p : tensor<2x2x4x4xf32>
    tf.yield %y : tensor<2x2x4x4xf32>
  }
  return %r : tensor<2x2x4x4xf32>
}

// -----

func.func @gemm_fusion_yields_product(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tf.fusion "gemm" : tensor<4x4xf32> {
    // expected-error @+1 {{'tf.matmul' op of a "gemm" fusion is read by its epilogue only; it cannot be a result}}
    %p = tf.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    tf.yield %p : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

func.func @fusion_yield_types(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tf.fusion' op yields 1 values of types 'tensor<4xf32>' but returns 'tensor<2x2xf32>'}}
  %r = tf.fusion "loop" : tensor<2x2xf32> {
    %y = tf.relu %a : tensor<4xf32>
    tf.yield %y : tensor<4xf32>
  }
  return %a : tensor<4xf32>
}

// -----

func.func @fusion_foreign_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = tf.fusion "loop" : tensor<4xf32> {
    // expected-error @+1 {{'arith.addf' op cannot be inside a tf.fusion (only tf ops, not nested fusions)}}
    %y = arith.addf %a, %a : tensor<4xf32>
    tf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @attention_grad_of_wrong_shape(%q: tensor<4x8xf32>, %v: tensor<5x3xf32>, %k: tensor<5x8xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+2 {{'tf.attention_grad' grad 'tensor<4x8xf32>' must have the shape of the values 'tensor<4x3xf32>'}}
  // expected-error @+1 {{'tf.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tf.attention_grad %q, %k, %v grad %g scale 1.0 : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x3xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x3xf32>
  return
}

// -----

func.func @attention_grad_mask_shape(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %m: tensor<5x4xi1>, %g: tensor<4x8xf32>) {
  // expected-error @+2 {{'tf.attention_grad' mask 'tensor<5x4xi1>' must have the shape of the weights [4, 5] (broadcast it explicitly)}}
  // expected-error @+1 {{'tf.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tf.attention_grad %q, %k, %k mask %m grad %g scale 1.0 : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<4x8xf32>, tensor<5x4xi1> -> tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>
  return
}
