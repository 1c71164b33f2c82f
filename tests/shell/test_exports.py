"""netghost.shell's public face: __all__ is complete, sorted and importable (httpx test_exported_members)."""

from __future__ import annotations

from netghost import shell


def test_all_is_sorted_and_complete() -> None:
    assert shell.__all__ == sorted(shell.__all__)
    public = {name for name in vars(shell) if not name.startswith("_") and not isinstance(getattr(shell, name), type(shell))}
    assert public == set(shell.__all__)
    assert set(shell.__all__) >= {
        "SafeExecShell", "HitlDecision", "classify", "Classification", "redact", "Redaction", "OrgPolicy",
        "load_org_policy", "terminal_hitl_callback",
    }


def test_seed_import_names() -> None:
    from netghost.shell import HitlDecision, SafeExecShell

    assert SafeExecShell.__module__ == "netghost.shell.shell"
    assert HitlDecision.approve().decision == "approve"
