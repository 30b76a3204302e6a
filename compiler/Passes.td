//===- Passes.td - tfc's passes -------------------------------------------===//

#ifndef TFC_COMPILER_PASSES_TD
#define TFC_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfFuse : Pass<"tf-fuse", "mlir::ModuleOp"> {
  let summary = "Group tf ops into tf.fusion regions, one loop nest each";
  let description = [{
    The fusion policy, decided at the tf level so that every backend
    compiles the same groups; each group becomes a `tf.fusion` region, one
    loop nest (per reduction stage) on the CPU. The pass names no op but
    tf.attention: ops say what they are with traits and interfaces
    (TfOps.td): `LoopFusible` (computed element by element), `Positionwise`,
    `ReductionFusible`, and `ProductOpInterface` (a product a GEMM computes).
    In each function, in this order:

    1. A `tf.attention` with a weights result: unread weights are dropped;
       read weights (`--attention-maps`, a loss on them) decompose the op
       into q k^T, scale, mask fill, softmax and weights v, whose middle
       fuses like any other ops. Other `tf.attention` and
       `tf.attention_grad` ops stay whole (fused kernels).
    2. With `gemm-epilogues` on: a `Positionwise` op on a reshaped product,
       `f(x, reshape(p))` (a residual, a relu or a dropout after a linear
       layer over batch x sequence rows), is redone in p's shape,
       `reshape(f(x', p))`, so that it can join p's group (x' is x in that
       shape: what a reshape of x read, a broadcast into trailing dims both
       shapes share redone there, its positionwise producers that only f
       reads redone there too, or a reshape of x, a view); a reshape of the
       result back to p's shape reads the redone value. A lookup (a
       `LoopFusible` op with `IndexingOpInterface`: tf.gather, a one-hot's
       product after canonicalization, or tf.one_hot) counts as a product,
       with or without `gemm-epilogues`.
    3. Walking the ops backwards (consumer first, as XLA's instruction
       fusion), each ungrouped `LoopFusible` op roots a `loop` group over its
       result and each ungrouped `ReductionFusible` op a `reduction` group
       over its first operand. A group pulls in the producers of its
       members' operands, and theirs, when the producer is in the same
       block, in no other group, has one result, and that result has as many
       elements as the group's loop (a producer over fewer elements is not
       recomputed per element). Then:
       - a broadcast_in_dim or splat constant moves in when only the group
         reads it, and is cloned into the group otherwise;
       - a `LoopFusible` producer moves in when only the group reads it. A
         loop group also takes one read elsewhere, as one more output, when
         every other reader comes after the group's root (Adam's new moments
         and parameter: one loop per parameter); a reduction group does not
         (it would compute it twice);
       - a loop group takes at most one f32 product that nothing else reads
         (`rowsOfProducts`: a tf.matmul of rank 2 or 3, or a tf.conv1d in
         its windows form, not a weight gradient's per-position form), and
         becomes a `gemm` group: the GEMM with its epilogue (bias,
         activation, residual, a relu's backward mask, a gradient
         accumulation), which the CPU backend runs on blocks of rows as the
         GEMM finishes them. The product's operands are not pulled in.
         `gemm-epilogues=false` takes no product (and step 2 moves ops to
         lookups only).
       Anything else (reshape, slice, concat, rank-4 products,
       another reduction) stays outside. A transpose that only per-position
       convolutions read is a view, not `LoopFusible`. A root that neither
       pulls in nor clones anything stays a lone op, not a region.
    4. Last, the `loop` groups whose results only the function's return
       reads (a train step's update of each parameter) merge, when there are
       two or more, into one `horizontal` group at the last of them:
       independent loops over different shapes that run as one pass over
       all their elements (`horizontal=false` keeps them apart).

    Members keep their block order inside the region, clones first; every
    member result read outside becomes a result of the region. Fusion never
    changes a result: a tf.fusion means its body's ops in order (the
    interpreter runs them as they are).

    ```mlir
    %s = tf.add %a, %b : tensor<8x4xf32>
    %y = tf.relu %s : tensor<8x4xf32>
    // becomes
    %y = tf.fusion "loop" : tensor<8x4xf32> {
      %s = tf.add %a, %b : tensor<8x4xf32>
      %r = tf.relu %s : tensor<8x4xf32>
      tf.yield %r : tensor<8x4xf32>
    }
    ```
  }];
  let options = [
    Option<"gemmEpilogues", "gemm-epilogues", "bool", /*default=*/"true",
           "Fuse a matmul's elementwise consumers into it as its epilogue">,
    Option<"horizontal", "horizontal", "bool", /*default=*/"true",
           "Merge the loop groups only the return reads into one horizontal fusion">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def TfLowerToLinalg : Pass<"tf-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower tf ops to linalg, tensor, arith and math on tensors";
  let description = [{
    The first target-neutral step below tf (compiler/lowering/). Elementwise
    ops, broadcasts and transposes become parallel `linalg.generic`s;
    reductions and `tf.matmul` become `linalg.generic`s with reduction
    iterators over an init filled with the reduction's identity (argmax
    carries the best value and its index); reshapes become
    `tensor.collapse_shape`/`expand_shape`, slices and concatenations
    `tensor.extract_slice`/`insert_slice`; one_hot and gather read the
    loop index (`linalg.index`); constants become `arith.constant`.

    ```mlir
    %0 = tf.add %a, %b : tensor<4xf32>
    // becomes
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id, #id],
                         iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%x: f32, %y: f32, %out: f32):
        %s = arith.addf %x, %y : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    ```

    softmax and log_softmax are three passes (max, sum of exponentials,
    normalisation), layer_norm three (sum, squared deviations, affine); an
    attention no kernel takes decomposes into tf ops (q k^T, scale, mask
    fill, softmax, weights v) that are lowered in turn; conv1d becomes GEMM
    generics over its windows, its bias added after them (the GEMM's
    epilogue); cross_entropy reads the labelled class of a log-softmax, the
    label clamped into the classes, and gather the id's row, clamped into
    the table.

    A `tf.fusion` region becomes one loop nest: its ops are lowered in
    place, then every elementwise generic of the region is fused into the
    generics of the region that read it (MLIR's elementwise op fusion,
    producer into consumer; a producer read by a reduction and by others
    is cloned for the reduction), and the region is inlined. Generics from
    different regions never fuse: the grouping is tf-fuse's decision.

    With `kernels=cpu` (the default) the ops the CPU runtime has fused
    kernels for become calls of them on the operands' buffers
    (`bufferization.to_memref`) and results in fresh `memref.alloc`s
    (compiler/lowering/KernelCalls.cpp: attention without stored
    weights and its gradient, `tfc_attention_forward`/`_backward`; the
    layer-norm backward, `tfc_layer_norm_backward`; dropout's masks,
    `tfc_dropout_mask`, bitwise the interpreter's Philox stream, applied by
    an elementwise select). With `kernels=cuda` the same three ops call the
    CUDA runtime's hand-written twins, `tfc_cuda_attention_forward`/
    `_backward` and `tfc_cuda_layer_norm_backward` (the same C types and
    arguments, on device memory), and dropout is as with `kernels=none`;
    the layer norm, `cross_entropy` and `cross_entropy_grad` call theirs
    too, and a train step's `cross_entropy` and `cross_entropy_grad` of the
    same logits and labels on the same axis (the grad later in the block,
    its adjoint available at the loss: autodiff's constant seed) are one
    call, `tfc_cuda_cross_entropy_fused`, where the loss was: each row's
    logits read once for its loss and its gradient, llm.c's fused
    classifier (`fused-cross-entropy=false`: two calls). An attention whose
    backward follows in the same function (the same q, k, v, mask and
    scale) stores its rows' statistics in a buffer the backward reads, with
    the forward's out; with `attention-ds` (the CUDA pipeline's) such a
    backward also gets room for dS (f32), which its dkv stores for its dq;
    none where `tensor-core-attention` (`--precision tf32` or `bf16`) and
    the tensor-core kernels take the heads, and none past 256 MiB.

    ```mlir
    %l = tf.cross_entropy %x, %y axis 1 : tensor<64x10xf32>, tensor<64xi32>
    ...
    %d = tf.cross_entropy_grad %x, %y grad %g axis 1 : ...
    // becomes, at %l
    call @tfc_cuda_cross_entropy_fused(%c64, %c10, %c1, %n, %xp, %yp, %gp,
                                       %lossesp, %lp, %dp)
    ```
    With `kernels=none` every attention is decomposed into loops, dropout
    becomes one elementwise generic that computes each element's Philox
    word in arith ops (the same masks, bit for bit:
    compiler/lowering/DropoutInCode.cpp), and attention_grad and
    layer_norm_grad are errors: a backend without those kernels runs
    tf-decompose first.
  }];
  let options = [
    Option<"kernels", "kernels", "std::string", /*default=*/"\"cpu\"",
           "Whose runtime kernels to call: cpu, cuda or none">,
    Option<"fusedCrossEntropy", "fused-cross-entropy", "bool", /*default=*/"true",
           "kernels=cuda: a cross_entropy and a cross_entropy_grad of the same "
           "logits and labels as one call of tfc_cuda_cross_entropy_fused">,
    Option<"attentionDs", "attention-ds", "bool", /*default=*/"false",
           "kernels=cuda: an attention backward paired with its forward gets room for dS">,
    Option<"tensorCoreAttention", "tensor-core-attention", "bool", /*default=*/"false",
           "kernels=cuda: attention runs on the tensor-core kernels where they take the "
           "heads (--precision tf32, bf16): no room for dS there">,
    Option<"layerNormDropout", "layer-norm-dropout", "bool", /*default=*/"false",
           "kernels=cuda: a layer_norm_grad's call also stores the training dropout of "
           "its dx (a post-norm layer's dropout gradient), no loop nest after it">,
    Option<"layerNormResidual", "layer-norm-residual", "bool", /*default=*/"false",
           "kernels=cuda: a layer_norm's call also makes its x where a gemm fusion's "
           "epilogue ends residual + training dropout (a post-norm layer's residual sum), "
           "no loop nest before it">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::func::FuncDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::memref::MemRefDialect",
    "mlir::tensor::TensorDialect"
  ];
}

def TfAutodiff : Pass<"tf-autodiff", "mlir::ModuleOp"> {
  let summary = "Build the whole train step of the model in tf ops";
  let description = [{
    For the model function (the one carrying `tf.batch`) with a `tf.loss`
    result, adds `train_step`: the forward pass in training mode, the
    reverse sweep (every op builds its own vector-Jacobian product through
    GradientOpInterface; the sweep knows no op by name), clipping by global
    norm (`clip_grad_norm`), the learning-rate schedule (`constant`,
    `linear_warmup`, `cosine`, `cosine_warmup`) and the optimizer update
    (`adam`, `adamw`, `sgd` with momentum), as PyTorch defines them, from the
    module's `tf.train` block. Optimizer state and the step counter (f32) are
    arguments and results; the base learning rate and the total number of
    steps are arguments, so a binary's flags can change them:

      train_step(inputs, params, state, step, lr, total_steps, [seed])
        -> (loss, metrics, new params, new state, step + 1, lr, [grad_norm])

    The entry carries `tfc.entry` and `tfc.abi` (kinds input, param, seed,
    state, step, hyper; loss, metric, param, state, step, lr, grad_norm).
    Unknown optimizer or schedule names and arguments are errors.

    With `split-step` (the default), also the same step in two halves for
    data-parallel training, where the runtime averages the gradients across
    ranks between them: `grad_step(inputs, params, [seed]) -> (loss,
    metrics, gradients)` and `apply_step(params, gradients, state, step, lr,
    total_steps) -> (new params, new state, step + 1, lr, [grad_norm])`.
  }];
  let options = [
    Option<"splitStep", "split-step", "bool", /*default=*/"true",
           "Also build grad_step and apply_step (data-parallel training)">,
  ];
}

def TfEntryPoints : Pass<"tf-entry-points", "mlir::ModuleOp"> {
  let summary = "Build the compiled binary's entry functions from the model function";
  let description = [{
    The model function (the one carrying `tf.batch`) computes every declared
    result from every declared argument. This pass replaces it with the
    functions a compiled binary calls:

    - `predict`: the `tf.output` and `tf.attention` results, in eval mode
      (dropout is the identity), reading only the arguments they need (no
      labels, no seed).
    - `evaluate` (models with a loss): the loss and metrics in eval mode,
      each a mean over the samples a last argument `sample_mask`
      (f32[batch], 1 for a real sample, 0 for padding) selects, so a padded
      last batch counts each sample once.

    Each entry carries `tfc.entry` (its name) and `tfc.abi`, a dictionary
    with `args` and `results`, lists of `{kind, name}` describing its
    arguments (kind `input`, `param` or `seed`) and results (`output`,
    `attention`, `loss`, `metric`), and loses the tf argument and result
    attributes. The module gets `tfc.model`, `tfc.batch`, `tfc.params`
    (name, type and initialiser of every parameter) and `tfc.inputs` (name,
    type, and `index_bound` = N for an integer input some op indexes with,
    directly or through ops that only copy elements: its values must lie in
    [0, N), the smallest bound of its uses; the runtime checks that).
  }];
}

def TfDecompose : Pass<"tf-decompose", "mlir::ModuleOp"> {
  let summary = "Rewrite attention, layer_norm, cross_entropy_grad and their kin into plain tf ops";
  let description = [{
    For a backend without fused kernels for them: each listed op becomes
    its definition (the formulas of TfOps.td) in the simple tf ops every
    backend lowers: matmul, softmax, reduce_sum/mean, broadcast_in_dim,
    mul, sub, add, rsqrt, select. The reference interpreter gives the
    decomposed ops the fused ops' results: bit for bit for attention and
    attention_grad (the same sums in the same order), within rounding for
    the layer norms (mean as sum / d rather than the sum of x / d). Batch
    and head dimensions stay leading batch dims of the matmuls. With
    `S = scale q k^T`, false-mask logits at -9e15, and `P = softmax(S)`
    over the last axis (max-shifted):

    - `attention`: `values = P v` (and the weights `P` with
      `with_weights`), as `AttentionOp::decompose`;
    - `attention_grad`: `P` recomputed, `dV = P^T dO`, `dP = dO V^T`,
      `dS = scale P (dP - Σ_row dP P)`, 0 where the mask is false (a fully
      masked row has uniform P), `dQ = dS K`, `dK = dS^T Q`; the transposes
      are matmul flags, never materialised;
    - `layer_norm`: `mean` and biased `var` over the last dimension
      (reduce_mean, broadcast back), `x̂ = (x - mean) rsqrt(var + epsilon)`,
      `y = x̂ gamma + beta`;
    - `layer_norm_grad`: `x̂` recomputed, `dx̂ = g gamma`,
      `dx = rstd (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂))`, `dgamma = Σ_rows g x̂`,
      `dbeta = Σ_rows g`;
    - `cross_entropy_grad`: `(softmax(logits) - one_hot(labels)) g / N`,
      the one-hot transposed to the class axis, in the ops cross_entropy's
      VJP emitted before the fused op (the CPU's code unchanged).

    `ops` lists the ops to rewrite (`ops=attention,layer_norm`; empty, the
    default, means all five), so a backend rewrites only those it has no
    kernel for: the CPU pipeline runs it with `ops=cross_entropy_grad`.
    Run it before tf-fuse, so that the parts fuse with their neighbours. No
    other op changes, and nothing is folded.

    ```mlir
    %y = tf.layer_norm %x, %g, %b : tensor<8x16xf32>, tensor<16xf32>
    // becomes
    %m = tf.reduce_mean %x [1] : tensor<8x16xf32> -> tensor<8xf32>
    %mb = tf.broadcast_in_dim %m [0] : tensor<8xf32> to tensor<8x16xf32>
    %c = tf.sub %x, %mb : tensor<8x16xf32>
    %c2 = tf.mul %c, %c : tensor<8x16xf32>
    %var = tf.reduce_mean %c2 [1] : tensor<8x16xf32> -> tensor<8xf32>
    %eps = tf.constant dense<9.99999974E-6> : tensor<8xf32>
    %ve = tf.add %var, %eps : tensor<8xf32>
    %r = tf.rsqrt %ve : tensor<8xf32>
    %rb = tf.broadcast_in_dim %r [0] : tensor<8xf32> to tensor<8x16xf32>
    %xh = tf.mul %c, %rb : tensor<8x16xf32>
    %gb = tf.broadcast_in_dim %g [1] : tensor<16xf32> to tensor<8x16xf32>
    %bb = tf.broadcast_in_dim %b [1] : tensor<16xf32> to tensor<8x16xf32>
    %s = tf.mul %xh, %gb : tensor<8x16xf32>
    %y = tf.add %s, %bb : tensor<8x16xf32>
    ```
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "The ops to decompose: attention, attention_grad, layer_norm, "
               "layer_norm_grad, cross_entropy_grad (empty: all five)">,
  ];
}

def TfGemmToRuntime : Pass<"tf-gemm-to-runtime", "mlir::ModuleOp"> {
  let summary = "Call the runtime's GEMM for every matmul on buffers";
  let description = [{
    After bufferization, a `linalg.generic` marked `tfc.matmul` (the lowering
    of `tf.matmul`) becomes one call of `tfc_sgemm`, the runtime's GEMM entry
    point, with the operands' base pointers, leading dimensions, batch
    strides and transpose flags read from their static layouts through the
    indexing maps. An operand that indexes no batch loop is shared by the
    whole batch; a result that indexes none sums the batch's products (a
    batch reduction, as convolution weight gradients need). The adjacent
    zero-fill of its output is dropped (the GEMM overwrites). A marked op
    whose layout the GEMM cannot express (a non-unit innermost stride, batch
    dims that do not collapse) stays a loop nest.

    A generic marked `tfc.gemm_epilogue` that reads the product (the rest of
    a tf.fusion "gemm") is paired with the call: both move into one
    `scf.execute_region` marked `tfc.gemm_epilogue`, which
    tf-parallel-loops-to-runtime turns into one `tfc_sgemm_epilogue` call
    that runs the outlined epilogue on rows of C as the GEMM completes them.
    Only when that is sound: a 2-D all-parallel epilogue over C's rows and
    columns that reads C at its own element only, writes nothing A or B
    hold, and only allocations and pure ops between the two (the GEMM moves
    down to the epilogue). The region also keeps the epilogue's buffers live
    through the GEMM for tf-plan-memory. Otherwise the epilogue stays a
    separate loop nest after the GEMM.

    A convolution (its windows GEMM) of 5 taps with at least 16 input
    channels, 16 output channels and 16 outputs a row calls
    `tfc_conv1d_winograd` instead (same arguments): Winograd's F(4, 5),
    eight GEMMs of 2.5x fewer multiply-adds, rounding differently from the
    direct sum. Its weight gradient (a taps GEMM of 5 taps one apart over
    16 or more channels each way and positions, the output gradient's rows
    along t) calls `tfc_conv1d_winograd_taps`: F(5, 4). `winograd=false`,
    or TFC_CONV=direct when the model runs, keeps the direct GEMMs.

    With `device=cuda` each product is a `tfc_cuda_sgemm` call on device
    memory, and cuBLASLt computes what its epilogues can: an epilogue of a
    bias, a ReLU and one other matrix (`tfc_cuda_sgemm_fused`), and a
    weight gradient's bias gradient (`tfc_cuda_sgemm_bias_grad`): the
    column sums of the output gradient dY (stored K x M as a transposed A,
    or K x N as a B), zero-filled and summed before the GEMM that reads it,
    with nothing between them touching dY or the sums. The sum moves into
    the call and cuBLASLt's BGRADB (of A) or BGRADA (of B) computes it.
  }];
  let options = [
    Option<"winograd", "winograd", "bool", /*default=*/"true",
           "Convolutions of 5 taps and their weight gradients by Winograd's minimal "
           "filtering (F(4, 5), F(5, 4))">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Whose GEMM to call: cpu (tfc_sgemm and its variants, epilogues paired) "
           "or cuda (tfc_cuda_sgemm on device memory; an epilogue of bias, ReLU and "
           "another matrix in the same call, tfc_cuda_sgemm_fused, cuBLASLt's; "
           "convolutions and other epilogues stay loop nests, for tf-map-to-gpu)">,
    Option<"plain", "plain", "bool", /*default=*/"false",
           "cpu: plain products only (every epilogue a loop nest of its own)">,
    Option<"gradientEpilogues", "gradient-epilogues", "bool", /*default=*/"true",
           "cuda: a weight gradient's bias gradient (the column sums of the output "
           "gradient, zero-filled before the GEMM) in the same call, "
           "tfc_cuda_sgemm_bias_grad, cuBLASLt's BGRADB/BGRADA; ReLU's gradient "
           "by the mask its forward GEMM wrote (RELU_AUX, DRELU)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
}

def TfApproximateMath : Pass<"tf-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replace exp, log, tanh, erf and friends by polynomial approximations";
  let description = [{
    MLIR's polynomial approximations (`math` to `arith`, f32 and vectors of
    f32) for exp, expm1, log, log1p, log2, tanh, erf, sin, cos, atan and
    rsqrt. LLVM lowers the `math` ops to one scalar libm call per element,
    and a call keeps the whole fused loop it sits in scalar; the
    approximations are plain arithmetic the loop vectoriser handles. Their
    error is a few ulp (compiled models are checked against the
    double-precision interpreter end to end).

    ```mlir
    %e = math.exp %x : f32
    // becomes a range reduction (x = k ln2 + r), a polynomial in r and a
    // scaling by 2^k, in arith ops (with overflow and underflow handled)
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def TfReductionsToLoops : Pass<"tf-reductions-to-loops", "mlir::ModuleOp"> {
  let summary = "Lower reduction generics on buffers to loops LLVM vectorises";
  let description = [{
    Each `linalg.generic` with a reduction dim (on buffers, static sizes)
    becomes loops in the order of its dims: one `scf.parallel` over the
    leading parallel dims (a single iteration when there are none, so the
    nest still becomes one function in tf-parallel-loops-to-runtime), then an
    `scf.for` per remaining dim. When the innermost dim is a reduction that
    no output indexes, the accumulators are that loop's `iter_args` (loaded
    once, stored once) and the combining `arith.addf`/`arith.subf` is marked
    `reassoc`, so LLVM sums in vector lanes. A reduction dim is never split
    across threads: results do not depend on the thread count.
    (`convert-linalg-to-parallel-loops` would keep the accumulator in memory,
    and put a column reduction's parallel loop inside its serial one.)
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::affine::AffineDialect"];
}

def TfParallelLoopsToRuntime : Pass<"tf-parallel-loops-to-runtime", "mlir::ModuleOp"> {
  let summary = "Run outermost parallel loops on the runtime's thread pool";
  let description = [{
    Each outermost `scf.parallel` (no reductions, constant bounds) whose
    estimated work reaches `min-work` operations becomes a call of
    `tfc_parallel_for(body, ctx, n, grain)`. `body(ctx, begin, end)` is a new
    private function running flat iterations [begin, end) of the loop's
    outer dims (all but the innermost, which stays a serial loop inside each
    iteration so it vectorises; a 1-d loop is split along its one dim). `ctx`
    points at a stack struct of the values the loop captures (memref
    descriptors, indices as i64, scalars); constants and globals are
    recreated in the body instead. `grain` keeps each chunk at about
    `min-chunk-work` operations. Iterations write disjoint outputs, so the
    result is the same for every thread count. A loop with less work is
    outlined the same way but its body is called directly, `body(ctx, 0, n)`,
    and kept out of line (`passthrough = ["noinline"]`): one small function
    per loop nest keeps LLVM's O3 time linear in the size of the model.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Loops with less estimated work run serially (called directly)">,
    Option<"minChunkWork", "min-chunk-work", "int64_t", /*default=*/"8192",
           "Estimated work below which a chunk is not split further">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
}

def TfConstantGlobals : Pass<"tf-constant-globals", "mlir::ModuleOp"> {
  let summary = "Make the tensor constants' memref.globals in program order before bufferizing";
  let description = [{
    One-Shot Bufferize gives each tensor `arith.constant` a `memref.global`
    (the first of the same value and alignment, else a new one named after
    its shape and moved to the module's front), bufferizing the functions
    in an order MLIR 19 takes from a pointer-keyed map: the globals' order
    and their names' suffixes changed from run to run. This pass makes the
    globals first, each constant in program order (the same helper, so the
    bufferization finds and uses them): the same IR on every run. The
    constants themselves stay for the bufferization to replace.
  }];
  let options = [
    Option<"alignment", "alignment", "uint64_t", /*default=*/"64",
           "the globals' alignment: the bufferization's bufferAlignment">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def TfResultsInPlace : Pass<"tf-results-in-place", "mlir::ModuleOp"> {
  let summary = "Compute each entry's results in their out-params instead of copying them there";
  let description = [{
    After `buffer-results-to-out-params`, an entry ends with one
    `memref.copy %buffer, %out` per result. When `%buffer` is a
    `memref.alloc` of the out-param's type that nothing uses after the copy,
    and the copy is all that touches `%out`, the alloc is replaced by `%out`
    and the copy dropped: the ops that computed the result write it where
    the runtime wants it (a train step's new parameters and optimizer state:
    three passes over every parameter fewer, and their bytes out of the
    arena). The runtime passes an input's buffer as a result's only where
    tf-updates-in-place, which runs after, says so
    (runtime/Model.h), so writing a result early cannot clobber an input.
    A result that is an argument, a view, or returned twice keeps its copy.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def TfUpdatesInPlace : Pass<"tf-updates-in-place", "mlir::ModuleOp"> {
  let summary = "Write an entry's new parameters and optimizer state over the arguments";
  let description = [{
    After `tf-results-in-place`, a train step computes each parameter's and
    optimizer buffer's next value in an out-param of its own, which the
    runtime swaps with the argument after the step: the values live twice in
    device memory. For a `param` or `state` result whose argument of the
    same kind, name and type is read by nothing after the op that first
    writes the out-param, or only by that op, element by element as it
    writes it (a loop nest of parallel loops whose accesses to both are the
    buffers themselves at one bijective map: the optimizer's update), the
    out-param's uses become the argument's, and the result's `tfc.abi`
    entry gains `in_place_of = <argument index>` (the manifest's
    `in_place_of`): the runtime passes the argument's buffer for the result
    too and keeps no spare. When a reader of the argument follows that op
    (an update right after its gradient, before the products that still
    read the parameter), the op moves after the last reader if nothing in
    between depends on it. Ops that touch a buffer through a pointer of
    unknown origin stop both.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def TfHorizontalLoops : Pass<"tf-horizontal-loops", "mlir::ModuleOp"> {
  let summary = "Run the loops of a horizontal fusion as one chunked parallel loop";
  let description = [{
    The generics of one lowered `tf.fusion "horizontal"` (marked with the
    same `tfc.horizontal` id: a train step's update of every parameter)
    become one `scf.parallel` over chunks of 4096 elements of all of them.
    A chunk finds its member by comparing its index with the members' first
    chunks, and an `scf.index_switch` runs that member's body in an `scf.for`
    over the chunk's elements, on 1-d views of its buffers. A member
    qualifies when it is all-parallel and static and every operand is
    contiguous and indexed by the loop's own element, or a 0-d input; others,
    and members with something that touches memory between them, keep their
    own loop nests. Runs on buffers before `tf-plan-memory`, so the merged
    loop's buffers are live together. The loop carries
    `tfc.work_per_iteration` for `tf-parallel-loops-to-runtime`.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def TfPlanMemory : Pass<"tf-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place every intermediate buffer of each entry in one arena";
  let description = [{
    Each `memref.alloc` of an entry function (all static, all in its
    top-level block after bufferization) gets a live range: from the alloc
    to the last top-level op that uses it or any view of it. Buffers are
    placed greedily, largest first, at the lowest 64-byte-aligned offset
    that overlaps no placed buffer whose range intersects its own. Each
    alloc becomes a `memref.view` of a new last argument, the arena
    (`memref<?xi8>`), and the entry records its size as `tfc.arena_bytes`.
    Buffers whose lifetimes overlap never share bytes; buffers that are
    never live together do. Consecutive ops with one `tfc.launch_group` id
    (tf-group-loops) count as one position. The entry records where and
    when each buffer lives as `tfc.arena_buffers` (begin, end, first and
    last position: four numbers a buffer) and each runtime call its position
    as `tfc.plan_position` (for tf-graph-dependencies).

    With `concurrent-window` W > 0, two buffers also share no bytes unless
    every op that touches the earlier is one that every op touching the
    later waits for (by what they read and write, each alloc its own buffer
    and the arguments one), or comes W or more memory-touching ops before
    it: the plan then orders no independent ops that are fewer than W apart,
    so a graph may run them at once (tf-graph-dependencies), and the bytes
    of a buffer whose last reader is off the critical path (a weight
    gradient's) are shared again W ops later rather than never.
  }];
  let options = [
    Option<"concurrentWindow", "concurrent-window", "int64_t", /*default=*/"0",
           "Keep independent ops fewer than this many apart independent (0: share bytes by "
           "program order alone)">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def TfPackEntryAbi : Pass<"tf-pack-entry-abi", "mlir::ModuleOp"> {
  let summary = "Give each entry a C ABI and embed the model's manifest";
  let description = [{
    For each entry function `E` (on buffers, results already out-params,
    arena last), adds `void tfc_entry_E(void **buffers)`: it builds a
    memref descriptor from each pointer of `buffers` (arguments, then
    results, then the arena) and calls `E`, which becomes private. Then
    writes `tfc_manifest`, a NUL-terminated JSON string constant describing
    the model (name, batch, parameters with initialisers, inputs) and each
    entry (arguments and results with kind, name, dtype and shape; arena
    bytes): everything the runtime needs, in one place.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// The CUDA backend (compiler/lowering/cuda/)
//===----------------------------------------------------------------------===//

def TfMapToGpu : Pass<"tf-map-to-gpu", "mlir::ModuleOp"> {
  let summary = "Make every loop nest of an entry a GPU kernel launch";
  let description = [{
    Every `linalg.generic` on buffers (and every `linalg.fill` and
    `memref.copy`, as generics) becomes one `gpu.launch`, so that no memory
    access of an entry is left on the host. Its parallel iterations are
    linearised over 256-thread blocks, one iteration a thread, the innermost
    dim fastest (lanes along the contiguous dim of row-major results), or,
    for a long elementwise nest (`coarsen`: no reduction, 32,768 iterations or
    more, every result row-major along an innermost dim that is a multiple
    of 4, of 4-byte elements or 2-byte ones: bf16 bits), 4 consecutive
    iterations a thread: their loads, bodies and stores
    in that order, each aligned row-major buffer read and written as one
    `vector<4xf32>` (or `vector<4xi16>`) where a check in the kernel finds every such buffer
    16-byte aligned (`memref.assume_alignment`), an element at a time
    otherwise; its
    reduction dims, if any, run as a serial loop in the thread with the
    accumulators in registers and each result stored once (the same order of
    additions on every run: deterministic, no atomics); constant fills of its
    results right before it (an argmax's value and index) fold in, the
    accumulators starting at the constants, one launch fewer. Constant tables
    (`memref.get_global` and views of it) are read inside the kernel, so
    outlining moves them into the GPU module.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<128x10xf32>) outs(%sum : memref<128xf32>) {...}
    // becomes
    gpu.launch blocks(%bx, ...) in (%c1, %c1, %c1) threads(%tx, ...) in (%c128, %c1, %c1) {
      %i = bx * 128 + tx
      scf.if %i < 128 {
        %init = memref.load %sum[%i]
        %r = scf.for %k = 0 to 10 iter_args(%acc = %init) { ... }
        memref.store %r, %sum[%i]
      }
    }
    ```
  }];
  let options = [
    Option<"coarsen", "coarsen", "bool", /*default=*/"true",
           "A long elementwise nest: 4 consecutive iterations a thread, 16-byte "
           "accesses where its buffers are aligned (false: one iteration a thread)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::vector::VectorDialect"];
}

def TfBf16GemmOperands : Pass<"tf-bf16-gemm-operands", "mlir::ModuleOp"> {
  let summary = "Store the operands of the GPU's large GEMMs in bf16";
  let description = [{
    For `--precision bf16` on the GPU: cuBLASLt multiplies bf16 A and B on
    the tensor cores at twice the rate it reads fp32 ones (it rounds those
    as it loads them, at TF32's speed), so each `tfc_cuda_sgemm`,
    `tfc_cuda_sgemm_fused` or `tfc_cuda_sgemm_bias_grad` call (after
    tf-gemm-to-runtime) of at least `min-macs` multiply-adds reads A and B
    from bf16 copies: before the call, a generic (marked `tfc.bf16_cast`)
    rounds each operand's matrices as the call reads them (its pointer,
    leading dimension and batch stride, through a `memref.reinterpret_cast`)
    to nearest even, NaN kept a NaN, into a fresh contiguous buffer of
    their bf16 bits (`i16`); the call then points at it, its leading
    dimension the row's length, its transpose flag with `kBf16` set
    (`runtime/Abi.h`). The products are then those of bf16 tensor cores on
    operands rounded to bf16 as before, now rounded once in memory; C, the
    epilogue's bias, residual and ReLU mask stay fp32. A bias gradient
    (BGRADA/BGRADB) sums its operand's bf16 values.

    Where the matrices were last written whole by an all-parallel generic
    (a dropout, a ReLU's gradient: generated elementwise code) with nothing
    between touching them, that generic writes the copy too, as a second
    result beside them (`fuse-producers`): one read of the matrices fewer.
    So does a `tfc_cuda_layer_norm_forward` call that wrote them whole: its
    last argument, `y16`, 0 before, points at the copy.

    Such a generic stops writing its fp32 result where nothing after it
    reads that (the backward's gradients that only the next products read);
    a body that read the old value (an epilogue updating a GEMM's result in
    place) takes it as an input. With `bf16-activations` (the default), an
    activation whose every later reader copies it again or only compares it
    with zero (a ReLU's gradient) is kept as its copy alone: the copies
    become it, the comparisons read its bits widened to f32 (positives
    of at most 2^-134, which round to a bf16 zero, then compare as zero), and its fp32
    result goes as above. So is a `tfc_cuda_layer_norm_forward` output with its
    ReLU (the output net's) whose y16 it writes, where only whole copies and
    layer norm backwards taking it as their gate read y after it (and nothing
    writes the bits before them): the forward stores the bits alone (`Y` 0),
    the copies become them, and the backwards read their gate from them
    (`GateBits` 1, runtime/Abi.h).

    With `attention-outputs` (the default), the attention kernels store
    their outputs' copies: a `tfc_cuda_attention_forward` whose out fills
    the buffer a product reads whole stores its bits beside it (`out16`,
    its last argument, 0 before), and a `tfc_cuda_attention_backward` whose
    dq, dk and dv fill a buffer that nothing after it reads but copies of
    the whole buffer stores them as bits alone (`gradsBf16`, its last
    argument): the copies become those bits, the fp32 buffer goes.

    A later call reading the same matrices reuses the copy when both are
    in one block and nothing between them may write the source (a GEMM's
    C, bias gradient or mask elsewhere; another copy) and, for an
    activation (not a block argument), nothing but GEMM calls and copies
    lies between, or nothing but such products reads it after the later
    call (its fp32 values then die earlier, the copy held instead): a
    linear layer's output gradient is copied once for its input's and its
    weight's gradients, a weight once for the forward and the backward, a
    layer norm's output that the backward reads only for a weight gradient
    once; but an activation read in fp32 in the backward too has its copy
    made again (kept, it would add to the step's peak memory); nor is a
    copy made beside a producer that other work follows, unless only such
    products read the matrices after it (one-hot tokens made at the
    step's start for a weight gradient at its end). A parameter's copy (an
    entry argument `tfc.abi` names a `param`) is made at the entry block's
    start, beside the other parameters' copies, when nothing before its
    product may write the parameter: independent and side by side, they
    become one launch (tf-group-loops, tf-merge-launches). Any other copy
    nest goes right after the loop nest nearest before its call when only
    runtime calls and copies that leave its matrices alone lie between
    (failing that, after the nearest such copy past a call): side by side,
    the two are one launch. A `tfc_cuda_layer_norm_backward` that stores
    dx's dropout (runtime/Abi.h's layer_norm_backward) into a buffer only
    copies of all of it read afterwards stores its bits alone
    (`DropoutBits`), which the copies become (with `fuse-producers`).
    With `gemm-results` (the default), a `tfc_cuda_sgemm` of bf16 operands
    without an epilogue whose result fills a buffer of its own that only
    loop nests read afterwards (the FFN's first product before its bias,
    ReLU and dropout; the gradient of the FFN's activation before theirs)
    stores it as bf16 (`kBf16` in its `Accumulate` flag): the nests read
    the bits widened, and the fp32 buffer goes. The nests then see the
    product rounded to bf16.
    With `attention-inputs` (the default), a `tfc_cuda_sgemm_fused` of bf16
    operands with a bias alone whose result fills a buffer of its own that
    only attention calls read afterwards, as their q, k and v (the QKV
    projection; heads the tensor-core kernels take, rows 8-byte aligned),
    stores it as bf16 with a bf16 copy of its bias (cuBLASLt's bias takes a
    bf16 D's type), and the attention calls read the bits (`inputsBf16` =
    `kQkvBf16`). The kernels rounded q, k and v to bf16 as they staged them:
    the bias's rounding and the sum's are what is new. Then a
    `tfc_cuda_sgemm` of bf16 operands without an epilogue whose result fills
    a buffer of its own that only those attention backwards read afterwards,
    as their dO (the out projection's input gradient; rows 8-byte aligned),
    stores it as bf16 and the backwards read the bits (`kQkvBf16 |
    kDoBf16`): new is dO . out on the rounded dO (the kernels staged it
    rounded already), as FlashAttention's bf16 backward takes it.
    Calls whose sizes or pointers are not constants stay fp32.

    ```mlir
    call @tfc_cuda_sgemm(%c1, %c8192, %c512, %c512, %x, %c512, %c0, %c0,
                         %w, %c512, %c0, %c1, %y, %c512, %c0, %c0)
    // becomes
    %xv = memref.reinterpret_cast %xbuf to offset: [0], sizes: [8192, 512], strides: [512, 1]
    %x16 = memref.alloc() : memref<8192x512xi16>
    linalg.generic {tfc.bf16_cast} ins(%xv) outs(%x16)   // the bits of bf16(x)
    ...                                                  // the same for %w
    call @tfc_cuda_sgemm(%c1, %c8192, %c512, %c512, %x16p, %c512, %c0, %c2,
                         %w16p, %c512, %c0, %c3, %y, %c512, %c0, %c0)
    ```
  }];
  let options = [
    Option<"minMacs", "min-macs", "int64_t", /*default=*/"int64_t(1) << 28",
           "The fewest multiply-adds (batch x M x N x K) of a call whose operands "
           "are copied to bf16: smaller products gain less than the copies cost">,
    Option<"fuseProducers", "fuse-producers", "bool", /*default=*/"true",
           "A copy of matrices an all-parallel generic wrote whole is that generic's "
           "second result, not a loop nest of its own">,
    Option<"keepActivationCopies", "keep-activation-copies", "bool", /*default=*/"false",
           "Every activation's copy is reused across other work too (the forward's for "
           "the backward's weight gradients), not only where nothing but products reads "
           "the activation after: less traffic, more memory at the peak">,
    Option<"bf16Activations", "bf16-activations", "bool", /*default=*/"true",
           "An activation whose copy its producer writes is kept as that copy alone "
           "where every later reader copies it again or compares it with zero (a "
           "ReLU's gradient)">,
    Option<"gemmResults", "gemm-results", "bool", /*default=*/"true",
           "A product of bf16 operands without an epilogue that only loop nests read "
           "is stored in bf16 by cuBLASLt, which the nests read widened">,
    Option<"attentionInputs", "attention-inputs", "bool", /*default=*/"true",
           "A QKV projection that only attention calls read, as q, k and v, is stored "
           "in bf16 by cuBLASLt (a bf16 copy of its bias), which the kernels read "
           "(inputsBf16), and so is an out projection's input gradient that only their "
           "backwards read, as dO">,
    Option<"attentionOutputs", "attention-outputs", "bool", /*default=*/"true",
           "The attention kernels store their outputs' copies: the forward out's bits "
           "beside it (out16), the backward's dq, dk and dv as bits alone (gradsBf16) "
           "where only copies read them">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect"];
}

def TfSplitReductions : Pass<"tf-split-reductions", "mlir::ModuleOp"> {
  let summary = "Split reductions with too few results for a GPU in two stages";
  let description = [{
    A reduction generic on buffers with one result, an associative combining
    step (`out = out + x`, `*`, max, min; no fast-math flags) and fewer than
    8,192 results (a loss, a bias gradient, a gradient norm) becomes two
    generics over a scratch buffer: S partial results, each over a slice of
    its outermost reduction dim (S a divisor of its size, at most sqrt(R) of
    the R elements reduced and 8,192 / P for P results, each slice at least
    16 elements), then each result combined with its S partials in order.
    tf-map-to-gpu gives each of the S x P partials a thread, instead of P
    threads each a chain of thousands of loads. Deterministic (the order is
    fixed by the shapes); rounds differently from one chain.

    ```mlir
    // out[] += x[i, j] for i < 2048, j < 10: one chain of 20,480 additions
    // becomes
    %p = memref.alloc() : memref<128xf32>    // partials, filled with 0
    // %p[s] += x[s * 16 + i, j] for i < 16, j < 10   (128 threads, 160 each)
    // out[] += %p[s] for s < 128                    (1 thread, 128 additions)
    ```

    Full reductions: one result over at least 4,096 elements of inputs read
    whole, in order, with identity layouts (a parameter's sum of squares, a
    loss) is first collapsed to one dim, then split with its slices
    interleaved (slice s takes elements s, s + S, ...: adjacent threads read
    adjacent elements; S the largest divisor of R at most 8,192 and R / 16,
    and at least 64, else it is left as it was), and its partials split
    again when there are 1,024 or more (three stages).

    Long rows: a reduction over one dim that an input reads as its
    innermost, contiguous dim, at least 256 long (a row's sum, max or
    arg-max over 1,000 classes), which the split above leaves alone (many
    results, or an arg-max), is read a lane a column: the row's n elements
    as S lanes of n / S (S the divisor of n in [16, 64] nearest 32; none,
    left alone), the lane an innermost parallel dim of stage 1 (adjacent
    threads read adjacent elements), then each result with its S partials
    in lane order. An arg-max (`cmpf ogt|olt` and two selects, its index
    filled with a constant <= 0 right before) keeps each lane's first best
    element and its index; stage 2 takes a partial that is better, or as
    good and earlier: the row's first best element, as the one chain.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def TfGroupLoops : Pass<"tf-group-loops", "mlir::ModuleOp"> {
  let summary = "Put independent loop nests side by side, marked to run as one launch";
  let description = [{
    On buffers, before the memory plan (the CUDA backend). Each run of loop
    nests (linalg ops and `memref.copy`; the allocations, views and
    constants among them move along; any other op ends the run) is cut into
    groups of independent nests, in order: the earliest nest not yet placed
    joins the current group if it is independent of every member (neither
    writes what the other reads or writes); else a later nest that writes
    at most 64 KiB and is independent of the members and of every nest it
    passes joins instead; else the group closes. A constant fill right
    before its reduction moves with it. The nests of a group of two or more
    get one `tfc.launch_group` id and stand together, the views and
    allocations they use before them; tf-plan-memory counts a group as one
    position, so no two members share bytes, and tf-merge-launches runs
    them as one kernel. Distinct allocations and entry arguments never
    alias; a nest on a buffer of other origin keeps its place.

    First, a nest whose every write is an entry argument (a result: an
    updated parameter or optimizer state, the loss, a metric) sinks to the
    first op that must follow it (a nest it depends on, a runtime call
    whose buffer arguments it touches or whose pointers are of unknown
    origin, a nest sunk already, the end): each parameter's Adam update,
    which followed its weight gradient's GEMM call, meets the others at the
    step's end and groups with them.

    ```mlir
    // sq0 = sum(g0 * g0); sq1 = sum(g1 * g1)   (split: partials, then finals)
    fill p0; partial p0 <- g0; fill n0; final n0 <- p0
    fill p1; partial p1 <- g1; fill n1; final n1 <- p1
    // becomes
    fill p0; partial p0 <- g0; fill p1; partial p1 <- g1  {tfc.launch_group = 0}
    fill n0; final n0 <- p0;   fill n1; final n1 <- p1    {tfc.launch_group = 1}
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def TfMergeLaunches : Pass<"tf-merge-launches", "mlir::ModuleOp"> {
  let summary = "Run adjacent independent kernel launches, small ones after a launch, and "
                "chains of one-block ones, as one";
  let description = [{
    After tf-map-to-gpu: consecutive `gpu.launch`es (1-D, constant sizes,
    only pure ops between them) that share no bytes one of them writes
    become one launch: its grid the sum of theirs, its block
    the largest of theirs, each block running the member whose range of
    blocks holds it (and only that member's threads). Accesses are resolved
    to a buffer and a byte range (the arena's views by their constant
    offsets, entry arguments and constant tables whole); a launch touching
    anything else, or with an op in it that is not a load, a store or pure,
    stays alone. At most 4,000 captured values a merged launch (each a
    kernel parameter of at most 8 bytes; PTX ISA 8.1 takes 32,764 bytes).

    ```mlir
    gpu.launch blocks(%b) in (4) threads(%t) in (256) { A }
    gpu.launch blocks(%b) in (1) threads(%t) in (96)  { B }
    // becomes
    gpu.launch blocks(%b) in (5) threads(%t) in (256) {
      if %b - 0 < 4 { A }
      if %b - 4 < 1 and %t < 96 { B with %b - 4 }
    }
    ```

    Then each run of a launch and the small launches after it (at most 16
    blocks and 4,096 threads each; dependent ones too, the same conditions
    on their bodies and what lies between) becomes one launch of the first
    one's grid, its block the widest of theirs: every block runs its block
    of the first one, then calls `@tfc_last_block` (tf-grid-sync defines
    it), true in the block that finishes last; that block runs the others
    in order, each one's blocks in turn (an `scf.for`), a `gpu.barrier`
    between consecutive ones, each on its own first threads. A run of
    one-block launches only is left to the chain below. Not with
    `grid-chains`.

    ```mlir
    gpu.launch blocks(%b) in (22) threads(%t) in (64) { A }
    gpu.launch blocks(%b) in (10) threads(%t) in (32) { B reads A's result }
    // becomes
    gpu.launch blocks(%b) in (22) threads(%t) in (64) {
      A
      %last = func.call @tfc_last_block() : () -> i1
      scf.if %last {
        scf.for %v = 0 to 10 { if %t < 32 { B with %v } }
      }
    }
    ```

    Then each run of adjacent launches of one block each (after the above:
    the ones that depend on each other, a loss's mean and then its
    division, a gradient norm's finals; the same conditions on their bodies
    and what lies between) becomes one launch of one block, its block the
    largest of theirs: the members in order, a `gpu.barrier` between
    consecutive ones (a block's global writes are visible to its threads
    after it), each on its own first threads. What a member uses of another
    phase is only the launch's ids; its sizes and guards are made in its
    own phase (tf-launches-to-loops runs each phase as a loop of its own).
    The same 4,000 captured values at most.

    ```mlir
    gpu.launch blocks(%b) in (1) threads(%t) in (64) { A }
    gpu.launch blocks(%b) in (1) threads(%t) in (32) { B reads A's result }
    // becomes
    gpu.launch blocks(%b) in (1) threads(%t) in (64) {
      A
      gpu.barrier
      if %t < 32 { B }
    }
    ```

    With `grid-chains` (tfc's --persistent-kernels), after the first merge
    each run of adjacent launches, of any grid, becomes one launch of a
    persistent kernel: its grid the largest member's, at most 264 blocks
    (the runtime may launch fewer: every block it has resident at once),
    its block the widest; the members in order, a call of `@tfc_grid_sync`
    (every block of the grid waits there for all the others; tf-grid-sync
    defines it) between consecutive ones, each member's blocks spread over
    the grid's, each on its own first threads:

    ```mlir
    gpu.launch blocks(%b) in (%g) threads(%t) in (256) {
      scf.for %v = %b to 768 step %g { A(%v, %t) }
      func.call @tfc_grid_sync() : () -> ()
      scf.if %b < 8 and %t < 64 { B(%b, %t) }
    }
    ```
  }];
  let options = [
    Option<"gridChains", "grid-chains", "bool", /*default=*/"false",
           "Chain every run of launches into one persistent kernel, grid-wide "
           "barriers between its phases">,
    Option<"tails", "tails", "bool", /*default=*/"true",
           "Run small launches after a launch as its tail, by the block that "
           "finishes it last (without grid-chains)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::func::FuncDialect"];
}

def TfGlobalsToDevice : Pass<"tf-globals-to-device", "mlir::ModuleOp"> {
  let summary = "Copy the constant tables a runtime call reads into device memory";
  let description = [{
    A `memref.global` read by loop nests moves into the GPU module with their
    kernels; one whose pointer a runtime call takes (a hand-written attention
    kernel's mask) must be in device memory. Each such table gets a buffer,
    filled by a `memref.copy` (a kernel) where the table is read, and every
    use but the copy reads the buffer. Before the memory plan, which places
    the buffer in the entry's arena.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def TfGraphDependencies : Pass<"tf-graph-dependencies", "mlir::ModuleOp"> {
  let summary = "Tell the runtime which earlier device ops each launch and call of an entry waits for";
  let description = [{
    For each entry whose device ops (`gpu.launch_func`, or `gpu.launch` on
    cuda-emulated, and runtime calls) all lie in its block: an op waits for
    an earlier one when both access overlapping bytes of a buffer and one of
    them writes. What a launch reads and writes comes from its kernel's body,
    over the bytes of the arena's view it is given; what a runtime call does
    with each pointer, from runtime/Abi.h's layout, over the bytes from the
    pointer to the end of the buffers that hold it (`tfc.arena_buffers`,
    from tf-plan-memory); the entry's arguments count as one buffer; a
    kernel's globals (a tail's ticket) are read and written unless
    constant. Runtime calls also take one of `lanes` lanes (the runtime's
    workspace, scratch and counter a lane): one whose last call the op
    already waits for, else the oldest, which it then waits for. Only direct
    edges are kept. Before each op:

    ```mlir
    func.call @tfc_cuda_graph_node(%index, %lane, %deps, %count) : (index, index, index, index) -> ()
    ```

    `%deps` points into `@tfc_graph_deps_<entry>`, a constant table of int32
    op indices; one more call before the return (index = the op count)
    waits for every op that no later op waits for. An entry with a device
    op in a region, or another op that touches memory, is left as it is.
    Each entry it orders gets `tfc.graph = {longest_path = L, ops = N}`: its
    device ops, and the most on one path of ops that wait for each other.
    With `reorder` (a test) there are no calls: the device ops move into the
    order that always runs the latest ready op first, and the entry gets
    `tfc.graph_reordered` (whether any op moved).
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"2",
           "Runtime calls' lanes: runtime/Abi.h's abi::graph::kLanes (any other number is an "
           "error, but 0 with reorder)">,
    Option<"reorder", "reorder", "bool", /*default=*/"false",
           "Move the device ops into another order the dependencies allow, latest ready first "
           "(a test of them on cuda-emulated), instead of calling the runtime">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def TfAwaitPreviousKernel : Pass<"tf-await-previous-kernel", "mlir::ModuleOp"> {
  let summary = "Start every kernel by waiting for the kernel before it (programmatic dependent launch)";
  let description = [{
    Every `gpu.func` kernel starts with an `llvm.inline_asm` marker (a PTX
    comment with a memory clobber, so nothing moves above it):

    ```mlir
    llvm.inline_asm has_side_effects "// tfc: await the previous kernel", "~{memory}" : () -> ()
    ```

    The kernels' PTX targets sm_80, which has no programmatic dependent
    launch; `tf-launches-to-runtime` assembles the SASS for sm_90 and later
    from the PTX with each marker replaced by `griddepcontrol.launch_dependents`
    and `griddepcontrol.wait` (the next kernel may begin launching; wait until
    the kernel before has finished and its writes are visible), and the
    manifest lists those archs (`"dependent_launch"`). On them the runtime may
    launch the kernels with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`
    (TFC_DEPENDENT_LAUNCH=1): a launch overlaps the kernel before it. After
    tf-merge-gpu-modules (and tf-grid-sync), before the NVVM conversion.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def TfMergeGpuModules : Pass<"tf-merge-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one GPU module";
  let description = [{
    After `gpu-kernel-outlining` (one `gpu.module` a kernel), every kernel
    moves into one module, `@tfc_kernels`, renamed `tfc_k0`, `tfc_k1`, ...
    in the order the entries first launch them (the indices the runtime's
    `tfc_cuda_launch` takes); the globals the kernels read are kept once.
    One module assembles in a third of the time of hundreds, and loads once.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def TfGridSync : Pass<"tf-grid-sync", "mlir::ModuleOp"> {
  let summary = "Define the grid barrier of persistent kernels and launch them cooperatively, "
                "and the last block's ticket of tails";
  let description = [{
    After outlining: in a kernels' module whose kernels call `@tfc_grid_sync`
    (tf-merge-launches' grid chains), the function gets its body: a block
    barrier; thread 0 of each block counts the block in at a global of the
    module (`@tfc_grid_state`: a count and a generation, zero at load), the
    last to arrive resets the count and bumps the generation while the
    others spin on it, with `membar.gl` on both sides (PTX in an
    `llvm.inline_asm`); a block barrier again. The kernels that call it
    lose their `known_grid_size` (the runtime launches as many blocks as
    the GPU holds at once, at most the grid asked for) and their
    `gpu.launch_func`s get `tfc.cooperative`, which tf-launches-to-runtime
    turns into a cooperative launch.

    ```mlir
    gpu.module @tfc_kernels {
      gpu.func @tfc_k0() kernel { ... func.call @tfc_grid_sync() ... }
      func.func private @tfc_grid_sync()
    }
    // becomes
    gpu.module @tfc_kernels {
      llvm.mlir.global internal @tfc_grid_state(dense<0> : tensor<2xi32>)
          {addr_space = 1 : i32} : !llvm.array<2 x i32>
      func.func private @tfc_grid_sync() {
        gpu.barrier
        scf.if %thread_0 { llvm.inline_asm has_side_effects "...", "l,~{memory}" }
        gpu.barrier
        return
      }
    }
    gpu.launch_func @tfc_kernels::@tfc_k0 ... {tfc.cooperative}
    ```

    In a kernels' module whose kernels call `@tfc_last_block` (a tail of
    tf-merge-launches), it gets its body: every thread `membar.gl`; a block
    barrier; thread 0 `membar.gl` and draws a ticket at a global of the
    module (`@tfc_last_block_ticket`, one i32, zero at load: `atom.global.add`),
    the block is the last if it drew `%nctaid.x - 1`, and the last stores 0
    back for the next launch; `bar.red.or.pred` (`llvm.nvvm.barrier0.or`)
    gives the block thread 0's answer; in the last block every thread
    `membar.gl` (an acquire, before the tail's loads); it returns the answer.
    Its launches stay ordinary.

    ```mlir
    gpu.module @tfc_kernels {
      llvm.mlir.global internal @tfc_last_block_ticket(0 : i32)
          {addr_space = 1 : i32, alignment = 4 : i64} : i32
      func.func private @tfc_last_block() -> i1 {
        llvm.inline_asm has_side_effects "membar.gl;", "~{memory}" : () -> ()
        gpu.barrier
        %drew = scf.if %thread_0 -> (i32) { llvm.inline_asm "...atom.global.add.u32..." }
        %any = llvm.call_intrinsic "llvm.nvvm.barrier0.or"(%drew) : (i32) -> i32
        scf.if %any != 0 { llvm.inline_asm has_side_effects "membar.gl;", "~{memory}" }
        return %any != 0
      }
    }
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::gpu::GPUDialect"];
}

def TfLaunchesToRuntime : Pass<"tf-launches-to-runtime", "mlir::ModuleOp"> {
  let summary = "Launch kernels through the CUDA runtime and embed their image";
  let description = [{
    Each `gpu.launch_func` of `@tfc_kernels` becomes a call of the runtime's
    `tfc_cuda_launch(kernel, grid x y z, block x y z, shared bytes, argc,
    args)`, `args` a stack array of 8-byte slots (a buffer's aligned pointer,
    or an integer). The PTX of `@tfc_kernels` (its `gpu.binary`, from
    `gpu-module-to-binary{format=isa}`) becomes the constant
    `tfc_cuda_image`: the PTX itself (`image=ptx`, compiled by the driver
    when the model loads), or a fatbin of SASS for each of `archs` and the
    PTX for newer GPUs (`image=fatbin`, by the toolkit's ptxas and
    fatbinary). The module's `tfc.cuda` attribute says which, names the
    kernels and records `precision` (the GEMMs' compute type, which the
    runtime's cuBLASLt plans use), for the manifest (tf-pack-entry-abi).
  }];
  let options = [
    Option<"imageFormat", "image", "std::string", /*default=*/"\"fatbin\"",
           "What tfc_cuda_image holds: fatbin (SASS and PTX) or ptx">,
    ListOption<"archs", "archs", "std::string",
               "The GPUs a fatbin carries SASS for (sm_80, sm_90, ...)">,
    Option<"ptxArch", "ptx-arch", "std::string", /*default=*/"\"sm_80\"",
           "The GPU the PTX is for (the oldest it runs on)">,
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"/usr/local/cuda\"",
           "The CUDA toolkit whose ptxas and fatbinary make a fatbin">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "The GEMMs' precision the manifest records: fp32 or tf32">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def TfLaunchesToLoops : Pass<"tf-launches-to-loops", "mlir::ModuleOp"> {
  let summary = "Run GPU kernels as parallel loops on the CPU";
  let description = [{
    Each `gpu.launch` whose threads are independent (no shared memory, no
    barriers or shuffles: every kernel tf-map-to-gpu makes) becomes an
    `scf.parallel` over its blocks and threads, the ids its indices. One
    whose body is phases separated by `gpu.barrier`s at its top level (a
    chain of tf-merge-launches) becomes an `scf.parallel` over its blocks
    running, in order, an `scf.parallel` over the threads a phase; a phase
    may use only the ids and constants of another, and any other gpu op (a
    barrier under control flow too) is refused. One with a tail (its
    grid's work, `%last = func.call @tfc_last_block()`, `scf.if %last` of
    phases with `gpu.barrier`s between) becomes an `scf.parallel` over the
    blocks and threads of the grid's work, then, once, an `scf.parallel`
    over the threads a phase of the tail; another shape of it is refused.
    A call
    of a hand-written CUDA kernel (`tfc_cuda_attention_forward`,
    `tfc_cuda_attention_backward`, `tfc_cuda_layer_norm_backward`) becomes
    a call of its CPU twin, which takes the same arguments. `tfc
    compile --target=cuda-emulated` compiles the CUDA backend's kernels so
    for the CPU, to check the GPU mapping against the CPU build where there
    is no GPU.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

#endif // TFC_COMPILER_PASSES_TD
