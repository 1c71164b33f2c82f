"""Robustness: mutated captures through the whole CLI, and random TCP conversations through the detectors.

The CLI turns any unexpected exception into "internal error ..." (exit 2) so no traceback reaches the
agent; these tests make sure that safety net is never what saves us: a mutated capture either is
refused as a capture error or yields schema-valid outputs, and the findings detectors accept any
sequence of segments (odd flags, wrapped sequence numbers, missing handshakes).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.forensics import analyze_capture, build_findings, build_semantic, load_schema
from netghost.forensics.cli import main
from netghost.forensics.report import MAX_SUMMARY_LINES
from tests.forensics.pcapwriter import Capture

PCAPS = Path(__file__).resolve().parent.parent / "data" / "pcaps"
FILES = ["chrissanders_tcp_retransmissions.pcapng", "chrissanders_tcp_refuseconnection.pcapng",
         "chrissanders_dns_query_nonexistent.pcapng", "chrissanders_ppa1e_destunreachable.pcap",
         "suricata_http-gap-simple.pcap", "chrissanders_tcp_zerowindowrecovery.pcapng"]
SCHEMA = load_schema()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    which=st.sampled_from(FILES),
    edits=st.lists(st.tuples(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=255)),
                   max_size=16),
    cut=st.one_of(st.none(), st.integers(min_value=0, max_value=10**6)),
    garbage=st.one_of(st.none(), st.tuples(st.integers(min_value=0, max_value=10**6), st.binary(min_size=1, max_size=64))),
)
def test_mutated_capture_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str,  # noqa: PLR0917  hypothesis arguments
                                         edits: list[tuple[int, int]], cut: int | None,
                                         garbage: tuple[int, bytes] | None) -> None:
    data = bytearray((PCAPS / which).read_bytes())
    for pos, val in edits:
        data[pos % len(data)] = val
    if garbage is not None:
        pos = garbage[0] % (len(data) + 1)
        data[pos:pos] = garbage[1]
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    out = tmp_path / "out"
    cap = tmp_path / "m.pcap"
    cap.write_bytes(bytes(data))
    rc = main([str(cap), "--semantic-dir", str(out), "--report-dir", str(out)])
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err, err
    if rc == 2:
        assert err.count("error:") == 1
        return
    assert rc == 0
    sem = json.loads((out / "m_semantic.json").read_text(encoding="utf-8"))
    jsonschema.validate(sem, SCHEMA)
    assert len((out / "m_executive_summary.md").read_text(encoding="utf-8").splitlines()) <= MAX_SUMMARY_LINES


A, B = "10.9.0.1", "10.9.0.2"
SEGMENT = st.tuples(
    st.booleans(),  # from A
    st.integers(min_value=0, max_value=0x3F),  # flags
    st.sampled_from([0, 1, 2, 1000, 2**31, 2**32 - 5]),  # seq offset from the ISN
    st.sampled_from([0, 1, 1448, 2**31 + 7]),  # ack offset
    st.sampled_from([0, 1, 64, 1400, 1448]),  # payload
    st.floats(min_value=0.0, max_value=3.0, allow_nan=False),  # time step
    st.sampled_from([64, 63, 255]),  # TTL
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(segments=st.lists(SEGMENT, min_size=1, max_size=40), sport=st.sampled_from([40000, 6379]))
def test_any_tcp_conversation_yields_valid_findings(tmp_path: Path, segments: list[tuple[bool, int, int, int, int, float, int]],
                                                    sport: int) -> None:
    cap = Capture()
    t = 1.0
    for from_a, flags, seq, ack, pay, dt, ttl in segments:
        t += dt
        src, dst, sp, dp = (A, B, sport, 6379) if from_a else (B, A, 6379, sport)
        cap.tcp(t, src, dst, sp, dp, 7_000_000 + seq, 9_000_000 + ack, flags, b"p" * pay, ttl=ttl)
    a = analyze_capture(cap.write(tmp_path / "f.pcap"))
    found = build_findings(a)
    assert all(1 <= fr <= a.packets for f in found for fr in f["evidence"]["frames"])
    jsonschema.validate(json.loads(json.dumps(build_semantic(a))), SCHEMA)
