"""The test list's order (tests/_schedule.py) matches how xdist's worksteal really hands out work."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from xdist.scheduler.worksteal import WorkStealingScheduling

from tests import _schedule
from tests._schedule import dealt_order, worksteal_block_sizes


class _Node:
    """A worker as the scheduler sees it: it only records the tests it is sent."""

    shutting_down = False

    def __init__(self, name: str) -> None:
        self.sent: list[int] = []
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        """Asked when the scheduler has nothing more for it (tiny lists)."""


def _first_blocks(n: int, workers: int) -> list[list[int]]:
    """What the real worksteal scheduler sends each of ``workers`` nodes at the start, for ``n`` tests."""
    sched = WorkStealingScheduling.__new__(WorkStealingScheduling)  # its __init__ reads -n from a config
    sched.numnodes, sched.node2collection, sched.node2pending = workers, {}, {}
    sched.pending, sched.collection, sched.steal_requested_from_node = [], None, None
    sched.log = lambda *_: None
    nodes = [_Node(f"gw{j}") for j in range(workers)]
    ids = [f"t{i}" for i in range(n)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, ids)
    sched.schedule()
    return [node.sent for node in nodes]


@pytest.mark.parametrize(("n", "workers"), [(5246, 3), (10, 3), (7, 2), (100, 4), (3, 3)])
def test_the_block_sizes_are_the_ones_worksteal_sends(n: int, workers: int) -> None:
    blocks = _first_blocks(n, workers)
    assert [len(b) for b in blocks] == worksteal_block_sizes(n, workers)
    assert [i for b in blocks for i in b] == list(range(n))  # contiguous blocks, in list order


def test_modules_with_slow_tests_head_the_blocks_whole_and_the_rest_keep_their_order() -> None:
    rng = random.Random(7)
    n, workers = 600, 3
    ids = [f"tests/m{i // 20}.py::t{i}" for i in range(n)]
    slow = [rng.random() < 0.05 for _ in range(n)]
    seconds = {ids[i]: (rng.uniform(5, 200) if slow[i] else rng.uniform(0, 2)) for i in range(n)}
    order = dealt_order(ids, slow, seconds, workers)
    assert sorted(order) == list(range(n))

    def module(i: int) -> str:
        return ids[i].split("::")[0]

    units = {module(i) for i in range(n) if slow[i]}
    weight = {u: sum(seconds[ids[i]] for i in range(n) if module(i) == u) for u in units}
    sizes = worksteal_block_sizes(n, workers)
    starts = [sum(sizes[:j]) for j in range(workers)]
    blocks = [order[a:a + size] for a, size in zip(starts, sizes, strict=True)]
    for block in blocks:
        k = sum(1 for i in block if module(i) in units)
        assert all(module(i) in units for i in block[:k]), "a block's slow modules come before its other tests"
        seen = [module(i) for i in block[:k]]
        assert all(seen[j] == seen[j - 1] or seen[j] not in seen[:j] for j in range(1, k)), "a module stays whole"
        assert [i for i in block[:k] if module(i) == seen[0]] == sorted(i for i in range(n) if module(i) == seen[0]) \
            if k else True, "a module keeps its own order"
    heaviest = max(units, key=weight.__getitem__)
    assert any(module(block[0]) == heaviest for block in blocks), "the heaviest module starts at once"
    loads = [sum(seconds[ids[i]] for i in block) for block in blocks]
    assert max(loads) - min(loads) <= max(weight.values()), loads  # no block holds much more expected work
    assert [i for i in order if module(i) not in units] == [i for i in range(n) if module(i) not in units]


def test_without_workers_the_slow_modules_simply_come_first() -> None:
    ids = ["a.py::1", "b.py::1", "c.py::1", "d.py::1", "d.py::2"]
    order = dealt_order(ids, [False, True, False, True, False], {"b.py::1": 1.0, "d.py::1": 9.0}, 1)
    assert order == [3, 4, 1, 0, 2]


def test_storing_durations_updates_the_tests_run_and_keeps_the_others(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    stored = tmp_path / "test_durations.json"
    stored.write_text(json.dumps({"a.py::kept": 3.0, "b.py::rerun": 9.0}))
    monkeypatch.setattr(_schedule, "DURATIONS", stored)
    recorder = _schedule._Recorder()
    for nodeid, seconds in (("b.py::rerun", 1.0), ("b.py::rerun", 1.5), ("c.py::new", 4.0), ("c.py::quick", 0.1)):
        recorder.pytest_runtest_logreport(pytest.TestReport(nodeid, ("c.py", 0, nodeid), {}, "passed", None, "call",
                                                            duration=seconds))
    recorder.pytest_sessionfinish()
    assert _schedule.expected_durations() == {"a.py::kept": 3.0, "b.py::rerun": 2.5, "c.py::new": 4.0}
