# Every entry of every seed model, compiled for this CPU, against the
# reference interpreter in float64 (`tfc interpret`) on the same parameters
# and feeds: train_step and its data-parallel halves grad_step and
# apply_step, predict, evaluate, and a generating model's prefill and decode,
# each result within 1e-5 of float64 (relative to its largest magnitude;
# grad_step's gradients to the step's largest). Small batches: the
# interpreter is naive.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/Inputs/oracle_entries.py tfc %t/reverse %models/reverse.tf 2 | FileCheck %s --check-prefix=REVERSE
# RUN: %python %S/Inputs/oracle_entries.py tfc %t/set_anomaly %models/set_anomaly.tf 2 | FileCheck %s --check-prefix=SET
# RUN: %python %S/Inputs/oracle_entries.py tfc %t/fleuret_cnn %models/fleuret_cnn.tf 2 | FileCheck %s --check-prefix=CNN
# RUN: %python %S/Inputs/oracle_entries.py tfc %t/fleuret_attention %models/fleuret_attention.tf 2 | FileCheck %s --check-prefix=ATTN
# RUN: %python %S/Inputs/oracle_entries.py tfc %t/encoder_decoder %models/encoder_decoder.tf 2 | FileCheck %s --check-prefix=ED
# RUN: %python %S/Inputs/oracle_entries.py tfc %t/gpt_bytes %models/gpt_bytes.tf 1 | FileCheck %s --check-prefix=GPT

# REVERSE: reverse train_step: within 1e-5 of float64
# REVERSE-NEXT: reverse grad_step: within 1e-5 of float64
# REVERSE-NEXT: reverse apply_step: within 1e-5 of float64
# REVERSE-NEXT: reverse predict: within 1e-5 of float64
# REVERSE-NEXT: reverse evaluate: within 1e-5 of float64
# SET: set_anomaly train_step: within
# SET-COUNT-4: within 1e-5
# CNN: fleuret_cnn train_step: within
# CNN-COUNT-4: within 1e-5
# ATTN: fleuret_attention train_step: within
# ATTN-COUNT-4: within 1e-5
# ED: encoder_decoder train_step: within
# ED-COUNT-4: within 1e-5
# GPT: gpt_bytes train_step: within
# GPT-COUNT-4: within 1e-5
# GPT: gpt_bytes prefill: within 1e-5 of float64
# GPT-NEXT: gpt_bytes decode: within 1e-5 of float64
