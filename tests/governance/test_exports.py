"""The public face of netghost.governance: ``__all__`` is complete, sorted and importable."""

from __future__ import annotations

import importlib
import pkgutil

from netghost import governance


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical."""
    if name.isupper() or (name.upper() == name and "_" in name):
        return (0, name)
    return (1, name) if name[0].isupper() else (2, name)


def test_all_is_sorted_and_unique() -> None:
    assert governance.__all__ == sorted(set(governance.__all__), key=_isort_key)


def test_every_exported_name_resolves() -> None:
    for name in governance.__all__:
        assert getattr(governance, name) is not None, name


def test_all_is_complete() -> None:
    """The core names of each submodule are exported (RUF022 order everywhere)."""
    public_modules = {"approval", "artifacts", "plan_token", "policy", "provisional", "session_seal", "trail",
                      "transitions", "wal", "workflow", "workspace"}
    found = {m.name for m in pkgutil.iter_modules(governance.__path__)}
    assert public_modules | {"audit_cli", "_anchor", "onnx"} == found
    exported = set(governance.__all__)
    core = {
        "wal": {"WalWriter", "read_wal", "verify", "replay_latest", "ChainBreak", "VerifyReport", "WalIssue",
                "WalReadResult"},
        "plan_token": {"canonical_json", "sha256_tagged", "compute_plan_token", "verify_plan_token"},
        "approval": {"ApprovalRequest", "ApprovalResponse", "ApprovalMismatchError", "build_approval_request",
                     "check_response"},
        "workflow": {"Workflow", "TRANSITIONS", "step", "replay_workflows", "WorkflowTransitionError"},
        "provisional": {"write_provisional", "recover_provisional", "read_provisional", "pending_record",
                        "ProvisionalRejection"},
        "session_seal": {"seal_session", "check_session_seal"},
        "trail": {"check_trail", "check_trails", "TrailReport", "TrailProblem"},
        "onnx": {"CommandRiskStage", "InjectionScreen", "LearnedDecision", "ScreenResult", "command_risk_stage",
                 "injection_screen"},
    }
    for mod, names in core.items():
        module = importlib.import_module(f"netghost.governance.{mod}")
        assert names <= set(module.__all__), mod
        assert names <= exported, mod


def test_submodule_all_lists_are_sorted() -> None:
    for m in pkgutil.iter_modules(governance.__path__):
        module = importlib.import_module(f"netghost.governance.{m.name}")
        names = list(module.__all__)
        assert names == sorted(names, key=_isort_key), m.name
        for name in names:
            assert hasattr(module, name), (m.name, name)


def test_unknown_attribute_raises() -> None:
    try:
        governance.does_not_exist  # noqa: B018
    except AttributeError:
        return
    raise AssertionError("expected AttributeError")
