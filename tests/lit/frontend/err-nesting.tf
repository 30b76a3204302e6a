# RUN: %python -c "print('model m {\n  let x = ' + '(' * 200000 + '1' + ')' * 200000 + '\n}')" > %t.tf
# RUN: not tfc compile %t.tf 2>&1 | FileCheck %s
# CHECK: err-nesting.tf.tmp.tf:2:267: error: expressions and def calls nest deeper than 256 levels
