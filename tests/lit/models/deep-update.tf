# A deep model's optimizer update is a few merged loops, not one: a loop of
# tf-horizontal-loops takes at most 128 parameters (kMaxMembers), since its
# switch has a case for each and LLVM's time on one function grows faster
# than its size (64 layers: 9 s of instruction selection for one update of
# 780 cases). reverse with 12 encoder layers has 152 parameters: loops of
# 128 and 24.
# RUN: sed 's/layers: 1,/layers: 12,/' %models/reverse.tf > %t.tf
# RUN: tfc compile %t.tf --emit=buffers | FileCheck %s
# CHECK-LABEL: func.func @tfc_entry_train_step(
# CHECK: scf.parallel
# CHECK: case 127 {
# CHECK-NOT: case 128 {
# CHECK: scf.parallel
# CHECK: case 23 {
# CHECK-NOT: case 24 {
# CHECK-NOT: scf.parallel
# CHECK-LABEL: func.func @tfc_entry_grad_step(
