"""``netghost.contracts.__all__`` is complete and sorted (httpx ``tests/test_exported_members.py``)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from pydantic import BaseModel

from netghost import contracts

# Submodules whose public names are not models: the schema export CLI.
_NOT_REEXPORTED = {"export"}


def _submodules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.iter_modules(contracts.__path__)
        if not info.name.startswith("_") and info.name not in _NOT_REEXPORTED
    )


def _isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 enforces: CONSTANTS, then Classes, then functions."""
    group = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return (group, name)


def test_all_is_sorted_and_unique() -> None:
    names = contracts.__all__
    assert len(names) == len(set(names)), "netghost.contracts.__all__ has duplicates"
    assert names == sorted(names, key=_isort_key), "sort netghost.contracts.__all__ (ruff RUF022 order)"


def test_all_names_resolve() -> None:
    for name in contracts.__all__:
        assert hasattr(contracts, name), f"{name} is in __all__ but not importable"


def test_all_reexports_every_submodule_public_name() -> None:
    expected: set[str] = set()
    for module_name in _submodules():
        module = importlib.import_module(f"netghost.contracts.{module_name}")
        names = getattr(module, "__all__", None)
        assert names is not None, f"netghost.contracts.{module_name} has no __all__"
        assert list(names) == sorted(names, key=_isort_key), f"sort __all__ of {module_name}"
        expected.update(names)
    missing = sorted(expected - set(contracts.__all__))
    unexpected = sorted(set(contracts.__all__) - expected)
    assert not missing, f"add to netghost.contracts.__all__ (and import): {missing}"
    assert not unexpected, f"not public in any submodule: {unexpected}"


def test_every_public_model_class_is_exported() -> None:
    for module_name in _submodules():
        module = importlib.import_module(f"netghost.contracts.{module_name}")
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseModel)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
            ):
                assert name in contracts.__all__, f"{module_name}.{name} is a public model but not exported"
