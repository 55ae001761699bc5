"""The MILP of bench/plan_optimality agrees with brute force on a tiny
hand-made memory plan problem: at every budget from the lowest reachable to
the unplanned peak, the MILP's optimum equals the least added seconds over
every legal plan, and its plan fits the target with that cost."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# A skip, also under CI=true (unlike python/requirements.txt's packages,
# tests/graph_tools.require_module): scipy is a bench-only dependency.
pytest.importorskip(
    "scipy.optimize", exc_type=ModuleNotFoundError,
    reason="scipy is a bench-only dependency (pip install -r "
    "bench/requirements.txt), so this test of bench/plan_optimality's MILP "
    "skips without it, also under CI=true")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import milp_plan  # noqa: E402

# Three blocks of a -> m (positions 0-5), a loss (6), the backward (7-12)
# and the output (13). Each replay reads the storage before it; a2's op also
# defines x2, a forward-only temporary that its replay brings back for a
# moment; m2 is offload-only. A 50 B/s link: a copy of 100 B takes 2 s.
STORAGES = [
    # name, bytes, alloc, free, last_forward, first_backward, closure,
    # frontier
    ("a0", 100, 0, 12, 1, 12, [0], []),
    ("m0", 80, 1, 11, 2, 11, [1], [0]),
    ("a1", 100, 2, 10, 3, 10, [2], [1]),
    ("m1", 60, 3, 9, 4, 9, [3], [2]),
    ("a2", 120, 4, 8, 5, 8, [4], [3]),
    ("m2", 50, 5, 7, 6, 7, [], []),
    ("loss", 4, 6, 13, 6, 7, [], []),
    ("x2", 30, 4, 5, 5, None, [], []),
]
SECONDS = [3.0, 1.0, 2.0, 1.0, 4.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
           0.0]
BLOCKS = [0, 0, 1, 1, 2, 2, None, 2, 2, 1, 1, 0, 0, None]


def tiny_problem() -> tuple[dict, list[dict]]:
    n = len(SECONDS)
    timeline = [0] * n
    storages = []
    for name, size, alloc, free, lf, fb, closure, frontier in STORAGES:
        for i in range(alloc, free + 1):
            timeline[i] += size
        storages.append({"name": name, "bytes": size, "alloc": alloc,
                         "free": free, "last_forward": lf,
                         "first_backward": fb,
                         "recomputable": bool(closure), "closure": closure,
                         "frontier": frontier})
    ops = [{"name": f"op{i}", "seconds": s, "block": b,
            "defines": [i, 7] if i == 4 else [i] if i < 7 else []}
           for i, (s, b) in enumerate(zip(SECONDS, BLOCKS))]
    problem = {"budget_bytes": 1 << 30, "host_budget_bytes": 0,
               "resident_bytes": 0, "boundary": 7, "num_blocks": 3,
               "link_bytes_per_second": 50.0, "timeline": timeline,
               "ops": ops, "storages": storages,
               "forward_anchors": [0, 2, 4], "backward_anchors": [7, 9, 11]}
    groups = [{"producer": i, "members": [i], "defs": [i],
               "bytes": STORAGES[i][1], "block": BLOCKS[i]}
              for i in (0, 2, 4, 5)]
    return problem, groups


def test_model_facts():
    m = milp_plan.build_model(*tiny_problem())
    assert max(m.p["timeline"]) == 540
    assert m.intermediates[4] == 30  # x2 at a2's replay
    assert m.readers[2] == [3] and m.readers[3] == [4]
    # Placements the greedy would try for a0: (wait end, reload start).
    assert [(c.prefetch, c.defer, c.places[0]) for c in m.choices
            if c.group == 0] == [(0, 0, (1, 12)), (0, 1, (3, 12)),
                                 (0, 2, (6, 12)), (1, 0, (1, 9)),
                                 (1, 1, (3, 9)), (1, 2, (6, 9)),
                                 (2, 0, (1, 7)), (2, 1, (3, 7)),
                                 (2, 2, (6, 7))]
    # a1 (block 1): defer 2 waits at the boundary as defer 1 does, so it is
    # not a choice; its copies take 2 s against 3 s of forward compute.
    assert [(c.prefetch, c.defer, c.places[0], c.window_seconds)
            for c in m.choices if c.group == 1] == [
        (0, 0, (3, 10), 3.0), (0, 1, (6, 10), 2.0), (1, 0, (3, 7), 1.0),
        (1, 1, (6, 7), 0.0)]
    # Recomputing a2 (4 s) frees it at 6-7, not at the peak (5).
    assert milp_plan.evaluate(m, milp_plan.Plan(frozenset({4}))) == (540, 4.0)
    # Recomputing m1 too: a2's replay at 8 reads m1, so m1 comes back at 8,
    # not 9, and x2 (30 B) with a2: 8 holds 100+80+100+60+120+30+4 = 494,
    # over 5's 540-60.
    assert milp_plan.evaluate(m, milp_plan.Plan(frozenset({3, 4}))) == (
        494, 5.0)
    # Recomputing all five: each replay reads the one before, so all come
    # back at 8 (the same 494 B) for 3+1+2+1+4 s.
    assert milp_plan.evaluate(
        m, milp_plan.Plan(frozenset({0, 1, 2, 3, 4}))) == (494, 11.0)


def test_milp_matches_brute_force():
    m = milp_plan.build_model(*tiny_problem())
    top = max(m.p["timeline"])
    solved = {}
    for target in range(top, 0, -10):
        brute = milp_plan.brute_force(m, target)
        res = milp_plan.solve_milp(m, target, time_limit=10)
        if brute is None:
            assert res.plan is None and res.status == "infeasible", target
            break
        assert res.status == "optimal", target
        assert res.objective == pytest.approx(brute[0], abs=1e-9), target
        assert milp_plan.legal(m, res.plan)
        peak, seconds = milp_plan.evaluate(m, res.plan)
        assert peak <= target
        assert seconds == pytest.approx(brute[0], abs=1e-9)
        solved[target] = brute[0]
    # Every target from the unplanned peak down to the lowest reachable one
    # (210 B: below, nothing fits), plans with both recompute and offload.
    assert min(solved) == 210 and len(solved) == 34
    assert {t: solved[t] for t in (540, 510, 420, 300, 270, 210)} == {
        540: 0.0, 510: 0.0, 420: 1.0, 300: 3.0, 270: 7.0, 210: 8.0}
