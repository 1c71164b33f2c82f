"""Isolated per-task workspaces (CabinCrew §3): a fresh root with ``artifacts/`` and ``tmp/``.

Each run gets its own directory so that no state leaks between runs: creating a workspace whose
root already holds anything is refused, and the temp directory is emptied between phases. Child
processes learn where to write through the ``CABINCREW_*`` variables, never through guesses.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from netghost.errors import WorkspaceError

__all__ = [
    "ARTIFACTS_DIRNAME",
    "ENV_ARTIFACTS_DIR",
    "ENV_MODE",
    "ENV_TEMP_DIR",
    "ENV_WORKSPACE",
    "MODES",
    "TEMP_DIRNAME",
    "CabinCrewMode",
    "Workspace",
    "WorkspaceError",
    "create_workspace",
    "open_workspace",
]

CabinCrewMode = Literal["flight-plan", "take-off"]
"""The two engine modes of §4, as passed in ``CABINCREW_MODE``."""

MODES: tuple[CabinCrewMode, ...] = ("flight-plan", "take-off")
ENV_WORKSPACE = "CABINCREW_WORKSPACE"
ENV_ARTIFACTS_DIR = "CABINCREW_ARTIFACTS_DIR"
ENV_TEMP_DIR = "CABINCREW_TEMP_DIR"
ENV_MODE = "CABINCREW_MODE"
ARTIFACTS_DIRNAME = "artifacts"
TEMP_DIRNAME = "tmp"

_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class Workspace:
    """A prepared workspace: ``root``, ``root/artifacts`` and ``root/tmp`` (all 0700)."""

    root: Path
    task_id: str

    @property
    def artifacts_dir(self) -> Path:
        """Where engines write artifacts (registered in ``root/artifact.json``)."""
        return self.root / ARTIFACTS_DIRNAME

    @property
    def temp_dir(self) -> Path:
        """Scratch space, emptied between phases."""
        return self.root / TEMP_DIRNAME

    def env(self, mode: CabinCrewMode) -> dict[str, str]:
        """The four ``CABINCREW_*`` variables for a child running in ``mode``.

        Raises:
            ValueError: ``mode`` is not ``flight-plan`` or ``take-off``.
        """
        if mode not in MODES:
            raise ValueError(f"unknown CabinCrew mode {mode!r}; expected one of {MODES}")
        return {
            ENV_WORKSPACE: str(self.root),
            ENV_ARTIFACTS_DIR: str(self.artifacts_dir),
            ENV_TEMP_DIR: str(self.temp_dir),
            ENV_MODE: mode,
        }

    def child_env(self, mode: CabinCrewMode, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: this process's environment) with the workspace variables set.

        Any ``CABINCREW_*`` variable inherited from ``base`` is dropped first so a child never
        sees another run's workspace. ``TMPDIR`` points at the workspace's temp directory.

        Raises:
            ValueError: unknown mode.
        """
        source = os.environ if base is None else base
        env = {k: v for k, v in source.items() if not k.startswith("CABINCREW_")}
        env.update(self.env(mode))
        env["TMPDIR"] = str(self.temp_dir)
        return env

    def fingerprint(self, *, include_artifacts: bool = True) -> str:
        """Hash of every path and file content of the workspace except ``tmp/`` (``sha256:...``).

        Taken before and after a flight-plan run with ``include_artifacts=False``, equal
        fingerprints prove the engine changed nothing but its outputs (§4.1: no workspace
        mutation); ``tmp/`` is always scratch.
        """
        skipped = {TEMP_DIRNAME} if include_artifacts else {TEMP_DIRNAME, ARTIFACTS_DIRNAME}
        digest = hashlib.sha256()
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if rel.parts[0] in skipped:
                continue
            if path.is_symlink():
                digest.update(f"L {rel.as_posix()} -> {os.readlink(path)}\n".encode())
            elif path.is_file():
                digest.update(f"F {rel.as_posix()} {path.stat().st_size}\n".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
            else:
                digest.update(f"D {rel.as_posix()}\n".encode())
        return "sha256:" + digest.hexdigest()

    def reset_temp(self) -> None:
        """Empty the temp directory (between flight-plan and take-off, and after a run)."""
        shutil.rmtree(self.temp_dir, ignore_errors=False)
        self.temp_dir.mkdir(mode=0o700)

    def remove(self) -> None:
        """Delete the whole workspace."""
        shutil.rmtree(self.root)


def _check_task_id(task_id: str) -> None:
    if not _TASK_ID.match(task_id):
        raise WorkspaceError(f"task id {task_id!r} is not a safe directory name", task_id=task_id)


def create_workspace(base_dir: str | os.PathLike[str], task_id: str) -> Workspace:
    """Create a fresh, isolated workspace ``base_dir/task_id`` with empty ``artifacts/`` and ``tmp/``.

    Args:
        base_dir: where workspaces live (created 0700 if missing).
        task_id: the run's id; letters, digits, ``.``, ``_`` and ``-`` only.

    Raises:
        WorkspaceError: the id is unsafe or the workspace already exists and is not empty.
    """
    _check_task_id(task_id)
    base = Path(base_dir)
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    root = base / task_id
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise WorkspaceError(f"workspace {root} already exists: refusing to reuse another run's state", path=root)
    root.mkdir(mode=0o700, exist_ok=True)
    for sub in (ARTIFACTS_DIRNAME, TEMP_DIRNAME):
        (root / sub).mkdir(mode=0o700)
    for path in (root, root / ARTIFACTS_DIRNAME, root / TEMP_DIRNAME):
        os.chmod(path, 0o700)
    return Workspace(root=root, task_id=task_id)


def open_workspace(base_dir: str | os.PathLike[str], task_id: str) -> Workspace:
    """Open an existing workspace (for take-off or after a restart).

    Raises:
        WorkspaceError: the id is unsafe or the directory is not a workspace.
    """
    _check_task_id(task_id)
    root = Path(base_dir) / task_id
    if not (root / ARTIFACTS_DIRNAME).is_dir() or not (root / TEMP_DIRNAME).is_dir():
        raise WorkspaceError(f"{root} is not a workspace (needs artifacts/ and tmp/)", path=root)
    return Workspace(root=root, task_id=task_id)
