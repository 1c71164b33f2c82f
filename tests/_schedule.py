"""The order of the test list: each xdist worker's first block starts with its share of the slow modules.

Why: ``make test`` runs ``-n 3 --dist worksteal``. worksteal hands each worker one contiguous block of the
list at the start (the first a third of it, the next half of the rest, the last what remains); an idle
worker later steals the *end* of the longest queue. So a block's head stays with its worker, and a slow
test placed late in the list starts late: the catalogue regeneration (about 160 s) once began 16 minutes
into a 19-minute run and ended it alone.

Here every module that holds a slow test (``@pytest.mark.slow``) is a unit, with all its tests in their
order: the units are dealt to the blocks' heads, the heaviest first, each to the block with the least
expected work so far (counting the rest of that block too); every other test keeps its collection order.
Whole modules, not single tests, because a module's module-scoped fixtures (a lab served as Azure, an
in-process azure-cli, a browser's pages) are built once per worker that runs any of its tests: dealing
the slow tests one by one built them three times and cost more than it won (a measured run: 1190 s of
tests against 1141 s).

Expected durations come from ``tests/data/test_durations.json``, a measured run's seconds per test (rewrite
it with ``pytest -n 3 --store-durations``); a slow test not in it counts as ``UNKNOWN_SLOW_S``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

DURATIONS = Path(__file__).resolve().parent / "data" / "test_durations.json"
UNKNOWN_SLOW_S = 10.0
"""The expected seconds of a slow test the durations file does not know yet (a new one)."""
KEPT_S = 0.5
"""``--store-durations`` keeps tests at least this long: the rest weigh nothing in the order."""
# A store from a run of a few files updates those tests and keeps the others' seconds.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--store-durations", action="store_true",
                     help=f"write each test's seconds (setup, call and teardown) to {DURATIONS.name}")


def expected_durations() -> dict[str, float]:
    """Seconds per test id of the last stored run ({} without the file)."""
    try:
        data = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def worksteal_block_sizes(n: int, workers: int) -> list[int]:
    """How many tests each worker's first block holds: xdist's worksteal gives each idle node, in turn,
    ``len(pending) // nodes_remaining`` of what is still pending."""
    sizes, left = [], n
    for remaining in range(workers, 0, -1):
        sizes.append(left // remaining)
        left -= sizes[-1]
    return sizes


def _module(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def dealt_order(ids: list[str], slow: list[bool], seconds: dict[str, float], workers: int) -> list[int]:
    """The indices of ``ids`` in run order: the modules holding a slow test dealt to the heads of ``workers``
    blocks, heaviest first, each to the block with the least expected seconds; the other tests in their
    order after them."""
    weight = [seconds.get(ids[i], UNKNOWN_SLOW_S if slow[i] else 0.0) for i in range(len(ids))]
    slow_modules = {_module(ids[i]) for i in range(len(ids)) if slow[i]}
    units: dict[str, list[int]] = {}
    rest: list[int] = []
    for i, test_id in enumerate(ids):
        (units.setdefault(_module(test_id), []) if _module(test_id) in slow_modules else rest).append(i)
    ranked = sorted(units.values(), key=lambda unit: -sum(weight[i] for i in unit))  # stable for ties
    if workers <= 1 or not ranked:
        return [i for unit in ranked for i in unit] + rest
    sizes = worksteal_block_sizes(len(ids), workers)
    share = sum(len(unit) for unit in ranked) // workers  # a first guess of each head's size, to weigh the rest
    start, load = 0, []
    for size in sizes:
        part = rest[start:start + max(size - share, 0)]
        load.append(sum(weight[i] for i in part))
        start += len(part)
    heads: list[list[int]] = [[] for _ in sizes]
    for unit in ranked:
        fits = [b for b in range(workers) if len(heads[b]) + len(unit) <= sizes[b]] or list(range(workers))
        b = min(fits, key=lambda j: load[j])
        heads[b] += unit
        load[b] += sum(weight[i] for i in unit)
    order, start = [], 0
    for b, size in enumerate(sizes):
        tail = rest[start:start + max(size - len(heads[b]), 0)]
        start += len(tail)
        order += heads[b] + tail
    return order + rest[start:]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Reorder ``items`` as :func:`dealt_order` says (the same in every worker: same list, same file)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    ids = [item.nodeid for item in items]
    slow = [item.get_closest_marker("slow") is not None for item in items]
    items[:] = [items[i] for i in dealt_order(ids, slow, expected_durations(), workers)]


class _Recorder:
    """Sums each test's phase durations as reports arrive (in the controller under xdist)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        """Write the tests this run measured over the stored ones (a run of a few files keeps the others)."""
        seconds = {**expected_durations(), **{k: round(v, 1) for k, v in self.seconds.items()}}
        kept = {k: v for k, v in sorted(seconds.items()) if v >= KEPT_S}
        DURATIONS.write_text(json.dumps(kept, indent=0, sort_keys=True) + "\n", encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--store-durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Recorder(), "store-durations")
