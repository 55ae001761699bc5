// Every verifier error of the ao dialect: the offload protocol.
// RUN: joint-opt %s -split-input-file -verify-diagnostics

joint.graph @offload_with_two_waits(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  // expected-error @+1 {{must be consumed by exactly one ao.wait_tensor, but the host copy has 2 uses}}
  %h = ao.offload %a : tensor<4xf32>
  %w1 = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  %w2 = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  joint.output
}

// -----

joint.graph @offload_without_wait(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  // expected-error @+1 {{must be consumed by exactly one ao.wait_tensor, but the host copy has 0 uses}}
  %h = ao.offload %a : tensor<4xf32>
  joint.output
}

// -----

joint.graph @offload_read_by_aten_op(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  // expected-error @+1 {{must be consumed by exactly one ao.wait_tensor as its input, but is used by joint.call_function}}
  %h = ao.offload %a : tensor<4xf32>
  %n = joint.call_function "aten::neg.default"(%h) {name = "neg"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @reload_racing_its_offload(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  // expected-error @+1 {{must be consumed by exactly one ao.wait_tensor as its input, but is used by ao.reload}}
  %h = ao.offload %a : tensor<4xf32>
  %r = ao.reload %h to "cuda:0" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  joint.output
}

// -----

joint.graph @reload_of_device_tensor(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  // expected-error @+1 {{source must be the forward ao.wait_tensor of an ao.offload}}
  %r = ao.reload %a to "cuda:0" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  joint.output
}

// -----

joint.graph @reload_with_two_waits(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  %h = ao.offload %a : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  // expected-error @+1 {{must be consumed by exactly one ao.wait_tensor, but the reloaded tensor has 2 uses}}
  %r = ao.reload %w to "cuda:0" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  %rw2 = ao.wait_tensor %r : tensor<4xf32>
  joint.output
}

// -----

joint.graph @reload_without_device(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  %h = ao.offload %a : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  // expected-error @+1 {{needs a target device}}
  %r = ao.reload %w to "" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  joint.output
}

// -----

joint.graph @forward_wait_without_keepalive(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  %h = ao.offload %a : tensor<4xf32>
  // expected-error @+1 {{waits on an ao.offload and must carry the offloaded source as keepalive}}
  %w = ao.wait_tensor %h : tensor<4xf32>
  joint.output
}

// -----

joint.graph @keepalive_not_the_source(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}, %b: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "b"}) -> () {
  %h = ao.offload %a : tensor<4xf32>
  // expected-error @+1 {{keepalive must be the offloaded source}}
  %w = ao.wait_tensor %h keepalive %b : tensor<4xf32> : tensor<4xf32>
  joint.output
}

// -----

joint.graph @host_tensor_read_by_aten_op(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  %h = ao.offload %a : tensor<4xf32>
  // expected-error @+1 {{result is a host tensor and may only be read by ao.reload (or kept alive by its wait), but is used by joint.call_function}}
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  %n = joint.call_function "aten::neg.default"(%w) {name = "neg"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @reload_wait_with_keepalive(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  %h = ao.offload %a : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  %r = ao.reload %w to "cuda:0" : tensor<4xf32>
  // expected-error @+1 {{waits on an ao.reload; its keepalive must be the host tensor being reloaded}}
  %rw = ao.wait_tensor %r keepalive %a : tensor<4xf32> : tensor<4xf32>
  joint.output
}

// -----

joint.graph @wait_on_plain_tensor(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  // expected-error @+1 {{input must be the result of ao.offload or ao.reload}}
  %w = ao.wait_tensor %a : tensor<4xf32>
  joint.output
}

// -----

joint.graph @wait_changes_type(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  %h = ao.offload %a : tensor<4xf32>
  // expected-error @+1 {{all of {input, result} have same type}}
  %w = "ao.wait_tensor"(%h, %a) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  joint.output
}

// -----

joint.graph @reload_wait_with_last_use(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  %h = ao.offload %a : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  %r = ao.reload %w to "cuda:0" : tensor<4xf32>
  // expected-error @+1 {{waits on an ao.reload and takes no last_use}}
  %rw = ao.wait_tensor %r last_use %a : tensor<4xf32> : tensor<4xf32>
  joint.output
}

// -----

// `joint.storage` (the reloaded copy's storage id) belongs on an ao.reload.
joint.graph @reload_storage_on_an_offload(%a: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () {
  // expected-error @+1 {{'joint.storage' must be a non-negative storage id on an ao.reload}}
  %h = ao.offload %a {joint.storage = 3 : i64} : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  joint.output
}
