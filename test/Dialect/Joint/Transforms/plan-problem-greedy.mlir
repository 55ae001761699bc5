// The greedy solver of the memory plan problem on hand-made problems
// (bytes, seconds, op positions; the timeline with everything saved is
// given). Forward ops a (4 s), b, c; backward gc, gb, ga (1 s each). Storage
// a (100 B) is read by the backward at 5, b (60 B) at 4, c (30 B) at 3.
// RUN: joint-opt %s -split-input-file -test-solve-memory-plan-problem -o /dev/null | FileCheck %s
// RUN: joint-opt %s -split-input-file -test-solve-memory-plan-problem="allow-offload=false" -o /dev/null | FileCheck %s --check-prefix=NO-OFFLOAD

// At the peak (op 3, 200 B) b frees 60 B per replayed second and a 25: b
// goes first, and fits a 195 B budget.
// CHECK: recompute 1 'b'
// CHECK-NEXT: recomputed 1 of 2 (60 B), offloaded 0 of 0 (0 B), modelled transient peak 190 B
// CHECK-NEXT: reached
// NO-OFFLOAD: recompute 1 'b'
// NO-OFFLOAD-NEXT: recomputed 1 of 2 (60 B), offloaded 0 of 0 (0 B), modelled transient peak 190 B
// NO-OFFLOAD-NEXT: reached
module attributes {test.plan_problem = {
  budget = 195, boundary = 3,
  timeline = [100, 160, 190, 200, 160, 100],
  ops = [{name = "a", seconds = 4.0}, {name = "b", seconds = 1.0},
         {name = "c", seconds = 1.0}, {name = "gc", seconds = 1.0},
         {name = "gb", seconds = 1.0}, {name = "ga", seconds = 1.0}],
  storages = [
    {name = "a", bytes = 100, alloc = 0, free = 5, last_forward = 1,
     first_backward = 5, closure = [0]},
    {name = "b", bytes = 60, alloc = 1, free = 4, last_forward = 2,
     first_backward = 4, closure = [1]},
    {name = "c", bytes = 30, alloc = 2, free = 3, last_forward = 2,
     first_backward = 3}]
}} {}

// -----

// A tighter budget: after b, the peak moves to op 2 (190 B), where only a
// helps; then op 1 (160 B) holds a and b before their last forward uses.
// With a recomputed, b is no longer needed (ops 2-4 hold at most 100 B
// with b saved), so the greedy undoes it: a alone (4 s, not 5 s).
// CHECK: recompute 0 'a'
// CHECK-NEXT: recomputed 1 of 2 (100 B), offloaded 0 of 0 (0 B), modelled transient peak 160 B
// CHECK-NEXT: reached
// NO-OFFLOAD: recompute 0 'a'
// NO-OFFLOAD-NEXT: recomputed 1 of 2 (100 B), offloaded 0 of 0 (0 B), modelled transient peak 160 B
// NO-OFFLOAD-NEXT: reached
module attributes {test.plan_problem = {
  budget = 165, boundary = 3,
  timeline = [100, 160, 190, 200, 160, 100],
  ops = [{name = "a", seconds = 4.0}, {name = "b", seconds = 1.0},
         {name = "c", seconds = 1.0}, {name = "gc", seconds = 1.0},
         {name = "gb", seconds = 1.0}, {name = "ga", seconds = 1.0}],
  storages = [
    {name = "a", bytes = 100, alloc = 0, free = 5, last_forward = 1,
     first_backward = 5, closure = [0]},
    {name = "b", bytes = 60, alloc = 1, free = 4, last_forward = 2,
     first_backward = 4, closure = [1]},
    {name = "c", bytes = 30, alloc = 2, free = 3, last_forward = 2,
     first_backward = 3}]
}} {}

// -----

// Below every reachable peak: the greedy stops at op 1, where a and b are
// still read by the forward.
// CHECK: recompute 0 'a'
// CHECK-NEXT: recompute 1 'b'
// CHECK-NEXT: recomputed 2 of 2 (160 B), offloaded 0 of 0 (0 B), modelled transient peak 160 B
// CHECK-NEXT: not reached
// NO-OFFLOAD: recompute 0 'a'
// NO-OFFLOAD-NEXT: recompute 1 'b'
// NO-OFFLOAD-NEXT: recomputed 2 of 2 (160 B), offloaded 0 of 0 (0 B), modelled transient peak 160 B
// NO-OFFLOAD-NEXT: not reached
module attributes {test.plan_problem = {
  budget = 150, boundary = 3,
  timeline = [100, 160, 190, 200, 160, 100],
  ops = [{name = "a", seconds = 4.0}, {name = "b", seconds = 1.0},
         {name = "c", seconds = 1.0}, {name = "gc", seconds = 1.0},
         {name = "gb", seconds = 1.0}, {name = "ga", seconds = 1.0}],
  storages = [
    {name = "a", bytes = 100, alloc = 0, free = 5, last_forward = 1,
     first_backward = 5, closure = [0]},
    {name = "b", bytes = 60, alloc = 1, free = 4, last_forward = 2,
     first_backward = 4, closure = [1]},
    {name = "c", bytes = 30, alloc = 2, free = 3, last_forward = 2,
     first_backward = 3}]
}} {}

// -----

// Offloading a (100 B over a 1000 B/s link: 0.1 s exposed without prefetch)
// frees 1000 B per exposed second at op 3, more than recomputing b (60 B/s):
// the greedy offloads a at distances 0; with offload off it recomputes b.
// Blocks: a, b in block 0, c in block 1; gc in block 1, gb, ga in block 0.
// CHECK: offload 0 'a' prefetch 0 defer 0
// CHECK-NEXT: recomputed 0 of 2 (0 B), offloaded 1 of 1 (100 B), modelled transient peak 160 B
// CHECK-NEXT: reached
// NO-OFFLOAD: recompute 1 'b'
// NO-OFFLOAD-NEXT: recomputed 1 of 2 (60 B), offloaded 0 of 0 (0 B), modelled transient peak 190 B
// NO-OFFLOAD-NEXT: reached
module attributes {test.plan_problem = {
  budget = 195, boundary = 3, blocks = 2, link_bytes_per_second = 1000.0,
  timeline = [100, 160, 190, 200, 160, 100],
  ops = [{name = "a", seconds = 4.0, block = 0}, {name = "b", seconds = 1.0, block = 0},
         {name = "c", seconds = 1.0, block = 1}, {name = "gc", seconds = 1.0, block = 1},
         {name = "gb", seconds = 1.0, block = 0}, {name = "ga", seconds = 1.0, block = 0}],
  storages = [
    {name = "a", bytes = 100, alloc = 0, free = 5, last_forward = 1,
     first_backward = 5, closure = [0]},
    {name = "b", bytes = 60, alloc = 1, free = 4, last_forward = 2,
     first_backward = 4, closure = [1]},
    {name = "c", bytes = 30, alloc = 2, free = 3, last_forward = 2,
     first_backward = 3}],
  offload = [{producer = 0, targets = [0]}]
}} {}
