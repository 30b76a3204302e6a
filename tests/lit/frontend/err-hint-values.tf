# Values a model's build rejects, each with the name or string meant: a
# case-insensitive match first, then the closest by edits, then the longest
# known prefix (`prenorm` is `pre`); Python's True/False/None.
# RUN: not tfc compile %s --model function 2>&1 | FileCheck %s --check-prefix=FUNCTION
# RUN: not tfc compile %s --model keyword 2>&1 | FileCheck %s --check-prefix=KEYWORD
# RUN: not tfc compile %s --model norm 2>&1 | FileCheck %s --check-prefix=NORM
# RUN: not tfc compile %s --model activation 2>&1 | FileCheck %s --check-prefix=ACTIVATION
# RUN: not tfc compile %s --model dtype 2>&1 | FileCheck %s --check-prefix=DTYPE
# RUN: not tfc compile %s --model init 2>&1 | FileCheck %s --check-prefix=INIT
# RUN: not tfc compile %s --model python_bool 2>&1 | FileCheck %s --check-prefix=BOOL
# RUN: not tfc compile %s --model python_none 2>&1 | FileCheck %s --check-prefix=NONE
model function {
  input x: f32[2, 4]
  # FUNCTION: err-hint-values.tf:[[@LINE+1]]:14: error: unknown function 'Softmax'; did you mean 'softmax'?
  output y = Softmax(x)
}
model keyword {
  input x: f32[2, 4]
  # KEYWORD: err-hint-values.tf:[[@LINE+1]]:27: error: 'linear' has no argument 'Bias'; did you mean 'bias'?
  output y = linear(x, 8, Bias: false)
}
model norm {
  input x: f32[2, 4, 8]
  # NORM: err-hint-values.tf:[[@LINE+1]]:31: error: argument 'norm' of 'encoder' must be "post" or "pre", got "prenorm"; did you mean "pre"?
  output y = encoder(x, norm: "prenorm")
}
model activation {
  input x: f32[2, 4, 8]
  # ACTIVATION: err-hint-values.tf:[[@LINE+1]]:37: error: argument 'activation' of 'encoder' must be "relu", "gelu" or "swiglu", got "GELU"; did you mean "gelu"?
  output y = encoder(x, activation: "GELU")
}
model dtype {
  input x: f32[2, 4]
  # DTYPE: err-hint-values.tf:[[@LINE+1]]:32: error: argument 'dtype' of 'zeros' must be "f32", "i32" or "bool", got "float32"; did you mean "f32"?
  output y = zeros([2], dtype: "float32")
}
model init {
  input x: f32[2, 4]
  # INIT: err-hint-values.tf:[[@LINE+1]]:33: error: unknown initialiser 'Xavier'; did you mean 'xavier'?
  output y = linear(x, 8, init: Xavier)
}
model python_bool {
  input x: f32[2, 4]
  # BOOL: err-hint-values.tf:[[@LINE+1]]:33: error: unknown name 'False'; booleans are written 'true' and 'false'
  output y = linear(x, 8, bias: False)
}
model python_none {
  input x: f32[2, 4, 8]
  # NONE: err-hint-values.tf:[[@LINE+1]]:31: error: unknown name 'None'; there is no None: leave an optional argument out
  output y = encoder(x, mask: None)
}
