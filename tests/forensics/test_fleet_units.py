"""The fleet's pure parts, without a cluster: robust outliers (median/MAD), ranking, matching capture
points and their path order, SOURCE expansion, and the fleet document against its schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from netghost.errors import CaptureFormatError
from netghost.forensics.fleet import (
    TROUBLE,
    CaptureResult,
    FlowSeen,
    PairResult,
    PointPair,
    build_fleet_semantic,
    capture_metrics,
    expand_sources,
    load_fleet_schema,
    match_points,
    path_orders,
    rank_captures,
    render_fleet_html,
    render_fleet_markdown,
    robust_outliers,
    trouble_parts,
)
from netghost.forensics.fleet._sources import _blob_sources

REPO = Path(__file__).resolve().parents[2]
PCAPS = REPO / "tests" / "data" / "pcaps"


def _table(metric: str, values: dict[str, float | None]) -> dict[str, dict[str, float | None]]:
    return {cid: {metric: v} for cid, v in values.items()}


def test_one_vm_unlike_its_peers_stands_out_and_the_peers_do_not() -> None:
    rates = {f"vm{i}": 0.010 + 0.001 * (i % 4) for i in range(11)}
    rates["vm7"] = 0.20
    out = robust_outliers(_table("retrans_rate", rates))["retrans_rate"]
    assert [o["id"] for o in out["outliers"]] == ["vm7"]
    assert out["scale"] == "MAD" and out["median"] == pytest.approx(0.011)
    # a mean and standard deviation would be dragged by vm7; the median is not
    assert out["median"] < 0.02


def test_a_single_bad_value_among_identical_ones_uses_the_mean_absolute_deviation() -> None:
    rst = {f"vm{i}": 0.0 for i in range(9)} | {"vm3": 12.0}
    out = robust_outliers(_table("rst_packets", rst))["rst_packets"]
    assert out["mad"] == 0 and out["scale"] == "mean absolute deviation"
    assert [o["id"] for o in out["outliers"]] == ["vm3"]


def test_no_outlier_when_all_alike_when_better_than_usual_or_too_few_captures() -> None:
    assert robust_outliers(_table("rst_packets", {f"vm{i}": 2.0 for i in range(6)}))["rst_packets"]["outliers"] == []
    low = {f"vm{i}": 50.0 + i for i in range(8)} | {"fast": 1.0}  # far *better* than the others: not trouble
    assert robust_outliers(_table("rtt_p95_ms", low))["rtt_p95_ms"]["outliers"] == []
    few = robust_outliers(_table("rst_packets", {"a": 0.0, "b": 100.0}))["rst_packets"]
    assert few["outliers"] == [] and few["median"] is None
    none = robust_outliers(_table("rtt_p95_ms", {"a": None, "b": None, "c": None, "d": 3.0}))["rtt_p95_ms"]
    assert none["captures"] == 1


def _sem(findings: list[dict[str, Any]] | None = None, *, segments: int = 1000, retrans: int = 0, conns: int = 50,
         syn_fail: int = 0, rst: int = 0, zero: int = 0, full: int = 0, queries: int = 0, dns_bad: int = 0) -> dict[str, Any]:
    """A semantic document with just the figures the ranking reads."""
    return {"findings": findings or [], "summary": {
        "tcp_segments": segments, "tcp_conversations": conns, "syn_without_synack": syn_fail, "rst_packets": rst,
        "tcp_analysis": {"retransmission": retrans, "zero_window": zero, "window_full": full},
        "dns_rcodes": {"NoError": queries - dns_bad, "NXDomain": dns_bad}, "dns": {"queries": queries, "unanswered": 0},
        "ack_rtt": {"p95_ms": 1.0}}}


def test_an_outlier_outranks_a_capture_with_the_same_findings() -> None:
    finding = [{"severity": "medium", "confidence": 0.8}]
    outl = {"rst_packets": {"outliers": [{"id": "b", "value": 9.0, "z": 5.0}]}}
    ranked = rank_captures({"a": _sem(finding), "b": _sem(finding), "c": _sem()}, outl)
    assert [r[0] for r in ranked] == ["b", "a", "c"] and ranked[0][2] == ["rst_packets"]
    assert ranked[0][3]["outliers"] == 5.0 and ranked[0][3]["findings"] == 1.6


def test_a_capture_losing_8_percent_never_ranks_below_captures_with_mild_findings() -> None:
    """The fleet ranks by the single report's trouble measures, not by how many findings a capture has."""
    mild = [{"severity": "medium", "confidence": 0.9}, {"severity": "low", "confidence": 0.85}]
    sems = {
        "lossy": _sem([{"severity": "medium", "confidence": 0.8}], retrans=83),  # 8.3%: one medium finding
        "nxdomain": _sem(mild, queries=12, dns_bad=1),
        "traceroute": _sem([{"severity": "low", "confidence": 0.85}] * 3),
        "healthy": _sem(),
    }
    ranked = rank_captures(sems, robust_outliers({k: capture_metrics(v) for k, v in sems.items()}))
    assert ranked[0][0] == "lossy" and ranked[-1][0] == "healthy"
    assert ranked[0][3]["retransmissions"] == pytest.approx(8.3)  # 10 points at the report's "high" (10%)
    assert ranked[0][1] == pytest.approx(sum(ranked[0][3].values()))


@pytest.mark.parametrize(("figures", "part"), [
    ({"retrans": 100}, "retransmissions"), ({"syn_fail": 10}, "unanswered_syns"), ({"rst": 13}, "resets"),
    ({"zero": 10}, "zero_windows"), ({"full": 100}, "window_full"), ({"queries": 40, "dns_bad": 8}, "dns_failures"),
])
def test_each_trouble_measure_earns_its_whole_weight_at_the_level_the_single_report_calls_trouble(
        figures: dict[str, int], part: str) -> None:
    parts = trouble_parts(_sem(**figures))
    assert parts[part] == TROUBLE[part].weight
    assert sum(parts.values()) == parts[part]
    half = trouble_parts(_sem(**{k: v // 2 for k, v in figures.items() if k != "queries"} | (
        {"queries": figures["queries"]} if "queries" in figures else {})))
    assert half[part] == pytest.approx(TROUBLE[part].weight / 2, rel=0.1)


def test_a_rate_over_a_handful_of_segments_counts_in_proportion_to_its_sample() -> None:
    tiny = trouble_parts(_sem(segments=6, retrans=5))  # 83% of six segments
    assert tiny["retransmissions"] == pytest.approx(TROUBLE["retransmissions"].weight * 6 / 20)


def _flow(key: str, ts: float, c2s: int, s2c: int, isn: int = 7) -> FlowSeen:
    return FlowSeen(key=key, first_ts=ts, packets=10, ttl_c2s=c2s, ttl_s2c=s2c, isn=isn)


def test_capture_points_are_ordered_by_ttl_then_by_time() -> None:
    k = "tcp 10.0.0.4:5000 > 10.0.2.4:6379"
    # client side: the client's TTL is high and the server's low; the TTL outvotes a later clock
    flows = {"server-vm": [_flow(k, 1.0, 62, 64)], "client-vm": [_flow(k, 5.0, 64, 62)]}
    [pp] = match_points(flows)
    assert (pp.a, pp.b, pp.method, pp.shared_flows) == ("client-vm", "server-vm", "ttl", 1)
    # same TTLs (one subnet): the point that saw the flow first is upstream
    [pp] = match_points({"x": [_flow(k, 2.0, 64, 64)], "y": [_flow(k, 1.0, 64, 64)]})
    assert (pp.a, pp.b, pp.method) == ("y", "x", "timing")
    # the same endpoints with another SYN sequence number are another connection (port reuse, another VM)
    assert match_points({"x": [_flow(k, 1.0, 64, 64, isn=1)], "y": [_flow(k, 1.0, 63, 64, isn=2)]}) == []
    # no shared flow, no pair
    assert match_points({"x": [_flow(k, 1.0, 64, 64)], "y": [_flow("tcp 1.1.1.1:1 > 2.2.2.2:2", 1.0, 64, 64)]}) == []


def test_a_path_through_three_points_is_ordered_client_side_first() -> None:
    keys = [f"tcp 10.0.0.4:{5000 + i} > 10.0.9.9:443" for i in range(3)]
    flows = {"nva": [_flow(k, 1.001, 63, 62) for k in keys], "server": [_flow(k, 1.002, 61, 64) for k in keys],
             "client": [_flow(k, 1.0, 64, 60) for k in keys]}
    [path] = path_orders(flows)
    assert path["points"] == ["client", "nva", "server"] and path["method"] == "ttl" and path["flows"] == 3


def test_sources_expand_folders_and_globs_with_unique_ids(tmp_path: Path) -> None:
    for sub in ("vm1", "vm2"):
        (tmp_path / sub).mkdir()
        shutil.copy(PCAPS / "zeek_smtp.pcap", tmp_path / sub / "capture.pcap")
    (tmp_path / "vm1" / "notes.txt").write_text("not a capture")
    srcs = expand_sources([str(tmp_path), str(tmp_path / "vm*" / "*.pcap")])
    assert [s.id for s in srcs] == ["vm1__capture.pcap", "vm2__capture.pcap"]  # the glob repeats them: once each
    assert all(s.name == "capture.pcap" and not s.remote for s in srcs)
    both = expand_sources([str(tmp_path / "vm1" / "capture.pcap"), str(tmp_path / "vm2" / "capture.pcap")])
    assert [s.id for s in both] == ["capture.pcap", "capture.pcap-2"]
    with pytest.raises(CaptureFormatError, match="no capture files"):
        expand_sources([str(tmp_path / "nothing-*.pcap")])


@pytest.mark.parametrize("spec", ["missing-folder", "missing.pcap", "vm1/missing", "empty"])
def test_a_missing_or_empty_source_is_an_error_naming_what_to_give(tmp_path: Path, spec: str) -> None:
    """A folder that does not exist is the same mistake as one without captures: an error, never "1 failed"."""
    (tmp_path / "vm1").mkdir()
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no capture here")
    with pytest.raises(CaptureFormatError) as exc:
        expand_sources([str(tmp_path / spec)])
    message = str(exc.value)
    assert message.startswith(str(tmp_path / spec) + ": ") and "\n" not in message
    assert ("no such file or folder" if spec != "empty" else "no capture files found there") in message
    assert "give capture files, folders of captures" in message  # the next step


def test_blob_urls_name_their_account_and_refuse_a_sas() -> None:
    assert _blob_sources("https://prodlogs.blob.core.windows.net/captures/tier1/") == ("prodlogs", "captures/tier1")
    assert _blob_sources("az://captures/tier1") == (None, "captures/tier1")
    with pytest.raises(CaptureFormatError, match="AZURE_STORAGE_SAS_TOKEN") as exc:
        _blob_sources("https://prodlogs.blob.core.windows.net/c/x.pcap?sv=1&sig=abc")
    assert "sig=" not in str(exc.value)
    with pytest.raises(CaptureFormatError, match="not a Blob Storage URL"):
        _blob_sources("https://example.com/c/x.pcap")


def _result(cid: str, sem: dict | None, error: str | None = None) -> CaptureResult:
    return CaptureResult(id=cid, uri=f"/caps/{cid}", name=cid, ok=sem is not None, error=error, sem=sem,
                         outputs={f"{cid}_forensic_report.md": b"", f"{cid}_semantic.json": b""} if sem else {})


def test_the_fleet_document_validates_and_both_reports_render_it() -> None:
    from netghost.forensics import analyze_capture, build_semantic

    sems = {n: json.loads(json.dumps(build_semantic(analyze_capture(PCAPS / n)))) for n in
            ("zeek_smtp.pcap", "chrissanders_synscan.pcapng", "ndpi_bad-dns-traffic.pcap")}
    results = [_result(n, s) for n, s in sems.items()] + [_result("bad.pcap", None, "not a capture")]
    pp = PointPair(a="zeek_smtp.pcap", b="ndpi_bad-dns-traffic.pcap", shared_flows=2, method="ttl")
    doc = build_fleet_semantic(results, [(pp, PairResult(a=pp.a, b=pp.b, ok=False, error="boom"))], [],
                               {"sources": ["/caps"], "scheduler": "local", "workers": 2, "wall_s": 1.0})
    doc = json.loads(json.dumps(doc))
    jsonschema.Draft202012Validator.check_schema(load_fleet_schema())
    jsonschema.validate(doc, load_fleet_schema())
    assert doc["fleet"] == {"captures": 4, "analysed": 3, "failed": 1, "packets": doc["fleet"]["packets"]}
    assert doc["failed"] == [{"id": "bad.pcap", "source": "/caps/bad.pcap", "error": "not a capture"}]
    assert doc["captures"][0]["report"] == f"captures/{doc['captures'][0]['id']}/{doc['captures'][0]['id']}_forensic_report.md"
    md, page = render_fleet_markdown(doc), render_fleet_html(doc)
    assert "bad.pcap" in md and "not a capture" in md and "boom" in md
    assert "bad.pcap" in page and "<script" not in page
    bad = dict(doc, surprise=1)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, load_fleet_schema())


def test_endpoints_alone_tie_two_points_only_with_enough_evidence() -> None:
    """Flows seen without their SYN match on endpoints only: one in common between two VMs of a big tier
    is a coincidence, three (or one SYN-matched flow) tie the points."""
    keys = [f"tcp 10.0.0.4:{5000 + i} > 10.0.9.9:443" for i in range(3)]
    one = {"x": [_flow(keys[0], 1.0, 64, 64, isn=-1)], "y": [_flow(keys[0], 1.0, 63, 64, isn=-1)]}
    assert match_points(one) == [] and path_orders(one) == []
    three = {"x": [_flow(k, 1.0, 64, 64, isn=-1) for k in keys], "y": [_flow(k, 1.0, 63, 64, isn=-1) for k in keys]}
    [pp] = match_points(three)
    assert (pp.a, pp.b, pp.shared_flows) == ("x", "y", 3)
    syn = {"x": [*one["x"], _flow(keys[1], 1.0, 64, 64)], "y": [*one["y"], _flow(keys[1], 1.0, 63, 64)]}
    assert match_points(syn)[0].shared_flows == 2


def test_a_workers_flow_list_is_the_same_whatever_the_block_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-row work of ``_flows`` runs in blocks (its whole-capture temporaries once cost ~600 MB on a
    14M-packet capture); a stream's first segment each way is found in whichever block holds it."""
    from netghost.forensics import arrays
    from netghost.forensics.engine import analyze_capture
    from netghost.forensics.fleet import _task

    capture = Path(__file__).resolve().parents[1] / "data" / "pcaps" / "chrissanders_ppa1e_ftp-crack.pcap"
    a = analyze_capture(capture)
    whole = _task._flows(a)
    monkeypatch.setattr(_task, "spans", lambda n: arrays.spans(n, 997))  # ~20 blocks, cutting streams apart
    assert len(a.tcp_rows) > 10 * 997 and _task._flows(a) == whole and whole
