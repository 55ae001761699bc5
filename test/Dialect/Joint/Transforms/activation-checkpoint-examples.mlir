// The pipeline on the exported example graphs: it runs, the result verifies
// (joint-opt re-parses it), exports to JSON, and a second run on the
// re-imported JSON adds nothing.
// RUN: joint-opt %joint_src_root/examples/llama-tiny-fp32.json -joint-activation-checkpoint="mode=full" -o %t.full.mlir 2>&1 | FileCheck %s --check-prefix=LLAMA-FULL
// RUN: joint-opt %t.full.mlir -o /dev/null
// RUN: joint-translate --export-joint-json %t.full.mlir -o %t.full.json
// RUN: joint-opt %t.full.json -joint-activation-checkpoint="mode=full" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AGAIN
// RUN: joint-opt %joint_src_root/examples/llama-tiny-fp32.json -joint-activation-checkpoint="mode=selective layer-indices=1" -o %t.sel.mlir 2>&1 | FileCheck %s --check-prefix=LLAMA-SEL
// RUN: joint-translate --export-joint-json %t.sel.mlir -o /dev/null
// RUN: joint-opt %joint_src_root/examples/gpt2-tiny.json -joint-activation-checkpoint="mode=selective" -o %t.gpt2.mlir 2>&1 | FileCheck %s --check-prefix=GPT2
// RUN: joint-translate --export-joint-json %t.gpt2.mlir -o /dev/null
// RUN: joint-opt %joint_src_root/examples/mlp-dynamic-seq.json -joint-tag-recompute-policy -joint-remat -o %t.mlp.mlir 2>&1 | FileCheck %s --check-prefix=MLP
// RUN: joint-translate --export-joint-json %t.mlp.mlir -o /dev/null
// RUN: FileCheck %s --input-file=%t.full.mlir --check-prefix=CLONE

// SDPA for CPU carries nondeterministic_seeded (dropout): saved in every
// mode, like each block's output (read by the next block or the final norm).
// LLAMA-FULL: remark: joint-tag-recompute-policy: mode=full, 2 of 2 blocks selected; must_save 4, must_recompute 164, prefer_recompute 0
// LLAMA-FULL: remark: joint-remat: 160 ops recomputed, 6 originals erased
// AGAIN: remark: joint-tag-recompute-policy: mode=full, 2 of 2 blocks selected; {{.*}}
// AGAIN: remark: joint-remat: 0 ops recomputed, 0 originals erased
// AGAIN-NOT: warning
// LLAMA-SEL: remark: joint-tag-recompute-policy: mode=selective, 1 of 2 blocks selected; must_save 9, must_recompute 0, prefer_recompute 75
// LLAMA-SEL: remark: joint-remat: 74 ops recomputed, 3 originals erased
// GPT2: remark: joint-tag-recompute-policy: mode=selective, 2 of 2 blocks selected; must_save 12, must_recompute 0, prefer_recompute 68
// GPT2: remark: joint-remat: 66 ops recomputed, 4 originals erased
// SymInt-valued ops (sym_size) stay saved in the dynamic-shape MLP (10), and
// the 4 size queries of the linears' inputs the trace reads in the forward.
// MLP: remark: joint-tag-recompute-policy: mode=full, 2 of 2 blocks selected; must_save 14, must_recompute 16, prefer_recompute 0
// MLP: remark: joint-remat: 14 ops recomputed, 0 originals erased, 0 reload chains moved

// Clones keep the module stack and every argument, are backward-phase and
// carry recomputed_from instead of a policy.
// CLONE: %mm_recomputed = joint.call_function "aten::mm.default"(%view_recomputed, %t_recomputed) {module_stack = [#joint.module<"", "LlamaForCausalLM">, #joint.module<"model", "LlamaModel">, #joint.module<"model.layers.0", "LlamaDecoderLayer">, #joint.module<"model.layers.0.self_attn", "LlamaAttention">, #joint.module<"model.layers.0.self_attn.q_proj", "Linear">], name = "mm_recomputed", phase = #joint.phase<backward>, recomputed_from = "mm", result_meta = [#joint.tensor<{{.*}}>], seq_nr = {{[0-9]+}} : i64}
