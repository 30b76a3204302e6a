# RUN: not tfc compile %s 2>&1 | FileCheck %s
def f(x) {
  let y = relu(x)
# CHECK: err-def-return.tf:[[@LINE+1]]:1: error: def 'f' ends without a 'return'
}
