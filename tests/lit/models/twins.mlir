// Each .tf model builds the same IR as its C++ DSL twin (module attributes,
// i.e. the .tf file's train settings on the first line, aside).
// RUN: tfc compile %models/reverse.tf --emit=mlir | sed 1d > %t.reverse.tf.mlir
// RUN: tfc-models --model reverse | sed 1d > %t.reverse.cpp.mlir
// RUN: diff %t.reverse.tf.mlir %t.reverse.cpp.mlir
// RUN: tfc compile %models/reverse.tf --emit=mlir | tf-opt | tf-opt | FileCheck %s --check-prefix=REVERSE
// RUN: tfc compile %models/set_anomaly.tf --emit=mlir | sed 1d > %t.set_anomaly.tf.mlir
// RUN: tfc-models --model set_anomaly | sed 1d > %t.set_anomaly.cpp.mlir
// RUN: diff %t.set_anomaly.tf.mlir %t.set_anomaly.cpp.mlir
// RUN: tfc compile %models/set_anomaly.tf --emit=mlir | tf-opt | tf-opt | FileCheck %s --check-prefix=SET_ANOMALY
// RUN: tfc compile %models/fleuret_cnn.tf --emit=mlir | sed 1d > %t.fleuret_cnn.tf.mlir
// RUN: tfc-models --model fleuret_cnn | sed 1d > %t.fleuret_cnn.cpp.mlir
// RUN: diff %t.fleuret_cnn.tf.mlir %t.fleuret_cnn.cpp.mlir
// RUN: tfc compile %models/fleuret_cnn.tf --emit=mlir | tf-opt | tf-opt | FileCheck %s --check-prefix=FLEURET_CNN
// RUN: tfc compile %models/fleuret_attention.tf --emit=mlir | sed 1d > %t.fleuret_attention.tf.mlir
// RUN: tfc-models --model fleuret_attention | sed 1d > %t.fleuret_attention.cpp.mlir
// RUN: diff %t.fleuret_attention.tf.mlir %t.fleuret_attention.cpp.mlir
// RUN: tfc compile %models/fleuret_attention.tf --emit=mlir | tf-opt | tf-opt | FileCheck %s --check-prefix=FLEURET_ATTENTION
// RUN: tfc compile %models/encoder_decoder.tf --emit=mlir | sed 1d > %t.encoder_decoder.tf.mlir
// RUN: tfc-models --model encoder_decoder | sed 1d > %t.encoder_decoder.cpp.mlir
// RUN: diff %t.encoder_decoder.tf.mlir %t.encoder_decoder.cpp.mlir
// RUN: tfc compile %models/encoder_decoder.tf --emit=mlir | tf-opt | tf-opt | FileCheck %s --check-prefix=ENCODER_DECODER

// REVERSE: func.func @reverse(%arg0: tensor<128x16xi32> {tf.input = "tokens"}
// SET_ANOMALY: func.func @set_anomaly(%arg0: tensor<64x10x512xf32> {tf.input = "features"}
// FLEURET_CNN: func.func @fleuret_cnn(%arg0: tensor<128x1x100xf32> {tf.input = "input"}
// FLEURET_ATTENTION: tf.param = "attention_layer.conv1d_2.weight"
// ENCODER_DECODER: func.func @encoder_decoder(%arg0: tensor<16x2x2xf32> {tf.input = "source"}
