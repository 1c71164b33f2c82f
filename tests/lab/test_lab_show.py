"""``ghost-agent lab show``: every world's NSG rules and route tables, readable at 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from netghost.agent.cli import main as ghost_main
from netghost.lab import load_world
from netghost.lab.world import scenario_names

SCENARIOS = Path(__file__).resolve().parents[2] / "src" / "netghost" / "lab" / "scenarios"


def _shown(name: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert ghost_main(["lab", "show", name]) == 0
    return capsys.readouterr().out.splitlines()


def _words(lines: list[str]) -> list[str]:
    return " ".join(lines).split()


@pytest.mark.parametrize("name", scenario_names())
def test_show_lists_every_rule_and_route_within_80_columns(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _shown(name, capsys)
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = " ".join(" ".join(lines).split())  # the wrapped lines joined again: a word broken in two would not be found
    spec = load_world(name).spec
    assert " ".join(spec.description.split()) in text  # wrapped between words, none cut
    for nsg in spec.nsgs:
        assert f"nsg {nsg.name} ({nsg.resource_group})" in text
        for rule in nsg.rules:
            assert any(f"{rule.priority}" == w for w in _words(lines)), (nsg.name, rule.name)
            assert f"({rule.name})" in text and rule.access in text
    for table in spec.route_tables:
        assert f"route table {table.name} ({table.resource_group})" in text
        for route in table.routes:
            hop = route.next_hop_type + (f" {route.next_hop_ip}" if route.next_hop_ip else "")
            assert f"{route.address_prefix} -> {hop} ({route.name})" in text
    assert not any(line.split()[0].rstrip(":") in ("fault", "faults", "answer") for line in lines if line.split())


def test_a_rule_line_says_direction_access_ports_and_prefixes(capsys: pytest.CaptureFixture[str]) -> None:
    """One rule of nsg-deny in full: a row holds priority, direction, access, protocol, then the flow."""
    spec = load_world("nsg-deny").spec
    rule = next(r for n in spec.nsgs for r in n.rules if r.access == "Deny")
    row = next(line for line in _shown("nsg-deny", capsys) if line.endswith(f"({rule.name})"))
    cells = row.split()
    assert cells[:4] == [str(rule.priority), "in" if rule.direction == "Inbound" else "out", rule.access, rule.protocol]
    src = rule.source_address_prefix if isinstance(rule.source_address_prefix, str) else ",".join(rule.source_address_prefix)
    assert cells[4] == f"{src}:*" and cells[5] == "->"


def test_a_worlds_own_text_reaches_the_terminal_with_its_hidden_characters_shown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A world can come from anywhere on disk: an escape sequence in its text (a description that clears the
    screen or sets the window title) is printed as a visible escape, never sent to the terminal."""
    doc = yaml.safe_load((SCENARIOS / "nsg-deny.yaml").read_text(encoding="utf-8"))
    doc["description"] = "web tier\x1b[2J\x1b]0;owned\x07 down"
    world = tmp_path / "hostile.yaml"
    world.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert ghost_main(["lab", "show", str(world)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "web tier" in out and "down" in out
