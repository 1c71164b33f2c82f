"""Rebuild the two ONNX models of ``netghost.governance.onnx`` and their cards, reproducibly.

    .venv/bin/python training/train.py [--out DIR] [--only command_risk|injection_screen]

Fixed seeds, scikit-learn logistic regression (liblinear: a deterministic solver), exported with
skl2onnx (probabilities as a plain tensor, no ZipMap), the threshold and the vocabulary written into
the model's ``metadata_props`` so the file's SHA-256 covers them. The threshold is chosen on the
validation split: the lowest score at which at most 0.5% of the validation
benign rows would be flagged (a margin under the 1% budget for the test split). Test-split figures go on the card; the bench
(``bench/onnx_bench.py``) prints them again from the shipped file.
"""



from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import skl2onnx
import sklearn
from skl2onnx import convert_sklearn
from skl2onnx.common.data_types import FloatTensorType
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))

import command_data
import text_data

from netghost.governance.onnx import argv_digest, command_vector, models_dir, text_chunks, text_vector
from netghost.governance.onnx._features import COMMAND_BITS, command_key, command_options

FEATURES_VERSION = 2  # 2: lexicon words at word boundaries (issue 28)
REVIEWED = frozenset({"commands_dev", "issue16", "issue28", "safe_probes", "tier1-match", "az-example", "tests"})
BENIGN_BUDGET_VAL = 0.005
COMMAND_BUDGET_VAL = 0.005  # half the 1% budget: a margin for the test split
TARGET_OPSET = 17


def _threshold(benign_scores: np.ndarray, budget: float) -> float:
    """The lowest threshold (rounded up to 1e-4) that flags at most ``budget`` of ``benign_scores``."""
    ordered = np.sort(benign_scores)[::-1]
    allowed = int(np.floor(budget * len(ordered)))
    cut = float(ordered[allowed]) if allowed < len(ordered) else 0.0
    return float(np.ceil((cut + 1e-6) * 10_000) / 10_000)


def _export(model: LogisticRegression, dim: int, meta: dict[str, Any]) -> bytes:
    onx = convert_sklearn(model, initial_types=[("input", FloatTensorType([None, dim]))],
                          options={id(model): {"zipmap": False}}, target_opset={"": TARGET_OPSET, "ai.onnx.ml": 3})
    for key, value in sorted(meta.items()):
        prop = onx.metadata_props.add()
        prop.key = key
        prop.value = json.dumps(value, sort_keys=True, separators=(",", ":"))
    onx.graph.name = str(meta["name"])  # skl2onnx names the graph with a random UUID
    onx.producer_name = "netghost training/train.py"
    onx.producer_version = f"skl2onnx {skl2onnx.__version__}"
    return onx.SerializeToString(deterministic=True)


def _versions() -> dict[str, str]:
    return {"scikit-learn": sklearn.__version__, "skl2onnx": skl2onnx.__version__, "onnx": onnx.__version__,
            "numpy": np.__version__}


# ---- command risk --------------------------------------------------------------------------------


def _command_matrix(rows: list[dict[str, Any]], pairs: Counter[str], keys: Counter[str], *,
                    leave_one_out: bool) -> np.ndarray:
    size = 1 << COMMAND_BITS
    out = np.vstack([command_vector(r["argv"], pairs, keys) for r in rows])
    if leave_one_out:  # a benign training row must not count as its own evidence that its options are usual
        for i, r in enumerate(rows):
            if r["label"]:
                continue
            key = command_key(r["argv"])
            novel = sum(1 for o in set(command_options(r["argv"])) if pairs[f"{key}|{o}"] <= 1)
            out[i, size + 2] = min(novel, 3) / 3.0
            out[i, size + 3] = 0.0 if keys[key] > 1 else 1.0
    return out


def train_command(out_dir: Path) -> dict[str, Any]:
    rows = command_data.build_rows()
    split = {s: [r for r in rows if r["split"] == s] for s in ("train", "val", "test")}
    pairs: Counter[str] = Counter()
    keys: Counter[str] = Counter()
    for r in split["train"]:
        if not r["label"]:
            key = command_key(r["argv"])
            keys[key] += 1
            pairs.update(f"{key}|{o}" for o in set(command_options(r["argv"])))
    x_train = _command_matrix(split["train"], pairs, keys, leave_one_out=True)
    y_train = np.array([r["label"] for r in split["train"]])
    x_val = _command_matrix(split["val"], pairs, keys, leave_one_out=False)
    y_val = np.array([r["label"] for r in split["val"]])
    gap_val = np.array([bool(r["label"] and r["old_tiers_safe"]) for r in split["val"]])
    best: tuple[float, float, float, LogisticRegression] | None = None
    for c in (0.3, 1.0, 3.0, 10.0):
        model = LogisticRegression(C=c, class_weight="balanced", solver="liblinear", max_iter=5000, random_state=17)
        model.fit(x_train, y_train)
        scores = model.predict_proba(x_val)[:, 1]
        thr = _threshold(scores[y_val == 0], COMMAND_BUDGET_VAL)
        gap_recall = float((scores[gap_val] >= thr).mean()) if gap_val.any() else 0.0
        recall = float((scores[y_val == 1] >= thr).mean())
        print(f"command_risk C={c}: val threshold {thr:.4f} gap recall {gap_recall:.3f} risky recall {recall:.3f}")
        if best is None or (gap_recall, recall) > (best[0], best[1]):
            best = (gap_recall, recall, c, model)
    assert best is not None
    _, _, c, model = best
    scores_val = model.predict_proba(x_val)[:, 1]
    threshold = _threshold(scores_val[y_val == 0], COMMAND_BUDGET_VAL)
    benign_pairs = sorted(p for p in pairs)
    known_keys = sorted(keys)
    reviewed = sorted({argv_digest(r["argv"]) for r in rows if not r["label"] and r["source"].split(":")[0] in REVIEWED})
    meta = {"name": "command_risk", "threshold": threshold, "features_version": FEATURES_VERSION,
            "benign_pairs": benign_pairs, "known_keys": known_keys, "reviewed_safe": reviewed}
    data = _export(model, x_train.shape[1], meta)
    metrics = {s: _command_metrics(model, split[s], pairs, keys, threshold) for s in ("val", "test")}
    card = {
        "name": "command_risk",
        "file": "command_risk.onnx",
        "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "threshold": threshold,
        "purpose": "A second opinion on commands the deterministic tiers call SAFE: at or above the threshold "
                   "the verdict becomes RISKY (a human decides). It never lowers a verdict.",
        "model": {"type": "sklearn LogisticRegression (liblinear, class_weight=balanced)", "C": c,
                  "inputs": f"float32[N, {x_train.shape[1]}]", "output": "probabilities[N, 2] (column 1: risky)"},
        "features": {
            "version": FEATURES_VERSION,
            "hashed": f"{1 << COMMAND_BITS} CRC-32 buckets of argv tokens: command key (az + command words, or the "
                      "program), option names and option x key, value shapes (@file, URL/scheme, paths, .., IP, "
                      "glob, length) alone and x key and x option, credential/escape lexicon words alone and x key",
            "numeric": ["log1p(argc)", "log1p(longest argument)/4", "options never seen on a benign read of the "
                        "command (0..3)/3", "command key never seen on a benign read"],
            "vocabulary": f"{len(benign_pairs)} benign key|option pairs, {len(known_keys)} command keys "
                          "(from the train split's benign rows; in the model's metadata)",
        },
        "training_data": {
            "builder": "training/command_data.py",
            "sources": dict(sorted(Counter(str(r["source"]).split(":")[0] for r in rows).items())),
            "rows": dict(sorted(Counter(f"{r['split']}:{'risky' if r['label'] else 'benign'}" for r in rows).items())),
            "split": "60/20/20 by a CRC-32 of the row's group (command key + option and value shapes)",
            "old_tiers": f"risky rows the tiers at commit {command_data.OLD_TIERS_COMMIT} (before the issue-16 "
                         "red-team pass) called SAFE are counted as 'gap' rows",
        },
        "threshold_rule": f"lowest score flagging at most {COMMAND_BUDGET_VAL:.1%} of the validation split's benign rows",
        "metrics": metrics,
        "seed": command_data.SEED,
        "versions": _versions(),
    }
    _write(out_dir, "command_risk", data, card)
    return card


def _command_metrics(model: LogisticRegression, rows: list[dict[str, Any]], pairs: Counter[str],
                     keys: Counter[str], threshold: float) -> dict[str, Any]:
    x = _command_matrix(rows, pairs, keys, leave_one_out=False)
    flagged = model.predict_proba(x)[:, 1] >= threshold
    y = np.array([r["label"] for r in rows])
    gap = np.array([bool(r["label"] and r["old_tiers_safe"]) for r in rows])
    today = np.array([bool(r["label"] and r["tiers_safe"]) for r in rows])
    return {
        "benign_rows": int((y == 0).sum()), "benign_flagged_rate": round(float(flagged[y == 0].mean()), 4),
        "risky_rows": int((y == 1).sum()), "risky_recall": round(float(flagged[y == 1].mean()), 4),
        "gap_rows": int(gap.sum()), "gap_recall": round(float(flagged[gap].mean()), 4) if gap.any() else None,
        "today_gap_rows": int(today.sum()),
    }


# ---- injection screen ----------------------------------------------------------------------------


def _chunk_rows(rows: list[dict[str, Any]]) -> tuple[list[str], list[int]]:
    chunks: list[str] = []
    labels: list[int] = []
    for r in rows:
        for chunk in text_chunks(r["text"]):
            chunks.append(chunk)
            labels.append(int(bool(r["label"]) and r["note"][:40] in chunk))
    return chunks, labels


def _doc_scores(model: LogisticRegression, rows: list[dict[str, Any]]) -> np.ndarray:
    out = []
    for r in rows:
        chunks = text_chunks(r["text"])
        out.append(float(model.predict_proba(text_vector(chunks))[:, 1].max()))
    return np.array(out)


def train_screen(out_dir: Path) -> dict[str, Any]:
    rows = text_data.build_rows()
    split = {s: [r for r in rows if r["split"] == s] for s in ("train", "val", "test")}
    chunks, labels = _chunk_rows(split["train"])
    x_train = text_vector(chunks)
    y_train = np.array(labels)
    y_val = np.array([r["label"] for r in split["val"]])
    best: tuple[float, float, LogisticRegression] | None = None
    for c in (0.3, 1.0, 3.0, 10.0):
        model = LogisticRegression(C=c, class_weight="balanced", solver="liblinear", max_iter=5000, random_state=17)
        model.fit(x_train, y_train)
        scores = _doc_scores(model, split["val"])
        thr = _threshold(scores[y_val == 0], BENIGN_BUDGET_VAL)
        recall = float((scores[y_val == 1] >= thr).mean())
        print(f"injection_screen C={c}: val threshold {thr:.4f} recall {recall:.3f}")
        if best is None or recall > best[0]:
            best = (recall, c, model)
    assert best is not None
    _, c, model = best
    threshold = _threshold(_doc_scores(model, split["val"])[y_val == 0], BENIGN_BUDGET_VAL)
    meta = {"name": "injection_screen", "threshold": threshold, "features_version": FEATURES_VERSION}
    data = _export(model, x_train.shape[1], meta)
    metrics = {s: _screen_metrics(model, split[s], threshold) for s in ("val", "test")}
    card = {
        "name": "injection_screen",
        "file": "injection_screen.onnx",
        "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "threshold": threshold,
        "purpose": "Scores text about to reach the language model (tool outputs, tags, DNS TXT, payload summaries); "
                   "at or above the threshold the LLM gateway wraps the text and marks it untrusted. It decides "
                   "nothing else: the text still goes, no command runs or stops because of it.",
        "model": {"type": "sklearn LogisticRegression (liblinear, class_weight=balanced)", "C": c,
                  "inputs": f"float32[N, {x_train.shape[1]}] (one row per ~600-character window)",
                  "output": "probabilities[N, 2] (column 1: instructions); a text's score is its windows' maximum"},
        "features": {"version": FEATURES_VERSION,
                     "hashed": f"{x_train.shape[1]} CRC-32 buckets of lower-cased words and word bigrams, "
                               "log(1 + count), per overlapping window"},
        "training_data": {
            "builder": "training/text_data.py",
            "clean": "every lab scenario's az and probe outputs, the benign and (redacted) secret corpora, real "
                     "azure-cli transcripts; each also with a benign note planted (tags, TXT, HTTP, logs)",
            "injected": f"{sum(len(v) for v in text_data.FAMILIES.values())} templates in {len(text_data.FAMILIES)} "
                        f"families ({', '.join(sorted(text_data.FAMILIES))}) planted in the same carriers",
            "rows": dict(sorted(Counter(f"{r['split']}:{'injected' if r['label'] else 'clean'}" for r in rows).items())),
            "split": "templates and notes per family 3/1/1 (train/val/test); outputs by a CRC-32 of their source",
        },
        "threshold_rule": f"lowest score flagging at most {BENIGN_BUDGET_VAL:.1%} of the validation split's clean texts",
        "metrics": metrics,
        "seed": text_data.SEED,
        "versions": _versions(),
    }
    _write(out_dir, "injection_screen", data, card)
    return card


def _screen_metrics(model: LogisticRegression, rows: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    flagged = _doc_scores(model, rows) >= threshold
    y = np.array([r["label"] for r in rows])
    pure = np.array([r["family"] == "clean" for r in rows])
    return {"clean_rows": int((y == 0).sum()), "false_alarm_rate": round(float(flagged[y == 0].mean()), 4),
            "false_alarm_rate_no_note": round(float(flagged[pure].mean()), 4),
            "injected_rows": int((y == 1).sum()), "recall": round(float(flagged[y == 1].mean()), 4)}


def _write(out_dir: Path, name: str, data: bytes, card: dict[str, Any]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.onnx").write_bytes(data)
    (out_dir / f"{name}.card.json").write_text(json.dumps(card, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{name}: {len(data)} bytes, {card['sha256']}, threshold {card['threshold']}")
    print(json.dumps(card["metrics"], indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=models_dir())
    parser.add_argument("--only", choices=["command_risk", "injection_screen"])
    args = parser.parse_args()
    if args.only in (None, "command_risk"):
        train_command(args.out)
    if args.only in (None, "injection_screen"):
        train_screen(args.out)


if __name__ == "__main__":
    main()
