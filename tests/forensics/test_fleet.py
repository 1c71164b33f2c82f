"""``pcap-forensics --fleet`` on a real Dask LocalCluster (2 worker processes, shared by this module) and
a real Blob endpoint (Azurite on loopback): per-capture results equal the plain CLI's byte for byte,
a corrupt capture is reported while the rest finish, a worker killed mid-analysis is retried by Dask."""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
from pathlib import Path

import jsonschema
import pytest

from netghost.forensics.cli import main
from netghost.forensics.fleet import (
    CaptureResult,
    Source,
    analyse_source,
    expand_sources,
    load_fleet_schema,
    run_fleet,
)
from tests.forensics.fleet_fixtures import azurite, azurite_or_none, cluster

pytestmark = pytest.mark.slow
__all__ = ["azurite", "azurite_or_none", "cluster"]  # the module-scoped fixtures this module shares

REPO = Path(__file__).resolve().parents[2]
PCAPS = REPO / "tests" / "data" / "pcaps"
PAIRS = REPO / "tests" / "data" / "pairs"
SMALL = ["chrissanders_tcp_refuseconnection.pcapng", "zeek_smtp.pcap", "ndpi_bad-dns-traffic.pcap",
         "chrissanders_synscan.pcapng"]
BIG = "chrissanders_ppa1e_ftp-crack.pcap"  # ~0.3 s of analysis: long enough to be killed mid-way


def _cli_outputs(capture: Path, where: Path) -> dict[str, bytes]:
    where.mkdir(parents=True)
    assert main([str(capture), "--semantic-dir", str(where), "--report-dir", str(where)]) == 0
    return {p.name: p.read_bytes() for p in sorted(where.iterdir())}


def _fleet_outputs(out: Path, cid: str) -> dict[str, bytes]:
    d = out / "captures" / cid
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def _doc(out: Path) -> dict:
    doc = json.loads((out / "fleet_semantic.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, load_fleet_schema())
    return doc


def test_local_fleet_equals_plain_cli_and_compares_the_pair(cluster: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    caps = tmp_path / "caps"
    caps.mkdir()
    for name in SMALL:
        shutil.copy(PCAPS / name, caps / name)
    for name in ("chrissanders_ppa2e_http_espn_A.pcap", "chrissanders_ppa2e_http_espn_B.pcap"):
        shutil.copy(PAIRS / name, caps / name)
    out = tmp_path / "out"
    rc = main(["--fleet", str(caps), "--scheduler", cluster, "--out", str(out)])
    text = capsys.readouterr()
    assert rc == 0, text.err
    doc = _doc(out)
    assert doc["fleet"] == {"captures": 6, "analysed": 6, "failed": 0, "packets": doc["fleet"]["packets"]}
    for src in sorted(caps.iterdir()):
        assert _fleet_outputs(out, src.name) == _cli_outputs(src, tmp_path / "cli" / src.name), src.name
    # every capture ranked once, each linking to its own report
    assert sorted(c["id"] for c in doc["captures"]) == sorted(p.name for p in caps.iterdir())
    assert all((out / c["report"]).is_file() for c in doc["captures"])
    # the two capture points of one path are matched and compared, A upstream (the pair's truth: A is the client side)
    [pair] = doc["pairs"]
    assert (pair["a"], pair["b"]) == ("chrissanders_ppa2e_http_espn_A.pcap", "chrissanders_ppa2e_http_espn_B.pcap")
    assert pair["compared"] and pair["matched_packets"] > 900 and pair["injected_at_b"] == 1
    assert (out / pair["report"]).is_file()
    assert doc["paths"][0]["points"] == [pair["a"], pair["b"]]
    md = (out / "fleet_report.md").read_text(encoding="utf-8")
    assert "chrissanders_ppa2e_http_espn_A.pcap → chrissanders_ppa2e_http_espn_B.pcap" in md
    assert "<table>" in (out / "fleet_report.html").read_text(encoding="utf-8")
    assert "fleet: 6 captures, 6 analysed, 0 failed" in text.out


def _upload(conn: str, files: dict[str, bytes]) -> None:
    import fsspec

    fs = fsspec.filesystem("az", connection_string=conn, skip_instance_cache=True)
    if not fs.exists("captures"):
        fs.mkdir("captures")
    for name, data in files.items():
        with fs.open(f"captures/{name}", "wb") as fh:
            fh.write(data)


def test_blob_fleet_equals_plain_cli_and_reports_a_corrupt_capture(
        cluster: str, azurite: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    files = {f"tier1/vm{i}/{name}": (PCAPS / name).read_bytes() for i, name in enumerate(SMALL[:3])}
    files["tier1/vm9/broken.pcap"] = b"this is not a capture at all" * 10
    _upload(azurite, files)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite)
    out = tmp_path / "out"
    rc = main(["--fleet", "az://captures/tier1", "--scheduler", cluster, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1  # some failed, the report is complete
    doc = _doc(out)
    assert doc["fleet"]["analysed"] == 3 and doc["fleet"]["failed"] == 1
    [failed] = doc["failed"]
    assert failed["id"] == "vm9__broken.pcap" and failed["source"] == "az://captures/tier1/vm9/broken.pcap"
    assert "not a pcap/pcapng capture" in failed["error"] and "netghost-fleet-" not in failed["error"]
    assert "vm9__broken.pcap" in err
    for i, name in enumerate(SMALL[:3]):
        assert _fleet_outputs(out, f"vm{i}__{name}") == _cli_outputs(PCAPS / name, tmp_path / "cli" / name), name


def test_a_sas_on_the_command_line_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc = main(["--fleet", "https://acct.blob.core.windows.net/c/p?sv=2024&sig=SECRETSIG", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "AZURE_STORAGE_SAS_TOKEN" in err and "SECRETSIG" not in err


def _dies_once(marker: str, target: str, src: Source, fmts: tuple[str, ...], max_memory: int | None) -> CaptureResult:
    """The real per-capture task, except that the first worker to run it for ``target`` is SIGKILLed while
    the task runs (the marker file, created exclusively, records the pid it killed). The kill is not timed
    against the analysis: a small capture can finish within any fixed delay, and a result that reached the
    client before the kill is not a retry."""
    if src.id == target:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return analyse_source(src, fmts, max_memory)


def test_a_worker_killed_mid_analysis_is_retried_and_the_report_is_complete(cluster: str, tmp_path: Path) -> None:
    from dask.distributed import Client

    sources = expand_sources([str(PCAPS / BIG), *(str(PCAPS / n) for n in SMALL[:2])])
    marker = tmp_path / "killed.pid"
    task = functools.partial(_dies_once, str(marker), BIG)
    with Client(cluster) as client:
        res = run_fleet(sources, client, out=tmp_path / "out", task=task)
    killed = int(marker.read_text())
    assert res.exit_code == 0 and res.doc["fleet"]["analysed"] == 3
    big = next(r for r in res.results if r.id == BIG)
    assert big.ok and not big.worker.endswith(f":{killed}")  # analysed again, by another process
    assert _fleet_outputs(tmp_path / "out", BIG) == _cli_outputs(PCAPS / BIG, tmp_path / "cli")


def test_the_engine_budget_on_a_worker_is_a_quarter_of_its_memory_limit_unless_given(
        cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dask.distributed import Client

    from netghost.forensics.fleet._task import worker_budget

    monkeypatch.delenv("NETGHOST_PCAP_MEMORY", raising=False)
    assert worker_budget(None) is None  # off a worker: the engine's own default stands
    assert worker_budget(64 << 20) == 64 << 20
    with Client(cluster) as client:
        workers = client.scheduler_info()["workers"]
        limits = {w["memory_limit"] for w in workers.values()}
        got = {client.submit(worker_budget, None, workers=[a], pure=False).result() for a in workers}
        given = {client.submit(worker_budget, 32 << 20, workers=[a], pure=False).result() for a in workers}
    assert len(limits) == 1 and limits != {0}
    assert got == {limits.pop() // 4}  # a worker's budget fits inside what Dask's monitor allows it
    assert given == {32 << 20}


def _azure_setting() -> str | None:
    return os.environ.get("AZURE_STORAGE_ACCOUNT_NAME")


def test_a_second_local_fleet_in_one_process_reads_with_the_current_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Local workers fork from a server Python starts once per process, with that moment's environment:
    a later fleet (the MCP server's second request, another test) must still see the credentials set
    since, or every blob read fails as 'none analysed'."""
    from netghost.forensics.fleet import dask_client

    monkeypatch.delenv("AZURE_STORAGE_ACCOUNT_NAME", raising=False)
    with dask_client(workers=1) as client:  # the fork server starts here, without the setting
        assert set(client.run(_azure_setting).values()) == {None}
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_NAME", "secondfleet")
    with dask_client(workers=1) as client:
        assert set(client.run(_azure_setting).values()) == {"secondfleet"}
