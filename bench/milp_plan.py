"""The memory plan problem as a MILP (scipy.optimize.milp, HiGHS), and the
interval model it encodes, for bench/plan_optimality and its test.

The problem is the one joint-plan-memory's greedy solves, as
`joint-opt -test-print-memory-plan-problem="format=json solve=true"` prints
it (bytes, seconds, op positions). A plan chooses for each storage: save,
recompute (replay its closure) or offload (its group, at one of the
prefetch/defer placements the greedy would try). `evaluate` prices a plan
with the interval model below; `solve_milp` finds a plan of least modelled
cost within a transient-bytes target. The two agree exactly (tested against
brute force in python/tests/test_plan_optimality.py).

The interval model is the greedy's (lib/Planning/GreedySolver.cpp), with
these simplifications, each of which the MILP needs to stay linear and
order-independent (the greedy's own counts depend on its decision order):

1. Replay intermediates. Recomputing t puts the other results of its
   closure ops on the device at t's replay point. The greedy adds an op's
   results once, at the replay of the first storage it recomputes that
   holds the op; here they are added at every recomputed storage's replay
   point whose closure holds the op (never fewer bytes than the greedy).
2. Transfer exposure. The greedy estimates an offload's exposed seconds as
   the larger of a FIFO queue estimate and a per-block link-capacity
   estimate, in decision order. Here an offload costs the sum of (a) its
   own copies' excess over their compute windows (D2H: the forward compute
   from the producer to the wait; H2D: the backward compute from the reload
   to the first backward reader), and (b) per block and direction, the
   excess of all copies queued in it over that block's compute seconds.
   (a) is the greedy's queue estimate with an empty queue; (b) is its
   capacity estimate summed over the whole plan.
3. Replayed seconds are the seconds of the union of the closures (an op
   replayed for two storages counts once), as the greedy counts them.

Neither model is the last word: bench/plan_optimality prices the greedy's
plan and the MILP's plan with the planner's own simulator (the real
appliers, MemoryModel and CostModel), so the ratio it reports compares two
plans under one pricing.
"""

from __future__ import annotations

import bisect
import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Optional

Problem = dict[str, Any]
DISTANCES = 3  # kPlanDistances
# The MILP's units, for HiGHS's tolerances: memory rows in MiB, costs in ms
# (bytes and seconds span 1e-9..1e11).
MIB, MS = float(2**20), 1e3


# --------------------------------------------------------------------------
# Offload groups and their placements (GreedySolver.cpp computePlacement)
# --------------------------------------------------------------------------

def _placement(p: Problem, si: int, prefetch: int, defer: int
               ) -> tuple[int, int]:
    """(wait end, reload start) of storage `si` at the distances."""
    s = p["storages"][si]
    fa, ba = p["forward_anchors"], p["backward_anchors"]
    wait_end, reload_start = s["last_forward"], s["first_backward"]
    if defer:
        index = bisect.bisect_right(fa, s["last_forward"]) + defer
        anchor = fa[index] if index < len(fa) else p["boundary"]
        if anchor > s["last_forward"]:
            wait_end = anchor - 1
    if prefetch:
        after = bisect.bisect_right(ba, s["first_backward"])
        if after:
            own = after - 1
            target = own - prefetch if own > prefetch else 0
            while target < own and ba[target] <= wait_end:
                target += 1
            if wait_end < ba[target] < s["first_backward"]:
                reload_start = ba[target]
    return wait_end, reload_start


@dataclass
class Choice:
    """One placement of one offload group."""
    group: int
    prefetch: int
    defer: int
    #: (wait end, reload start) per member, in member order.
    places: list[tuple[int, int]]
    #: Seconds of (a): the copies' excess over their own compute windows.
    window_seconds: float
    #: Block whose forward carries the D2H copy, block whose backward
    #: carries the reload (None outside blocks).
    d2h_block: Optional[int]
    h2d_block: Optional[int]


@dataclass
class Model:
    """The problem with its derived facts."""
    p: Problem
    groups: list[dict[str, Any]]
    choices: list[Choice]
    #: readers[s]: recomputable storages whose replay reads s.
    readers: list[list[int]]
    #: Intermediate bytes at the replay point of each recomputable storage.
    intermediates: list[int]
    start_seconds: list[float]
    cap_d2h: list[float]
    cap_h2d: list[float]
    group_of: dict[int, int] = field(default_factory=dict)

    @property
    def target_default(self) -> int:
        return self.p["budget_bytes"] - self.p["resident_bytes"]


def build_model(p: Problem, groups: list[dict[str, Any]]) -> Model:
    """Derived facts of `p`; `groups` are the offload groups the greedy forms
    (the "groups" of its JSON plan)."""
    n = len(p["ops"])
    start = [0.0] * (n + 1)
    for i, op in enumerate(p["ops"]):
        start[i + 1] = start[i] + op["seconds"]
    nb = p["num_blocks"]
    cap_d2h, cap_h2d = [0.0] * nb, [0.0] * nb
    boundary = p["boundary"]
    if boundary is not None:
        for i, op in enumerate(p["ops"]):
            if op["block"] is not None:
                (cap_d2h if i < boundary else cap_h2d)[op["block"]] += \
                    op["seconds"]
    readers: list[list[int]] = [[] for _ in p["storages"]]
    intermediates = [0] * len(p["storages"])
    for t, s in enumerate(p["storages"]):
        if not s["recomputable"]:
            continue
        for f in s["frontier"]:
            readers[f].append(t)
        intermediates[t] = sum(p["storages"][u]["bytes"]
                               for o in s["closure"]
                               for u in p["ops"][o]["defines"] if u != t)
    choices: list[Choice] = []
    link = p["link_bytes_per_second"]
    for gi, g in enumerate(groups):
        distances = DISTANCES if g["block"] is not None else 1
        transfer = g["bytes"] / link
        first = g["members"][0]
        for prefetch in range(distances):
            for defer in range(distances):
                here = _placement(p, first, prefetch, defer)
                # A distance that moves nothing is not written (the greedy).
                if prefetch and here == _placement(p, first, prefetch - 1,
                                                   defer):
                    continue
                if defer and here == _placement(p, first, prefetch,
                                                defer - 1):
                    continue
                fs = p["storages"][first]
                wait_end, reload_start = here
                d2h_window = start[wait_end + 1] - start[fs["alloc"] + 1]
                h2d_window = start[fs["first_backward"]] - start[reload_start]
                window = max(0.0, transfer - d2h_window) + \
                    max(0.0, transfer - h2d_window)
                block = g["block"]
                h2d = None if block is None else min(block + prefetch, nb - 1)
                choices.append(Choice(
                    gi, prefetch, defer,
                    [_placement(p, m, prefetch, defer) for m in g["members"]],
                    window, block, h2d))
    m = Model(p, groups, choices, readers, intermediates, start, cap_d2h,
              cap_h2d)
    for gi, g in enumerate(groups):
        for s in g["members"]:
            m.group_of[s] = gi
    return m


# --------------------------------------------------------------------------
# The interval model: evaluate one plan
# --------------------------------------------------------------------------

@dataclass
class Plan:
    recompute: frozenset[int]
    #: Chosen placements, indices into Model.choices (one per group at most).
    offloads: tuple[int, ...] = ()


def _link_seconds(m: Model, offloads: tuple[int, ...]) -> float:
    link = m.p["link_bytes_per_second"]
    d2h = [0.0] * m.p["num_blocks"]
    h2d = [0.0] * m.p["num_blocks"]
    seconds = 0.0
    for ci in offloads:
        c = m.choices[ci]
        transfer = m.groups[c.group]["bytes"] / link
        seconds += c.window_seconds
        if c.d2h_block is not None:
            d2h[c.d2h_block] += transfer
            h2d[c.h2d_block] += transfer
    seconds += sum(max(0.0, l - c) for l, c in zip(d2h, m.cap_d2h))
    seconds += sum(max(0.0, l - c) for l, c in zip(h2d, m.cap_h2d))
    return seconds


def legal(m: Model, plan: Plan) -> bool:
    """The greedy's rules: recompute only candidates, one placement per
    group, no offload of a recomputed member or of a replayed producer."""
    p = m.p
    if any(not p["storages"][s]["recomputable"] for s in plan.recompute):
        return False
    chosen = [m.choices[ci].group for ci in plan.offloads]
    if len(set(chosen)) != len(chosen):
        return False
    replayed = {o for s in plan.recompute for o in p["storages"][s]["closure"]}
    for gi in chosen:
        g = m.groups[gi]
        if g["producer"] in replayed or \
                any(s in plan.recompute for s in g["members"]):
            return False
    host = p["host_budget_bytes"]
    if host and sum(m.groups[g]["bytes"] for g in chosen) > host:
        return False
    return True


def evaluate(m: Model, plan: Plan) -> tuple[int, float]:
    """(modelled transient peak bytes, added seconds) of a legal plan."""
    p = m.p
    S = p["storages"]
    # Replay points: a recomputed storage is replayed before its first
    # backward reader, or before an earlier replay that reads it.
    need = {t: S[t]["first_backward"] for t in plan.recompute}
    changed = True
    while changed:
        changed = False
        for t in plan.recompute:
            for f in S[t]["frontier"]:
                if f in need and need[t] < need[f]:
                    need[f] = need[t]
                    changed = True
    place = {}
    for ci in plan.offloads:
        c = m.choices[ci]
        for s, pl in zip(m.groups[c.group]["members"], c.places):
            place[s] = pl
    live = list(p["timeline"])

    def add(lo: int, hi: int, delta: int) -> None:
        for i in range(lo, hi + 1):
            live[i] += delta

    for si, s in enumerate(S):
        reads = [need[t] for t in m.readers[si] if t in plan.recompute]
        end = max([s["free"]] + reads)
        lo_need = min(reads) if reads else None
        if si in plan.recompute:
            cut_after, start = s["last_forward"], need[si]
        elif si in place:
            cut_after, start = place[si]
            if lo_need is not None:
                start = min(start, lo_need)
        else:
            cut_after, start = None, None
        add(s["free"] + 1, end, s["bytes"])  # kept alive for a replay
        if cut_after is not None and start > cut_after + 1:
            add(cut_after + 1, start - 1, -s["bytes"])
    for t in plan.recompute:
        add(need[t], need[t], m.intermediates[t])
    replayed = {o for s in plan.recompute for o in S[s]["closure"]}
    seconds = sum(p["ops"][o]["seconds"] for o in replayed)
    return max(live) if live else 0, seconds + _link_seconds(m, plan.offloads)


def brute_force(m: Model, target: int) -> Optional[tuple[float, Plan]]:
    """Least added seconds over every legal plan within `target` bytes
    (exponential: tiny problems only)."""
    cands = [i for i, s in enumerate(m.p["storages"]) if s["recomputable"]]
    by_group: dict[int, list[int]] = {}
    for ci, c in enumerate(m.choices):
        by_group.setdefault(c.group, []).append(ci)
    options = [[None] + cs for cs in by_group.values()]
    best: Optional[tuple[float, Plan]] = None
    for k in range(len(cands) + 1):
        for rec in itertools.combinations(cands, k):
            for offs in itertools.product(*options):
                plan = Plan(frozenset(rec),
                            tuple(c for c in offs if c is not None))
                if not legal(m, plan):
                    continue
                peak, seconds = evaluate(m, plan)
                if peak <= target and (best is None or seconds < best[0]):
                    best = (seconds, plan)
    return best


# --------------------------------------------------------------------------
# The MILP
# --------------------------------------------------------------------------

@dataclass
class MilpResult:
    status: str
    plan: Optional[Plan]
    #: Modelled added seconds of the plan, the proven lower bound, the gap.
    objective: Optional[float]
    bound: Optional[float]
    gap: Optional[float]
    seconds: float
    variables: int
    constraints: int


class _Builder:
    """Variables with bounds and integrality; constraint rows as dicts."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.integer: list[int] = []
        self.rows: list[tuple[dict[int, float], float, float]] = []

    def var(self, cost: float = 0.0, lo: float = 0.0, hi: float = 1.0,
            integer: bool = True) -> int:
        self.cost.append(cost)
        self.lo.append(lo)
        self.hi.append(hi)
        self.integer.append(1 if integer else 0)
        return len(self.cost) - 1

    def row(self, coefs: dict[int, float], lo: float, hi: float) -> None:
        self.rows.append((coefs, lo, hi))


def solve_milp(m: Model, target: int, time_limit: float = 60.0,
               mip_rel_gap: float = 1e-6, allow_offload: bool = True,
               excluded_ops: frozenset[int] = frozenset(),
               fixed: Optional[Plan] = None,
               free: Optional[tuple[set[int], set[int]]] = None
               ) -> MilpResult:
    """Least added seconds within `target` transient bytes, under the
    interval model of `evaluate`. `allow_offload` false: recompute only;
    `excluded_ops`: no offload of a group whose producer or a member's
    defining op is at one of these positions (GreedyOptions::excludedOps);
    `fixed` pins every decision to a plan (to check a plan against the
    formulation), except, with `free` = (storages, groups), the decisions
    of those storages and groups (a subproblem around `fixed`)."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    p = m.p
    S = p["storages"]
    inf = float("inf")
    b = _Builder()
    # r[s]: recompute s; y[o]: op o replayed (cost: its seconds).
    r = {s: b.var() for s, st in enumerate(S) if st["recomputable"]}
    y: dict[int, int] = {}
    for s in r:
        for o in S[s]["closure"]:
            if o not in y:
                y[o] = b.var(cost=p["ops"][o]["seconds"] * MS)
            b.row({y[o]: 1, r[s]: -1}, 0, inf)
    # z[c]: offload placement c; one per group, not with a recomputed member
    # or a replayed producer.
    allowed = [ci for ci, c in enumerate(m.choices)
               if allow_offload and m.groups[c.group]["producer"]
               not in excluded_ops and not any(
                   d in excluded_ops for d in m.groups[c.group]["defs"])]
    z = {ci: b.var(cost=m.choices[ci].window_seconds * MS) for ci in allowed}
    per_group: dict[int, list[int]] = {}
    for ci in z:
        per_group.setdefault(m.choices[ci].group, []).append(ci)
    for gi, cs in per_group.items():
        g = m.groups[gi]
        b.row({z[c]: 1 for c in cs}, 0, 1)
        for s in g["members"]:
            if s in r:
                row = {z[c]: 1 for c in cs}
                row[r[s]] = 1
                b.row(row, 0, 1)
        if g["producer"] in y:
            row = {z[c]: 1 for c in cs}
            row[y[g["producer"]]] = 1
            b.row(row, 0, 1)
    if p["host_budget_bytes"]:
        b.row({z[ci]: m.groups[m.choices[ci].group]["bytes"] / MIB
               for ci in z}, 0,
              p["host_budget_bytes"] / MIB)
    # Link capacity excess per block and direction.
    link = p["link_bytes_per_second"]
    for direction, caps in (("d2h", m.cap_d2h), ("h2d", m.cap_h2d)):
        for blk, cap in enumerate(caps):
            row: dict[int, float] = {}
            for ci in z:
                c = m.choices[ci]
                if (c.d2h_block if direction == "d2h" else c.h2d_block) == blk:
                    row[z[ci]] = m.groups[c.group]["bytes"] / link * MS
            if not row:
                continue
            e = b.var(cost=1.0, lo=0.0, hi=inf, integer=False)
            row[e] = -1.0
            b.row(row, -inf, cap * MS)
    # Replay and reload starts. starts(s, base): the positions s may come
    # back at: its own (base) or an earlier replay of a recomputed reader.
    memo: dict[int, set[int]] = {}

    def replay_starts(t: int) -> set[int]:
        if t not in memo:
            memo[t] = set()  # cycle guard
            out = {S[t]["first_backward"]}
            for u in m.readers[t]:
                out |= {q for q in replay_starts(u)
                        if q < S[t]["first_backward"]}
            memo[t] = out
        return memo[t]

    def reader_starts(s: int, base: int) -> set[int]:
        out = {base}
        for t in m.readers[s]:
            out |= {q for q in replay_starts(t) if q < base}
        return out

    # a[s][q]: s recomputed and replayed at q (sum = r[s]); o[s][(c, q)]:
    # s offloaded by placement c and back at q.
    a: dict[int, dict[int, int]] = {}
    intervals: list[tuple[int, int, int, float]] = []  # lo, hi, var, coef
    for s in r:
        a[s] = {q: b.var() for q in sorted(replay_starts(s))}
        row = {v: 1 for v in a[s].values()}
        row[r[s]] = -1
        b.row(row, 0, 0)
    # s -> q -> (var, its own position) of every way s is back at q.
    back: dict[int, dict[int, list[tuple[int, int]]]] = {}
    for s in r:
        for q, v in a[s].items():
            back.setdefault(s, {}).setdefault(q, []).append(
                (v, S[s]["first_backward"]))
            lf = S[s]["last_forward"]
            if q > lf + 1:
                intervals.append((lf + 1, q - 1, v, -S[s]["bytes"] / MIB))
            intervals.append((q, q, v, m.intermediates[s] / MIB))
    for ci in z:
        c = m.choices[ci]
        members = m.groups[c.group]["members"]
        for s, (wait_end, reload_start) in zip(members, c.places):
            row = {}
            for q in sorted(reader_starts(s, reload_start)):
                v = b.var()
                row[v] = 1
                back.setdefault(s, {}).setdefault(q, []).append(
                    (v, reload_start))
                if q > wait_end + 1:
                    intervals.append(
                        (wait_end + 1, q - 1, v, -S[s]["bytes"] / MIB))
            row[z[ci]] = -1
            b.row(row, 0, 0)
    # A storage comes back no later than each recomputed reader's replay,
    # and earlier than its own position only for such a replay.
    for s, by_q in back.items():
        qs = sorted(by_q)
        for t in m.readers[s]:
            for qt, vt in a[t].items():
                later = [v for q in qs if q > qt for v, _ in by_q[q]]
                if later:
                    row = {v: 1 for v in later}
                    row[vt] = row.get(vt, 0) + 1
                    b.row(row, 0, 1)
        for q, entries in by_q.items():
            early = [v for v, own in entries if q < own]
            if not early:
                continue
            row = {v: 1 for v in early}
            for t in m.readers[s]:
                if q in a[t]:
                    row[a[t][q]] = row.get(a[t][q], 0) - 1
            b.row(row, -inf, 0)
    # Kept alive past its free for a later replay that reads it: x[s][q] >=
    # every reader's replay at or after q, live over (previous q, q].
    for s, st in enumerate(S):
        later = sorted({q for t in m.readers[s] for q in a[t]
                        if q > st["free"]})
        prev = st["free"]
        for q in later:
            x = b.var(integer=False)
            for t in m.readers[s]:
                for qt, vt in a[t].items():
                    if qt >= q:
                        b.row({x: 1, vt: -1}, 0, inf)
            intervals.append((prev + 1, q, x, S[s]["bytes"] / MIB))
            prev = q
    # Memory at every position, telescoped: between consecutive interval
    # ends the decision terms are constant, so one row per segment at the
    # segment's highest timeline entry; m_k = m_{k-1} + starts - ends.
    timeline = p["timeline"]
    n = len(timeline)
    cuts = sorted({0, n} | {lo for lo, _, _, _ in intervals}
                  | {hi + 1 for _, hi, _, _ in intervals})
    delta: dict[int, dict[int, float]] = {}
    for lo, hi, v, coef in intervals:
        d = delta.setdefault(lo, {})
        d[v] = d.get(v, 0) + coef
        d = delta.setdefault(hi + 1, {})
        d[v] = d.get(v, 0) - coef
    previous: Optional[int] = None
    for k in range(len(cuts) - 1):
        lo, hi = cuts[k], cuts[k + 1] - 1
        if lo > hi:
            continue
        mk = b.var(lo=-inf, hi=inf, integer=False)
        row = {mk: 1.0}
        if previous is not None:
            row[previous] = -1.0
        for v, coef in delta.get(lo, {}).items():
            row[v] = row.get(v, 0) - coef
        b.row(row, 0, 0)
        b.row({mk: 1.0}, -inf, (target - max(timeline[lo:hi + 1])) / MIB)
        previous = mk
    if fixed is not None:
        free_storages, free_groups = free or (set(), set())
        for s, v in r.items():
            if s not in free_storages:
                b.lo[v] = b.hi[v] = float(s in fixed.recompute)
        for ci, v in z.items():
            if m.choices[ci].group not in free_groups:
                b.lo[v] = b.hi[v] = float(ci in fixed.offloads)
    # Assemble.
    rows, cols, vals, lows, highs = [], [], [], [], []
    for i, (coefs, lo, hi) in enumerate(b.rows):
        for v, c in coefs.items():
            if c:
                rows.append(i)
                cols.append(v)
                vals.append(c)
        lows.append(lo)
        highs.append(hi)
    nv = len(b.cost)
    A = coo_array((vals, (rows, cols)), shape=(len(b.rows), nv)).tocsr()
    t0 = time.perf_counter()
    res = milp(np.array(b.cost), integrality=np.array(b.integer),
               bounds=Bounds(np.array(b.lo), np.array(b.hi)),
               constraints=LinearConstraint(A, np.array(lows),
                                            np.array(highs)),
               options={"time_limit": time_limit, "mip_rel_gap": mip_rel_gap,
                        "disp": False})
    seconds = time.perf_counter() - t0
    status = {0: "optimal", 1: "time limit", 2: "infeasible",
              3: "unbounded", 4: "other"}.get(res.status, str(res.status))
    if res.x is None:
        return MilpResult(status, None, None, None, None, seconds, nv,
                          len(b.rows))
    x = res.x
    plan = Plan(frozenset(s for s, v in r.items() if x[v] > 0.5),
                tuple(ci for ci, v in z.items() if x[v] > 0.5))
    bound = getattr(res, "mip_dual_bound", None)
    gap = getattr(res, "mip_gap", None)
    if bound is not None:
        bound /= MS
    return MilpResult(status, plan, float(res.fun) / MS, bound, gap, seconds,
                      nv, len(b.rows))
