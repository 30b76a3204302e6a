# RUN: not tfc compile %s 2>&1 | FileCheck %s
# CHECK: err-missing-model.tf:[[@LINE+4]]:1: error: expected a 'model' block before the end of the file: the file has none
def f(x) {
  return x
}
