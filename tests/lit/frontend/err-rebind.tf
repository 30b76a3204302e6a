# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2]
  let hidden = relu(x)
  # CHECK: err-rebind.tf:[[@LINE+1]]:3: error: cannot rebind 'hiden': it is not bound; did you mean 'hidden'? (bind it first with 'let hiden = ...')
  hiden = tanh(hidden)
}
