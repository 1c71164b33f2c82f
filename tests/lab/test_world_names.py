"""A shipped world's name and a path are never confused, and answers are found beside any world."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from netghost.errors import LabError
from netghost.lab import answer_for, load_world, scenario_names, world_path
from netghost.lab.world import SCENARIO_DIR


def test_a_name_is_the_shipped_world_even_beside_a_folder_of_that_name(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "nsg-deny").mkdir()  # e.g. `--audit-dir nsg-deny`
    monkeypatch.chdir(tmp_path)
    assert load_world("nsg-deny").spec.name == "nsg-deny"
    assert world_path("nsg-deny") == SCENARIO_DIR / "nsg-deny.yaml"


def test_an_unknown_name_lists_the_shipped_worlds() -> None:
    with pytest.raises(LabError, match="unknown lab world 'nsg-dney'") as err:
        load_world("nsg-dney")
    assert all(name in str(err.value) for name in scenario_names())


def test_a_world_and_its_answers_anywhere_on_disk(tmp_path: Path) -> None:
    (tmp_path / "answers").mkdir()
    shutil.copy(SCENARIO_DIR / "nsg-deny.yaml", tmp_path / "my-world.yaml")
    (tmp_path / "answers" / "my-world.json").write_text(json.dumps({"fault_type": "nsg-deny"}))
    assert load_world(tmp_path / "my-world.yaml").spec.name == "nsg-deny"
    assert load_world(str(tmp_path / "my-world.yaml")).spec.name == "nsg-deny"
    assert answer_for(str(tmp_path / "my-world.yaml")) == {"fault_type": "nsg-deny"}
    assert answer_for("nsg-deny")["fault_type"] == "nsg-deny"  # type: ignore[index]
    shutil.copy(SCENARIO_DIR / "healthy.yaml", tmp_path / "no-answer.yaml")
    assert answer_for(tmp_path / "no-answer.yaml") is None


def test_every_shipped_world_names_its_symptom() -> None:
    for name in scenario_names():
        assert load_world(name).spec.symptom, name
