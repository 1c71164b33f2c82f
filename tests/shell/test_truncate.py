"""Format-aware truncation: JSON stays JSON, tables keep their header, text keeps head and tail."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.shell.truncate import MAX_CHARS, MAX_LINES, detect_format, truncate


def test_small_output_is_untouched() -> None:
    text = "PING 10.0.0.4 56(84) bytes of data.\n64 bytes from 10.0.0.4: icmp_seq=1 ttl=64 time=0.04 ms\n"
    out = truncate(text)
    assert out.text == text
    assert not out.truncation_applied
    assert out.original_lines == out.shown_lines == 2
    assert out.format == "text"


def test_text_keeps_head_and_tail_with_marker() -> None:
    text = "\n".join(f"line {i}" for i in range(1000))
    out = truncate(text)
    assert out.truncation_applied
    assert out.format == "text"
    assert out.original_lines == 1000
    assert out.shown_lines == MAX_LINES
    lines = out.text.splitlines()
    assert lines[0] == "line 0"
    assert lines[-1] == "line 999"
    assert any("lines truncated" in line and "1000 lines in all" in line for line in lines)


def test_table_keeps_header_and_rule() -> None:
    header = "Name          ResourceGroup    Location    ProvisioningState"
    rule = "------------  ---------------  ----------  -------------------"
    rows = [f"nsg-{i:04d}      rg-net           westeurope  Succeeded" for i in range(500)]
    out = truncate("\n".join([header, rule, *rows]))
    assert out.format == "table"
    lines = out.text.splitlines()
    assert lines[:2] == [header, rule]
    assert lines[2].startswith("nsg-0000")
    assert lines[-1].startswith("nsg-0499")
    assert any("rows truncated" in line for line in lines)
    assert out.shown_lines <= MAX_LINES


def test_ss_output_is_a_table() -> None:
    text = "State  Recv-Q Send-Q  Local Address:Port  Peer Address:Port\n" + "\n".join(
        f"ESTAB  0      0       10.0.1.4:{1000 + i}   10.0.2.5:443" for i in range(5)
    )
    assert detect_format(text) == "table"


def test_json_list_is_cut_with_marker_and_parses() -> None:
    doc = [{"name": f"rule-{i}", "priority": 100 + i, "access": "Allow"} for i in range(300)]
    out = truncate(json.dumps(doc, indent=2))
    assert out.format == "json"
    assert out.truncation_applied
    parsed = json.loads(out.text)
    assert parsed[0]["name"] == "rule-0"
    assert isinstance(parsed[-1], str) and "more items of 300" in parsed[-1]
    assert out.shown_lines <= MAX_LINES
    assert out.original_lines == len(json.dumps(doc, indent=2).splitlines())


def test_long_lines_respect_the_token_budget() -> None:
    text = "\n".join("x" * 5000 for _ in range(50))
    out = truncate(text)
    assert len(out.text) <= MAX_CHARS
    assert out.truncation_applied


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=200),
    lambda children: (
        st.lists(children, max_size=40) | st.dictionaries(st.text(max_size=8), children, max_size=30)
    ),
    max_leaves=150,
)


@settings(max_examples=150, deadline=None)
@given(json_values, st.integers(min_value=5, max_value=200), st.integers(min_value=50, max_value=4000))
def test_truncated_json_always_parses(value: object, max_lines: int, max_tokens: int) -> None:
    text = json.dumps(value, indent=2)
    out = truncate(text, max_lines=max_lines, max_tokens=max_tokens)
    json.loads(out.text)
    if out.truncation_applied:
        assert out.format == "json" or not text.strip().startswith(("{", "[", '"'))
        assert out.shown_lines == len(out.text.splitlines())


@pytest.mark.parametrize("depth", [199, 201, 5_000, 200_000])
def test_any_nesting_depth_never_fails(depth: int) -> None:
    text = "[" * depth + "]" * depth
    out = truncate(text, max_lines=5, max_tokens=50)
    assert out.text and out.format in ("json", "text")
    assert out.truncation_applied == (len(text) > 200)
    if out.format == "json":
        json.loads(out.text)


def test_deep_json_inside_strings_does_not_count_as_depth() -> None:
    text = json.dumps({"s": "[" * 5_000, "items": list(range(500))})
    out = truncate(text)
    assert out.format == "json" and json.loads(out.text)["s"].startswith("[[[")


def test_arm_ids_survive_whole_when_a_json_document_is_shrunk() -> None:
    vms = [{"id": f"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/prod-rg/providers/"
                  f"Microsoft.Compute/virtualMachines/web-vm-{i:02d}",
            "name": f"web-vm-{i:02d}", "osProfile": {"customData": "x" * 400, "notes": ["y" * 300] * 10}}
           for i in range(6)]
    out = truncate(json.dumps(vms, indent=2))
    assert out.truncation_applied
    shown = json.loads(out.text)
    ids = [vm["id"] for vm in shown if isinstance(vm, dict) and "id" in vm]
    assert ids and all(i == vms[n]["id"] for n, i in enumerate(ids))  # whole, not "virtualMachines/w...[truncated"
    assert "x" * 400 not in out.text  # other long strings are still cut
