"""Loading a shipped ONNX model against its card: the hash is checked before a byte is parsed.

A model is two files in ``governance/onnx/models/``: ``NAME.onnx`` and its card ``NAME.card.json``
(training data, features, metrics, threshold, SHA-256). :func:`load_model` reads the model's bytes,
hashes them and refuses (``PolicyError``) when the hash is not the card's, when the card is missing or
malformed, or when the threshold and vocabulary inside the model (its ``metadata_props``, so the hash
covers them) disagree with the card. Callers turn that refusal into a fail-closed stage: a model that
is not the one reviewed never decides anything.

The ONNX Runtime session runs on one thread with no spinning: one row (a command) or a few rows (text
windows) per call, where thread hand-off would cost more than the arithmetic.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from netghost.errors import PolicyError

__all__ = ["LoadedModel", "load_model", "models_dir"]


def models_dir() -> Path:
    """The folder of the models shipped inside the package."""
    return Path(str(resources.files("netghost.governance.onnx").joinpath("models")))


@dataclass(frozen=True)
class LoadedModel:
    """A verified model: its session, its card, and what its metadata carries.

    Attributes:
        name: the model's name (``command_risk``, ``injection_screen``).
        sha256: ``"sha256:<hex>"`` of the ``.onnx`` file, equal to the card's.
        threshold: scores at or above it tighten (from the model's metadata, equal to the card's).
        card: the parsed model card.
        meta: the model's metadata (JSON-decoded values).
    """

    name: str
    sha256: str
    threshold: float
    card: dict[str, Any]
    meta: dict[str, Any]
    session: Any
    input_name: str
    output_name: str

    def scores(self, rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The positive-class probability of each row."""
        probs = self.session.run([self.output_name], {self.input_name: rows})[0]
        return np.asarray(probs, dtype=np.float32)[:, 1]


def _read_card(path: Path) -> dict[str, Any]:
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PolicyError(f"model card {path.name} is missing or unreadable: {exc}", path=path) from exc
    if not isinstance(card, dict) or not isinstance(card.get("sha256"), str):
        raise PolicyError(f"model card {path.name} names no sha256", path=path)
    return card


def load_model(name: str, directory: str | Path | None = None) -> LoadedModel:
    """Load ``NAME.onnx`` after checking it against ``NAME.card.json``.

    Args:
        name: the model's file stem.
        directory: where the two files are (the package's ``models/`` by default).

    Raises:
        PolicyError: the card is missing or malformed, the file's SHA-256 is not the card's, the model
            does not load, or its embedded threshold/metadata disagree with the card.
    """
    folder = Path(directory) if directory is not None else models_dir()
    model_path = folder / f"{name}.onnx"
    card = _read_card(folder / f"{name}.card.json")
    try:
        data = model_path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"model {model_path.name} cannot be read: {exc}", path=model_path) from exc
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != card["sha256"]:
        raise PolicyError(
            f"model {model_path.name} hashes to {digest}, its card says {card['sha256']}: refusing to load it",
            path=model_path, rule="model-hash",
        )  # fmt: skip
    import onnxruntime as ort  # noqa: PLC0415  ~0.1 s; paid only by the first decision that needs a model

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        session = ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped errors for a bad graph
        raise PolicyError(f"model {model_path.name} does not load: {exc}", path=model_path) from exc
    raw = session.get_modelmeta().custom_metadata_map
    try:
        meta = {k: json.loads(v) for k, v in raw.items()}
    except ValueError as exc:
        raise PolicyError(f"model {model_path.name} carries malformed metadata: {exc}", path=model_path) from exc
    threshold = meta.get("threshold")
    if not isinstance(threshold, float) or threshold != card.get("threshold"):
        raise PolicyError(
            f"model {model_path.name}: threshold {threshold!r} in the model, {card.get('threshold')!r} on the card",
            path=model_path, rule="model-threshold",
        )  # fmt: skip
    outputs = [o.name for o in session.get_outputs()]
    output = "probabilities" if "probabilities" in outputs else outputs[-1]
    return LoadedModel(
        name=name, sha256=digest, threshold=threshold, card=card, meta=meta, session=session,
        input_name=session.get_inputs()[0].name, output_name=output,
    )  # fmt: skip
