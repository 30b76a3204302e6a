# tools/gpu/scores.sh, sourced by check.sh (4b: the GPU against the CPU) and
# precision-train.sh (bf16 against fp32): the seed models trained there, and
# how two runs' scores compare.
#
# SEED_SCORES: a line a model: its epochs (short budgets), the split and
# score its train log ends with, and its kind: acc (higher is better) or mse.
SEED_SCORES='set_anomaly 2 test accuracy acc
fleuret_cnn 5 test loss mse
fleuret_attention 5 test loss mse
encoder_decoder 50 val loss mse'

# score LOG SPLIT NAME: the last SPLIT score NAME in a train log.
score() {
  grep -E "^$2|  \|  $2:" "$1" | tail -1 | sed -E "s/.*$2[^:]*: .*$3 ([0-9.e+-]+).*/\\1/"
}

# scores_match KIND GOT REFERENCE: an accuracy within 0.02 of the
# reference's, an MSE at most 1.5 times it (a trajectory rounded otherwise,
# as another seed's would be); false when either is not a number.
scores_match() {
  python3 -c "import sys; g,r=float('$2'),float('$3'); sys.exit(0 if (abs(g-r)<=0.02 if '$1'=='acc' else g<=1.5*r) else 1)" 2>/dev/null
}
