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
#
# --emit=llvm shows what the executable is compiled from: the parts
# compileInParts optimised on each thread, joined in the translated
# module's order, so the same text whatever the number of threads (-j),
# --dump-ir's llvm-o3.ll the same again, and an executable built with
# --dump-ir the one built without.
# RUN: tfc compile %models/reverse.tf --emit=llvm -j 1 -o %t/j1.ll
# RUN: tfc compile %models/reverse.tf --emit=llvm -j 3 -o %t/j3.ll
# RUN: cmp %t/1.ll %t/j1.ll
# RUN: cmp %t/1.ll %t/j3.ll
# RUN: tfc compile %models/reverse.tf -o %t/dumped --dump-ir=%t/dump
# RUN: cmp %t/1.ll %t/dump/llvm-o3.ll
# RUN: tfc compile %models/reverse.tf -o %t/plain
# RUN: cmp %t/dumped %t/plain
