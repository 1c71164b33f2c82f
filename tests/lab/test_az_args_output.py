"""Argument parsing and output rendering, checked against the real help texts and knack's rules."""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from pathlib import Path

import pytest

from netghost.lab.az import REGISTRY, run_az
from netghost.lab.az._output import render, render_table, render_tsv

from .conftest import AZURE_DATA, Lab

HELP_DIR = AZURE_DATA / "help"


def _help_args(text: str) -> dict[str, tuple[str | None, bool]]:
    """{long: (short, required)} from a real ``--help`` text (all argument sections but Global)."""
    args: dict[str, tuple[str | None, bool]] = {}
    section = ""
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = line
            continue
        if section.startswith("Global") or "Arguments" not in section:
            continue
        m = re.match(r"^    (--[a-z0-9-]+)(?: (-[a-z]))?\s*(\[Required\])?(?: \[Preview\])?\s*:", line)
        if m:
            args[m.group(1)] = (m.group(2), bool(m.group(3)))
    return args


def _command_of(text: str) -> tuple[str, ...] | None:
    m = re.search(r"^Command\n    az ([a-z0-9\- ]+?) :", text.lstrip("\n"), re.M)
    return tuple(m.group(1).split()) if m else None


HELP_FILES = sorted(p for p in HELP_DIR.glob("*.txt") if (cmd := _command_of(p.read_text())) and cmd in REGISTRY)


def test_most_help_texts_map_to_simulated_commands() -> None:
    assert len(HELP_FILES) >= 24


@pytest.mark.parametrize("path", HELP_FILES, ids=lambda p: p.stem)
def test_declared_arguments_match_the_real_help(path: Path) -> None:
    text = path.read_text()
    words = _command_of(text)
    assert words is not None
    spec = REGISTRY[words].spec
    declared = {a.long: (a.short, a.required) for a in spec.all_args()}
    real = _help_args(text)
    extra = {a.long for a in spec.args} - set(real)
    assert not extra, f"{path.name}: the simulator accepts {sorted(extra)} which real az does not"
    for long, (short, required) in real.items():
        if long in ("--subscription",):
            continue
        assert long in declared, f"{path.name}: {long} missing from the simulator"
        assert declared[long] == (short, required), f"{path.name}: {long}"


def test_help_prints_the_real_text(lab: Lab) -> None:
    result = lab.az("network watcher packet-capture show --help")
    assert result.code == 0
    assert result.out == (HELP_DIR / "pc_show.txt").read_text().lstrip("\n")
    group = lab.az("network watcher")
    assert group.code == 0 and "packet-capture" in group.out


def test_usage_errors_exit_2(lab: Lab) -> None:
    missing = lab.az("network watcher test-ip-flow -g rg1 --vm web-vm-01")
    assert missing.code == 2
    assert missing.err.startswith("ERROR: the following arguments are required: --direction, --local, --protocol, "
                                  "--remote\n")
    assert "https://aka.ms/cli_ref" in missing.err
    bad_choice = lab.az("network watcher test-ip-flow -g rg1 --vm web-vm-01 --direction Sideways --protocol TCP "
                        "--local 10.1.1.4:443 --remote 1.2.3.4:5")
    assert bad_choice.code == 2 and "invalid choice: 'Sideways'" in bad_choice.err
    no_value = lab.az("vm show -g rg1 -n")
    assert no_value.code == 2 and "argument --name/-n: expected one argument" in no_value.err
    bad_query = lab.az("vm show -g rg1 -n web-vm-01 --query [[")
    assert bad_query.code == 2 and "--query" in bad_query.err
    unknown = lab.az("network nosuch list")
    assert unknown.code == 2 and unknown.err.startswith("ERROR: 'nosuch' is misspelled or not recognized")
    bad_output = lab.az("vm show -g rg1 -n web-vm-01 -o xml")
    assert bad_output.code == 2 and "invalid choice: 'xml'" in bad_output.err


def test_enum_values_are_case_insensitive(lab: Lab) -> None:
    result = lab.az("network watcher test-ip-flow -g rg1 --vm web-vm-01 --direction inbound --protocol tcp "
                    "--local 10.1.1.4:443 --remote 203.0.113.10:50000 -o tsv")
    assert result.out == "Deny\tsecurityRules/DenyWebInbound\n"


def test_equals_form_and_short_flags(lab: Lab) -> None:
    result = lab.az(["vm", "show", "--resource-group=rg1", "-n", "web-vm-01", "--query=location", "-o", "tsv"])
    assert result.out == "eastus\n"


def test_no_lab_state_means_not_logged_in(tmp_path: Path) -> None:
    code, out, err = run_az(["account", "show"], {"NETGHOST_LAB_STATE": str(tmp_path / "none")})
    assert (code, out, err) == (1, "", "ERROR: Please run 'az login' to setup account.\n")


def test_unknown_subscription(lab: Lab) -> None:
    result = lab.az("vm show -g rg1 -n web-vm-01 --subscription nope")
    assert result.code == 1 and "Subscription 'nope' not found" in result.err
    account = json.loads(lab.az("account show").out)
    assert account["id"] == "00000000-0000-0000-0000-000000000000" and account["isDefault"] is True


def test_tsv_rules_of_knack() -> None:
    assert render_tsv({"exists": True}) == "True\n"
    assert render_tsv(True) == "true\n"
    assert render_tsv([{"b": [1, 2], "a": {"x": 1}, "c": None}]) == "\t2\tNone\n"
    assert render_tsv(OrderedDict([("z", 1), ("a", 2)])) == "1\t2\n"
    assert render_tsv(["x", "y"]) == "x\ny\n"


def test_none_and_null_query_print_nothing() -> None:
    assert render({"a": 1}, "none") == ""
    assert render({"a": 1}, "json", "missing") == ""
    assert render(None, "json") == ""


def test_json_yaml_and_jsonc() -> None:
    assert render({"b": 1, "a": "é"}, "json") == '{\n  "a": "é",\n  "b": 1\n}\n'
    assert render({"a": 1}, "yaml") == "a: 1\n"
    coloured = render({"a": 1}, "jsonc")
    assert "\x1b[" in coloured and json.loads(re.sub(r"\x1b\[[0-9;]*m", "", coloured)) == {"a": 1}


def test_table_layout_like_tabulate_simple() -> None:
    text = render_table([{"Name": "web", "Priority": 200}, {"Name": "default-rule", "Priority": 65000}])
    assert text == ("Name          Priority\n"
                    "------------  ----------\n"
                    "web                  200\n"
                    "default-rule       65000\n")
    auto = render([{"name": "x", "id": "/i", "nested": {"a": 1}, "flag": True}], "table")
    assert auto.splitlines()[0].split() == ["Flag", "Name"]


def test_nic_effective_route_table_renders_with_the_transformer(lab: Lab) -> None:
    table = lab.az("network nic show-effective-route-table -g rg1 -n web-vm-01VMNic -o table")
    assert table.out.splitlines()[0] == "Source    State    Address Prefix    Next Hop Type     Next Hop IP"
    assert "User      Active   0.0.0.0/0         VirtualAppliance  10.0.100.4" in table.out.splitlines()
