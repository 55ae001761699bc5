// A malformed hand-made memory plan problem gets one error naming the field
// or the element and the rule it breaks.
// RUN: not joint-opt %s -split-input-file -test-solve-memory-plan-problem -o /dev/null 2>&1 | FileCheck %s

// CHECK: error: test.plan_problem: problem: missing integer 'budget'
module attributes {test.plan_problem = {ops = []}} {}

// -----

// CHECK: error: test.plan_problem: storages[0]: 'bytes' must be an integer
module attributes {test.plan_problem = {budget = 10, ops = [{seconds = 1.0}],
  storages = [{bytes = "x", alloc = 0, free = 0}]}} {}

// -----

// CHECK: error: memory plan problem: storage 'late' needs alloc <= last forward use <= free < 2
module attributes {test.plan_problem = {budget = 10,
  ops = [{seconds = 1.0}, {seconds = 1.0}],
  storages = [{name = "late", bytes = 4, alloc = 1, free = 0}]}} {}

// -----

// CHECK: error: memory plan problem: storage 'a' is recomputable but has no replay closure or no backward reader after its last forward use
module attributes {test.plan_problem = {budget = 10, boundary = 1,
  ops = [{seconds = 1.0}, {seconds = 1.0}],
  storages = [{name = "a", bytes = 4, alloc = 0, free = 1, closure = [0]}]}} {}

// -----

// CHECK: error: memory plan problem: the budget must be > 0 bytes, got 0
module attributes {test.plan_problem = {budget = 0}} {}

// -----

// CHECK: error: test.plan_problem: the module has no dictionary attribute 'test.plan_problem'
module {}
