# RUN: not tfc compile %s 2>&1 | FileCheck %s
# The parser and the train step read one list of schedules and their settings
# (runtime/TrainBlock.h): a setting the step does not implement is refused
# where it is written (cosine's max_iters had been accepted here, then
# refused by tf-autodiff; the run's length is the binary's total steps).
model m {
  input x: f32[batch, 2]
  output x
}
train m {
  # CHECK: err-train-schedule.tf:[[@LINE+1]]:19: error: 'cosine' has no setting 'max_iters' (it takes none)
  schedule cosine(max_iters: 100)
}
