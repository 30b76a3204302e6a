# Lexical and layout details: comments anywhere, calls and lists spanning
# lines, a line continued after an operator, keywords as argument names,
# trailing commas, string escapes, floats in all forms.
# RUN: tfc compile %s --emit=mlir | FileCheck %s

# CHECK: tf.train = {batch = 1 : i64, data = {args = {def = 2 : i64, let = 3 : i64, model = 1 : i64, train = 10 : i64}, name = "reverse_sequences"}, model = "syntax"}
# CHECK: func.func @syntax(%{{.*}}: tensor<2x3xf32> {tf.input = "x"}, {{.*}} {{{.*}}tf.param = "proj.weight"}
# CHECK-SAME: -> (tensor<2x5xf32> {tf.output = "y"}, tensor<3x2xf32> {tf.output = "z"})
# CHECK: tf.constant dense<2.500000e-01> : tensor<f32>
# CHECK: tf.constant dense<1.500000e+03> : tensor<f32>
# CHECK: tf.constant dense<5.000000e-01> : tensor<f32>

def identity(x,) {    # a trailing comma in the parameters
  return x
}

model syntax { # a comment after a brace
  param s = "a \"quoted\" \\ string\n"   # escapes
  input x: f32[2, 3]
  let h = linear(
    x,        # the input
    5,
    name: "proj",
  )
  output y = identity(h)
  let w = x * .25 + x * 1.5e3 +
          x * 5E-1
  output z = transpose(w, [
    1,
    0,
  ])
}

train syntax {
  data reverse_sequences(train: 10, model: 1, def: 2, let: 3)
}
