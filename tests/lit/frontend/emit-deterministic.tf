# The same model compiles to the same text at every stage, LLVM IR included:
# reverse's train step has a switch reaching one block from many cases with
# arguments, which the translation to LLVM IR splits; those blocks were made
# in the order of a map keyed by addresses, and the printed IR's block
# numbers changed from run to run (compiler/lowering/cpu/Pipeline.cpp,
# makeSuccessorsDistinct).
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %models/reverse.tf --emit=llvm -o %t/1.ll
# RUN: tfc compile %models/reverse.tf --emit=llvm -o %t/2.ll
# RUN: tfc compile %models/reverse.tf --emit=llvm -o %t/3.ll
# RUN: cmp %t/1.ll %t/2.ll
# RUN: cmp %t/1.ll %t/3.ll
# RUN: FileCheck %s < %t/1.ll
# CHECK: switch i32
