# `**kwargs` and `*args` do not exist.
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 4]
  # CHECK: err-hint-kwargs.tf:[[@LINE+1]]:21: error: expected an expression, got '**'; there is no *args or **kwargs: pass each argument, by position or as 'name: value'
  let y = linear(x, **options)
  output y
}
