"""The ONNX preflight stages on their held-out test split (issue 17), scored with the shipped files.

Prints, for the command risk model: the share of risky commands the tiers call SAFE that the model
sends to a human (for the tiers before the issue-16 red-team pass, whose misses are the forms a rule
table had never seen, and for today's tiers), the benign false-alarm rate (the model alone, and as
``classify()`` applies it, with the reviewed-SAFE list), and the cost of one decision. For the
injection screen: recall on lab outputs with planted instructions and false alarms on clean ones (with
and without a benign note planted where an attacker would plant one), per family, and the cost per text.

The splits are rebuilt by ``training/`` (deterministic; the old tiers are run from git history).

Run: ``.venv/bin/python bench/onnx_bench.py``
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training"))

import command_data  # noqa: E402
import text_data  # noqa: E402

from netghost.governance import CommandRiskStage, InjectionScreen  # noqa: E402


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100.0 * part / whole:.1f}%" if whole else "0/0 (none)"


def _p(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(len(s) * q))]


def bench_command() -> None:
    stage = CommandRiskStage.load()
    assert stage.model is not None, stage.failure
    rows = [r for r in command_data.build_rows() if r["split"] == "test"]
    scored = [(r, stage.score(r["argv"]) >= stage.model.threshold, stage.decide(r["argv"]).outcome)  # type: ignore[arg-type]
              for r in rows]
    benign = [(m, d) for r, m, d in scored if not r["label"]]
    risky = [(r, m) for r, m, _ in scored if r["label"]]
    old_gap = [m for r, m in risky if r["old_tiers_safe"]]
    today_gap = [m for r, m in risky if r["tiers_safe"]]
    print(f"command risk model {stage.policy_hash} threshold {stage.model.threshold}")
    print(f"  test split: {len(benign)} benign, {len(risky)} risky (NOT_SAFE or FORBIDDEN) commands")
    print(f"  risky the tiers before issue 16 called SAFE, sent to a human: {_pct(sum(old_gap), len(old_gap))}")
    print(f"  risky today's tiers call SAFE, sent to a human:               {_pct(sum(today_gap), len(today_gap))}")
    print(f"  all risky commands the model alone would flag:                {_pct(sum(m for _, m in risky), len(risky))}")
    print(f"  benign false alarms, model alone (goal <= 1%):                {_pct(sum(m for m, _ in benign), len(benign))}")
    print(f"  benign asking a human as classify() applies it:               "
          f"{_pct(sum(d != 'allow' for _, d in benign), len(benign))}")
    missed = Counter(str(r["source"]) for r, m in risky if r["old_tiers_safe"] and not m)
    print(f"  old-tier gaps missed, by corpus class: {dict(missed)}")
    argvs = [r["argv"] for r in rows]
    times: list[float] = []
    for _ in range(5):
        for argv in argvs:
            t0 = time.perf_counter_ns()
            stage.score(argv)  # type: ignore[arg-type]
            times.append((time.perf_counter_ns() - t0) / 1000.0)
    print(f"  one decision: p50 {_p(times, 0.5):.1f} us, p99 {_p(times, 0.99):.1f} us over {len(times)} calls")


def bench_screen() -> None:
    screen = InjectionScreen.load()
    assert screen.model is not None, screen.failure
    rows = [r for r in text_data.build_rows() if r["split"] == "test"]
    t0 = time.perf_counter()
    results = screen.screen_many([str(r["text"]) for r in rows])
    elapsed_ms = (time.perf_counter() - t0) * 1000.0
    injected = [(r, res.flagged) for r, res in zip(rows, results, strict=True) if r["label"]]
    noted = [res.flagged for r, res in zip(rows, results, strict=True) if not r["label"] and r["family"] != "clean"]
    clean = [res.flagged for r, res in zip(rows, results, strict=True) if r["family"] == "clean"]
    print(f"\ninjection screen {screen.policy_hash} threshold {screen.model.threshold}")
    print("  test split: lab-like outputs, phrasings and notes never trained on")
    print(f"  recall on outputs with a planted instruction: {_pct(sum(f for _, f in injected), len(injected))}")
    print(f"  false alarms on clean outputs:                {_pct(sum(clean), len(clean))}")
    print(f"  false alarms on outputs with a benign note:   {_pct(sum(noted), len(noted))}")
    per = Counter(str(r["family"]) for r, _ in injected)
    hit = Counter(str(r["family"]) for r, f in injected if f)
    print("  recall per family: " + ", ".join(f"{k} {hit[k]}/{per[k]}" for k in sorted(per)))
    sizes = [len(str(r["text"])) for r in rows]
    print(f"  {len(rows)} texts (median {statistics.median(sizes):.0f} chars) in {elapsed_ms:.0f} ms: "
          f"{1000.0 * elapsed_ms / len(rows):.0f} us per text")


if __name__ == "__main__":
    bench_command()
    bench_screen()
