"""Compare mode over the real corpus: a capture against itself matches every IP packet (duplicates,
fragments, IPv6, VLAN, SLL2, NFLOG ... included), and unrelated captures compare without error."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from netghost.forensics.compare import compare_analyses, load_compare_schema
from netghost.forensics.engine import Analysis, analyze_capture

PCAPS = Path(__file__).resolve().parent.parent / "data" / "pcaps"
FILES = sorted(p for p in PCAPS.iterdir() if p.suffix in (".pcap", ".pcapng", ".cap", ".gz"))


@pytest.fixture(scope="module")
def analyses() -> dict[str, Analysis]:
    return {p.name: analyze_capture(p) for p in FILES}


@pytest.mark.parametrize("name", [p.name for p in FILES])
def test_self_comparison_matches_everything(name: str, analyses: dict[str, Analysis]) -> None:
    an = analyses[name]
    comp = compare_analyses(an, an)
    jsonschema.validate(comp, load_compare_schema())
    assert comp["matched_packets"] == comp["points"]["a"]["ip_packets"]
    for key in ("lost", "injected", "blocked", "unmatched"):
        assert all(v["count"] == 0 for v in comp[key].values()), key
    if comp["matched_packets"]:
        assert comp["clock_offset_ms"] in (0.0, None)
        assert comp["modified"]["ttl"]["hops"] == {"0": comp["matched_packets"]}


def test_unrelated_captures_compare_cleanly(analyses: dict[str, Analysis]) -> None:
    names = [p.name for p in FILES]
    for x, y in zip(names, names[1:] + names[:1], strict=True):
        comp = compare_analyses(analyses[x], analyses[y])
        jsonschema.validate(comp, load_compare_schema())
        total_a = sum(v["count"] for v in (comp["lost"]["a_to_b"], comp["injected"]["at_a"], comp["blocked"]["at_b"],
                                            comp["unmatched"]["a"]))
        assert total_a + comp["matched_packets"] == comp["points"]["a"]["ip_packets"], (x, y)
