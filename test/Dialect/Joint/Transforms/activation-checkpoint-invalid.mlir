// Requests that would change the step's result, and graphs without a scope,
// are errors naming the node.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -joint-tag-recompute-policy -o /dev/null

// A must_recompute request on an RNG op.
joint.schema @"aten::rand_like.default" {schema = "aten::rand_like(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
joint.graph @must_recompute_on_rng_op_is_rejected(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  // expected-error @+1 {{node 'rand_like' (aten::rand_like.default) has a must_recompute request but is a random op (nondeterministic_seeded)}}
  %r = joint.call_function "aten::rand_like.default"(%x) {name = "rand_like", module_stack = [#joint.module<"layers.0", "Block">], policy = #joint.policy<must_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// A must_recompute request on a value mutated in place later.
joint.schema @"aten::elu_.default" {schema = "aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
joint.graph @must_recompute_on_mutated_value_is_rejected(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  // expected-error @+1 {{node 'mm' (aten::mm.default) has a must_recompute request but its result shares storage with a value mutated in place by 'elu_'}}
  %y = joint.call_function "aten::mm.default"(%x, %x) {name = "mm", module_stack = [#joint.module<"layers.0", "Block">], policy = #joint.policy<must_recompute>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %y2 = joint.call_function "aten::elu_.default"(%y) {name = "elu_", module_stack = [#joint.module<"layers.0", "Block">]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A must_recompute request on the mutating op itself.
joint.schema @"custom::bump_.default" {schema = "custom::bump_(Tensor(a!) x) -> ()", arguments = [#joint.arg<name = "x", type = "Tensor", alias = "a", write = true>], returns = [], is_mutable}
joint.graph @must_recompute_on_mutating_op_is_rejected(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %c = joint.call_function "aten::clone.default"(%x) {name = "clone"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{node 'bump_' (custom::bump_.default) has a must_recompute request but writes its input in place}}
  joint.call_function "custom::bump_.default"(%c) {name = "bump_", policy = #joint.policy<must_recompute>} : (tensor<4xf32>) -> ()
  joint.output
}

// -----

// No joint.model block containers and no <container>.<int> module path.
// expected-error @+1 {{activation checkpointing found no transformer blocks: the graph has no 'joint.model' block_containers and no module stack path of the form '<container>.<int>'}}
joint.graph @no_blocks_is_an_error(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"encoder", "Encoder">]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// expected-error @+1 {{graph @malformed_joint_model_is_an_error: 'joint.model' block_containers[0] must be a dictionary with a 'blocks' list of module FQNs}}
joint.graph @malformed_joint_model_is_an_error(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{container = "layers"}]}} {
  joint.output
}
