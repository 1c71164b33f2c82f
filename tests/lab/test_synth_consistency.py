"""Consistency: the PCAP engine, run on the lab's synthesized captures, finds each world's fault.

For every shipped scenario the capture on the client (web-vm-01) and on the server side of the
faulted flow is synthesized and analysed in-process by :mod:`netghost.forensics`. Assertions are
on the semantic JSON (summary counts, finding kinds and the 5-tuple they name), never on prose.
The ground truth comes from ``scenarios/answers/<name>.json`` (tests may read it; the product never
does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from netghost.forensics import analyze_capture, build_semantic
from netghost.forensics.decode._packets import format_addr
from netghost.forensics.engine import Analysis
from netghost.forensics.tcp._flags import FLAG_BITS
from netghost.lab.synth import synthesize_capture
from netghost.lab.world import SCENARIO_DIR, World, load_world, scenario_names

T0 = 1_795_000_000.0
WINDOW = 60.0
SILENT_DROPS = {"nsg-deny", "udr-dead-appliance", "peering-disconnected"}
FAULT_KINDS = {"syn_no_answer", "syn_rejected_rst", "rst_injected", "rst_midstream", "retransmissions",
               "retransmissions_overall", "pmtu_blackhole", "pmtu_suspect", "pmtu_frag_needed", "zero_window",
               "dns_unanswered", "decode_issues", "capture_truncated"}


def _answer(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCENARIO_DIR / "answers" / f"{name}.json").read_text(encoding="utf-8"))
    return data


def _by_fault(*fault_types: str) -> list[str]:
    """Shipped scenarios whose ground truth is one of ``fault_types``."""
    return [n for n in scenario_names() if _answer(n)["fault_type"] in fault_types]


def _by_outcome(*outcomes: str) -> list[str]:
    """Shipped scenarios whose broken flow ends one of these ways (``host-down``: the server VM is off)."""
    return [n for n in scenario_names() if _answer(n)["expected_outcome"] in outcomes]


def _nxdomain(name: str) -> bool:
    """The faulted flow's name answers NXDOMAIN (not NOERROR with no address: a name with other records only)."""
    world = load_world(name)
    dns = world.flow_outcome(_answer(name)["affected_flow"]).dns
    return dns is not None and dns.rcode == "NXDOMAIN"


def _running(world: World, vm: str | None) -> bool:
    """A VM Azure could capture on (a stopped or deallocated one has no packets to give)."""
    found = world.vm(vm) if vm else None
    return found is not None and found.power_state == "running"


_CACHE: dict[tuple[str, str], tuple[Analysis, dict[str, Any]]] = {}


def _analyse(tmp_dir: Path, world: World, vm: str) -> tuple[Analysis, dict[str, Any]]:
    key = (world.name, vm)
    if key not in _CACHE:
        path = tmp_dir / f"{world.name}-{vm}.pcap"
        path.write_bytes(synthesize_capture(world, vm, T0, T0 + WINDOW))
        analysis = analyze_capture(path)
        _CACHE[key] = (analysis, build_semantic(analysis, path.stat().st_size))
    return _CACHE[key]


@pytest.fixture(scope="module")
def cap_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("synth-captures")


def _servers(sem: dict[str, Any], finding: dict[str, Any]) -> set[str]:
    """Server endpoints ("ip:port") a finding names, through its metrics and referenced flows."""
    flows = {f["id"]: f for f in sem["flows"]}
    out = {flows[fid]["server"] for fid in finding["flows"] if fid in flows}
    if "server" in finding["metrics"]:
        out.add(finding["metrics"]["server"])
    return out


def _kinds(sem: dict[str, Any]) -> set[str]:
    return {f["kind"] for f in sem["findings"]}


def _ends(world: World, name: str) -> tuple[str, str | None, str, int]:
    """(client VM, server VM or None, server IP the client really dials, port) of the faulted flow."""
    answer = _answer(name)
    flow_name = answer["affected_flow"] or world.spec.traffic[0].name
    flow = next(t for t in world.spec.traffic if t.name == flow_name)
    outcome = world.flow_outcome(flow)
    intended = world.vm(flow.server)
    return flow.client, intended.name if intended else None, outcome.server_ip or "", flow.port


def _tcp_to(a: Analysis, ip: str, port: int, src: str | None = None) -> int:
    """TCP segments in the capture addressed to ip:port (optionally only those from ``src``)."""
    c, rows = a.cols, a.tcp_rows.tolist()
    return sum(1 for r in rows if int(c.dport[r]) == port and format_addr(c.dst_hi[r], c.dst_lo[r]) == ip
               and (src is None or format_addr(c.src_hi[r], c.src_lo[r]) == src))


def _segments(a: Analysis, src: str, dst: str, port: int) -> set[tuple[int, int, int]]:
    """(client port, IP ID, seq) of every TCP segment src -> dst:port in the capture."""
    c = a.cols
    return {(int(c.sport[r]), int(c.ip_id[r]), int(c.seq[r])) for r in a.tcp_rows.tolist()
            if int(c.dport[r]) == port and format_addr(c.src_hi[r], c.src_lo[r]) == src
            and format_addr(c.dst_hi[r], c.dst_lo[r]) == dst}


def test_every_fault_type_is_covered() -> None:
    covered = {_answer(n)["fault_type"] for n in scenario_names()}
    assert covered >= {"none", "nsg-deny", "udr-dead-appliance", "service-down", "dns-nxdomain",
                       "dns-private-zone-not-linked", "pmtu-blackhole", "path-packet-loss", "middlebox-rst",
                       "peering-disconnected"}


@pytest.mark.parametrize("name", scenario_names())
def test_capture_decodes_cleanly(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, server, _, _ = _ends(world, name)
    for vm in (v for v in (client, server) if _running(world, v)):
        _, sem = _analyse(cap_dir, world, vm)
        assert sem["summary"]["decode_issues"] == {}
        assert sem["summary"]["packets"] > 20
        assert sem["capture"]["truncated"] is False
        assert "decode_issues" not in _kinds(sem)


@pytest.mark.parametrize("name", _by_fault("none"))
def test_healthy_control_has_nothing_fault_like(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    for vm in world.spec.vms:
        if vm.power_state != "running":
            continue
        _, sem = _analyse(cap_dir, world, vm.name)
        s = sem["summary"]
        assert s["rst_packets"] == 0
        assert s["syn_without_synack"] == 0
        if not any(nic.ip_forwarding for nic in vm.nics):  # an appliance sees each segment in and out: tshark
            assert all(v == 0 for v in s["tcp_analysis"].values()), s["tcp_analysis"]  # calls the copy a retransmission
        assert set(s["dns_rcodes"]) <= {"NoError"}
        assert not _kinds(sem) & FAULT_KINDS, sem["findings"]
        blocked_ping = any(t.expected == "blocked" and t.protocol == "Icmp" and vm.name in (t.client, t.server)
                           for t in world.spec.traffic)  # a ping denied by design goes unanswered, as it should
        prefixes = ("dns_",) if blocked_ping else ("dns_", "icmp_")
        assert not [f for f in sem["findings"] if f["kind"].startswith(prefixes)]
    web_name = next(t.client for t in world.spec.traffic if world.vm(t.client) is not None)
    _, web = _analyse(cap_dir, world, web_name)
    if any(t.server_name and t.client == web_name for t in world.spec.traffic):
        assert web["summary"]["dns_rcodes"].get("NoError", 0) > 0
    assert web["summary"]["tcp_conversations"] > 30


@pytest.mark.parametrize("name", sorted(set(_by_fault(*SILENT_DROPS)) | set(_by_outcome("host-down"))))
def test_silent_drop_is_syn_without_answer_on_the_right_tuple(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, server, server_ip, port = _ends(world, name)
    a, sem = _analyse(cap_dir, world, client)
    hits = [f for f in sem["findings"] if f["kind"] == "syn_no_answer"]
    assert hits and f"{server_ip}:{port}" in _servers(sem, hits[0])
    assert hits[0]["metrics"]["syn_attempts"] >= 2 * hits[0]["metrics"]["connections"]
    assert sem["summary"]["rst_packets"] == 0
    if server is not None and _running(world, server):
        server_analysis, server_sem = _analyse(cap_dir, world, server)
        assert _tcp_to(server_analysis, server_ip, port, src=world.endpoint_ip(client)) == 0
        assert "syn_no_answer" not in _kinds(server_sem)
    assert _tcp_to(a, server_ip, port) > 0


@pytest.mark.parametrize("name", [n for n in _by_outcome("service-down") if not _answer(n)["fault_type"].startswith("lb-")])
def test_service_down_is_rst_from_the_port_at_both_ends(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, server, server_ip, port = _ends(world, name)
    assert server is not None
    for vm in (client, server):
        _, sem = _analyse(cap_dir, world, vm)
        hits = [f for f in sem["findings"] if f["kind"] == "syn_rejected_rst"]
        assert hits and f"{server_ip}:{port}" in _servers(sem, hits[0]), vm
        assert "syn_no_answer" not in _kinds(sem)


@pytest.mark.parametrize("name", [n for n in _by_fault("dns-nxdomain") if _nxdomain(n)])
def test_dns_nxdomain_found_and_no_connection_attempted(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    flow = next(t for t in world.spec.traffic if t.name == _answer(name)["affected_flow"])
    a, sem = _analyse(cap_dir, world, flow.client)
    hits = [f for f in sem["findings"] if f["kind"] == "dns_nxdomain"]
    assert hits and hits[0]["metrics"]["qname"] == flow.server_name
    assert _tcp_to(a, world.endpoint_ip(flow.server), flow.port) == 0
    assert not _kinds(sem) & FAULT_KINDS


@pytest.mark.parametrize("name", _by_fault("dns-private-zone-not-linked"))
def test_private_zone_not_linked_dials_the_public_address(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, server, dialled, port = _ends(world, name)
    assert server is not None
    private = world.endpoint_ip(server)
    assert dialled and dialled != private
    a, sem = _analyse(cap_dir, world, client)
    assert set(sem["summary"]["dns_rcodes"]) == {"NoError"}
    hits = [f for f in sem["findings"] if f["kind"] == "syn_no_answer"]
    assert hits and _servers(sem, hits[0]) == {f"{dialled}:{port}"}
    assert _tcp_to(a, private, port) == 0
    server_analysis, _ = _analyse(cap_dir, world, server)
    assert _tcp_to(server_analysis, private, port, src=world.endpoint_ip(client)) == 0


def _rst_to(world: World) -> str:
    return str(world.fault.params.get("rst_to", "both")) if world.fault else "both"


@pytest.mark.parametrize("name", [n for n in _by_fault("middlebox-rst") if _rst_to(load_world(n)) == "both"])
def test_middlebox_rst_seen_at_both_ends_never_sent(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, server, server_ip, port = _ends(world, name)
    assert server is not None
    _, csem = _analyse(cap_dir, world, client)
    _, ssem = _analyse(cap_dir, world, server)
    for sem in (csem, ssem):
        hits = [f for f in sem["findings"] if f["kind"] == "rst_injected"]
        assert hits
        assert all(f"{server_ip}:{port}" in _servers(sem, f) for f in hits)
        assert all(f["metrics"]["rst_ttl"] != f["metrics"]["usual_ttl"] for f in hits)
    # Each end receives the RSTs but neither end's NIC ever sent one: two-point comparison shows it.
    assert csem["summary"]["rst_packets"] == ssem["summary"]["rst_packets"] > 0


@pytest.mark.parametrize("name", _by_fault("path-packet-loss"))
def test_path_loss_retransmissions_and_gap_between_the_points(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, server, server_ip, port = _ends(world, name)
    assert server is not None
    ca, csem = _analyse(cap_dir, world, client)
    sa, ssem = _analyse(cap_dir, world, server)
    for sem in (csem, ssem):
        hits = [f for f in sem["findings"] if f["kind"] == "retransmissions"]
        assert hits and all(f"{server_ip}:{port}" in _servers(sem, f) for f in hits)
        assert "rst_injected" not in _kinds(sem) and "syn_no_answer" not in _kinds(sem)
    # Same packets at both points (same ports, IP IDs, sequence numbers): the server's view of the
    # client's segments is a strict subset of what the client sent, on the connections both saw.
    client_ip = world.endpoint_ip(client)
    sent, got = _segments(ca, client_ip, server_ip, port), _segments(sa, client_ip, server_ip, port)
    common = {k[0] for k in sent} & {k[0] for k in got}
    sent = {k for k in sent if k[0] in common}
    got = {k for k in got if k[0] in common}
    assert len(common) > 20
    assert got < sent
    assert csem["summary"]["tcp_analysis"]["lost_segment"] > 0


@pytest.mark.parametrize("name", _by_fault("pmtu-blackhole"))
def test_pmtu_blackhole_large_segments_retransmitted_small_pass(cap_dir: Path, name: str) -> None:
    world = load_world(name)
    client, server, server_ip, port = _ends(world, name)
    assert server is not None and world.fault is not None
    mtu = int(str(world.fault.params.get("path_mtu", 1400)))
    sa, ssem = _analyse(cap_dir, world, server)
    kinds = _kinds(ssem)
    assert kinds & {"pmtu_blackhole", "pmtu_suspect", "retransmissions", "retransmissions_overall"}
    retr = (sa.tcp_flags & FLAG_BITS["retransmission"]) != 0
    from_server = sa.cols.sport[sa.tcp_rows] == port
    big = retr & from_server
    assert big.sum() > 10
    sizes = sa.cols.paylen[sa.tcp_rows[big]]
    assert int(np.min(sizes)) + 52 > mtu  # every server retransmission is larger than the path MTU
    assert {format_addr(h, lo) for h, lo in zip(sa.cols.src_hi[sa.tcp_rows[big]], sa.cols.src_lo[sa.tcp_rows[big]],
                                                strict=True)} == {server_ip}
    # The client's small request, resent because its ACK rode on the lost segments, gets through.
    small = retr & ~from_server
    assert small.any() and int(np.max(sa.cols.paylen[sa.tcp_rows[small]])) + 52 <= mtu
    ca, csem = _analyse(cap_dir, world, client)
    from_server = (ca.cols.sport[ca.tcp_rows] == port)
    assert int(np.max(ca.cols.paylen[ca.tcp_rows[from_server]])) + 52 <= mtu  # nothing large ever arrives
    assert ssem["summary"]["rst_packets"] == 0
    assert csem["summary"]["icmp"] == {} and ssem["summary"]["icmp"] == {}  # frag-needed is filtered


def test_appliance_capture_shows_what_the_appliance_did(cap_dir: Path) -> None:
    """A capture on the NVA itself is the smoking gun: the ICMP it emits, the resets it forges."""
    names = set(scenario_names())
    if not {"pmtu-blackhole", "middlebox-rst", "healthy"} <= names:
        pytest.skip("scenarios not shipped")
    world = load_world("pmtu-blackhole")
    hop = str(world.fault.params.get("at")) if world.fault else ""
    appliance = world.vm_by_ip(hop)
    assert appliance is not None
    _, sem = _analyse(cap_dir, world, appliance[0].name)
    assert sem["summary"]["icmp"].get("3/4", 0) > 0 and sem["summary"]["decode_issues"] == {}
    hits = [f for f in sem["findings"] if f["kind"] == "pmtu_blackhole"]
    assert hits and hits[0]["metrics"]["mtu"] == int(str(world.fault.params["path_mtu"]))  # type: ignore[union-attr]
    world = load_world("middlebox-rst")
    _, sem = _analyse(cap_dir, world, appliance[0].name)
    assert "rst_injected" in _kinds(sem)
    world = load_world("healthy")
    _, sem = _analyse(cap_dir, world, appliance[0].name)
    assert sem["summary"]["tcp_conversations"] > 0 and not _kinds(sem) & FAULT_KINDS


@pytest.mark.parametrize("after_bytes", [0, 100, 3000])
def test_a_reset_inside_the_first_burst_is_not_followed_by_a_replayed_request(tmp_path: Path, after_bytes: int) -> None:
    """A forged RST in the server's first burst ends the connection: the client does not resend its request
    (it did, and the engine then saw small segments through and big ones lost: a false PMTU black hole)."""
    import yaml

    from netghost.lab.world import world_from_yaml

    data = yaml.safe_load((SCENARIO_DIR / "middlebox-rst.yaml").read_text(encoding="utf-8"))
    data["fault"]["params"] = {"injector_ip": "10.0.100.4", "after_bytes": after_bytes}
    world = world_from_yaml(yaml.safe_dump(data))
    path = tmp_path / "client.pcap"
    path.write_bytes(synthesize_capture(world, "web-vm-01", T0, T0 + WINDOW))
    sem = build_semantic(analyze_capture(path), path.stat().st_size)
    kinds = _kinds(sem)
    assert "rst_injected" in kinds or "rst_midstream" in kinds, kinds
    assert not kinds & {"pmtu_blackhole", "pmtu_suspect"}, sem["findings"]
    assert sem["summary"]["tcp_analysis"].get("retransmission", 0) == 0, sem["summary"]["tcp_analysis"]


def _rsts(a: Analysis, src: str, dst: str) -> list[tuple[int, int]]:
    """(TTL, has ACK) of each RST from ``src`` to ``dst`` in the capture."""
    rows = a.tcp_rows
    flags = a.cols.tcp_flags[rows]
    out = []
    for i, row in enumerate(rows):
        if not flags[i] & 0x04:
            continue
        s = format_addr(a.cols.src_hi[row], a.cols.src_lo[row])
        d = format_addr(a.cols.dst_hi[row], a.cols.dst_lo[row])
        if (s, d) == (src, dst):
            out.append((int(a.cols.ttl[row]), int(bool(flags[i] & 0x10))))
    return out


@pytest.mark.parametrize("name", [n for n in _by_fault("middlebox-rst") if _rst_to(load_world(n)) == "client"])
def test_a_reset_forged_toward_the_client_only_is_answered_by_the_client(cap_dir: Path, name: str) -> None:
    """The box resets the client alone: the client sees a RST the server never sent; the server, never told,
    resends the segment the box ate and the client's own stack answers it with a RST (its real TTL, no ACK).
    The client is the one host hit: another client on the same route is never reset."""
    world = load_world(name)
    client, server, server_ip, _port = _ends(world, name)
    assert server is not None and world.fault is not None
    client_ip = world.endpoint_ip(client)
    ca, csem = _analyse(cap_dir, world, client)
    sa, ssem = _analyse(cap_dir, world, server)
    forged = _rsts(ca, server_ip, client_ip)
    ttl = int(str(world.fault.params["injector_ttl"]))
    assert forged and {t for t, _ack in forged} == {ttl}  # the box's TTL at the client
    assert _rsts(sa, server_ip, client_ip) == []  # ... and the server never sent one
    assert "rst_injected" in _kinds(csem), csem["findings"]
    answered = _rsts(sa, client_ip, server_ip)
    assert answered and all(t != ttl and ack == 0 for t, ack in answered)  # the client's own stack, RFC 9293
    sent = _rsts(ca, client_ip, server_ip)
    assert len(sent) == len(answered) and {t for t, _ack in sent} == {64}  # sent by the client, seen at both
    assert ssem["summary"]["tcp_analysis"].get("retransmission", 0) > 0  # the eaten segment, resent after the RTO
    others = [f.client for f in world.spec.traffic if f.server == server and f.name != world.fault.flow]
    assert others
    for other in others:
        _, osem = _analyse(cap_dir, world, other)
        assert osem["summary"]["rst_packets"] == 0 and "rst_injected" not in _kinds(osem)


@pytest.mark.parametrize(("name", "answered"), [("healthy", True), ("healthy-icmp-denied", False)])
def test_a_ping_flow_is_echo_requests_answered_only_where_the_nsgs_let_icmp_in(tmp_path: Path, name: str,
                                                                               answered: bool) -> None:
    """ICMP in the data plane: a monitoring ping from web-vm-01 to redis-primary is one echo request per
    "request" (one identifier, sequence 1, 2, ...); the server's echo replies exist only where its NSG allows
    ICMP, and the denied requests never reach the server's capture."""
    import yaml

    from netghost.lab.world import world_from_yaml

    data = yaml.safe_load((SCENARIO_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    data["traffic"] = [{"name": "web-pings-redis", "client": "web-vm-01", "server": "redis-primary",
                        "protocol": "Icmp", "requests_per_minute": 60}]
    world = world_from_yaml(yaml.safe_dump(data))
    assert world.flow_outcome("web-pings-redis").outcome == ("delivered" if answered else "nsg-denied-inbound")
    sems = {}
    for vm in ("web-vm-01", "redis-primary"):
        path = tmp_path / f"{vm}.pcap"
        path.write_bytes(synthesize_capture(world, vm, T0, T0 + WINDOW))
        sems[vm] = build_semantic(analyze_capture(path), path.stat().st_size)
    requests = sems["web-vm-01"]["summary"]["icmp"].get("8/0", 0)
    assert 55 <= requests <= 61  # one a second over the minute
    assert sems["web-vm-01"]["summary"]["icmp"].get("0/0", 0) == (requests if answered else 0)
    assert sems["redis-primary"]["summary"]["icmp"].get("8/0", 0) == (requests if answered else 0)


def test_an_icmp_flow_has_no_port_and_a_tcp_flow_needs_one() -> None:
    import yaml

    from netghost.errors import LabError
    from netghost.lab.world import world_from_yaml

    data = yaml.safe_load((SCENARIO_DIR / "healthy.yaml").read_text(encoding="utf-8"))
    for flow, why in (({"protocol": "Icmp", "port": 22}, "has no port"), ({"protocol": "Tcp"}, "needs a port")):
        data["traffic"] = [{"name": "f", "client": "web-vm-01", "server": "redis-primary", **flow}]
        with pytest.raises(LabError, match=why):
            world_from_yaml(yaml.safe_dump(data))


def test_an_appliance_capture_shows_traffic_whose_far_end_is_on_the_internet(tmp_path: Path) -> None:
    """A spoke whose default route points at the hub NVA: the NVA's capture shows the client's HTTPS
    exchange with a public server, each packet arriving then leaving (TTL one lower); the server's packets
    arrive with the Internet's hops already taken off their TTL, and the client sees them one hop later."""
    import yaml

    from netghost.lab.world import world_from_yaml

    data = yaml.safe_load((SCENARIO_DIR / "healthy-via-appliance.yaml").read_text(encoding="utf-8"))
    data["route_tables"][0]["routes"].append({"name": "egress-via-fw", "address_prefix": "0.0.0.0/0",
                                              "next_hop_type": "VirtualAppliance", "next_hop_ip": "10.0.100.4"})
    data["traffic"] = [{"name": "web-to-partner", "client": "web-vm-01", "server": "93.184.216.34", "port": 443,
                        "app": "https", "requests_per_minute": 30, "request_bytes": 500, "response_bytes": 4000}]
    world = world_from_yaml(yaml.safe_dump(data))
    outcome = world.flow_outcome("web-to-partner")
    assert outcome.outcome == "delivered" and outcome.path == ("10.1.1.4", "10.0.100.4", "93.184.216.34")
    ttls: dict[str, dict[tuple[str, str], set[int]]] = {}
    for vm in ("fw-vm-01", "web-vm-01"):
        path = tmp_path / f"{vm}.pcap"
        path.write_bytes(synthesize_capture(world, vm, T0, T0 + WINDOW))
        a = analyze_capture(path)
        seen: dict[tuple[str, str], set[int]] = {}
        for row in a.tcp_rows.tolist():
            src = format_addr(a.cols.src_hi[row], a.cols.src_lo[row])
            dst = format_addr(a.cols.dst_hi[row], a.cols.dst_lo[row])
            if "93.184.216.34" in (src, dst):
                seen.setdefault((src, dst), set()).add(int(a.cols.ttl[row]))
        ttls[vm] = seen
    at_fw = ttls["fw-vm-01"]
    assert at_fw[("10.1.1.4", "93.184.216.34")] == {64, 63}  # arriving from the spoke, then forwarded on
    far = at_fw[("93.184.216.34", "10.1.1.4")]
    assert len(far) == 2 and max(far) < 64 - 5 and min(far) == max(far) - 1  # the Internet's hops, then the NVA's
    assert ttls["web-vm-01"][("93.184.216.34", "10.1.1.4")] == {min(far)}


def test_a_pmtu_black_hole_follows_from_the_nsg_that_drops_fragmentation_needed(tmp_path: Path) -> None:
    """The small-MTU hop is the same in both worlds; only the server's NSG differs. With ICMP denied the big
    segments vanish (retransmissions, nothing large arrives); with ICMP allowed PMTUD works: the sender's
    segments fit the path, nothing is retransmitted, and the lab calls the declared black hole incoherent."""
    import yaml

    from netghost.lab.world import world_from_yaml
    from netghost.lab.world._world import fault_problems

    data = yaml.safe_load((SCENARIO_DIR / "pmtu-blackhole.yaml").read_text(encoding="utf-8"))
    nsg = next(n for n in data["nsgs"] if n["name"] == "nsg-data")
    assert any(r["name"] == "DenyIcmpInbound" for r in nsg["rules"])
    black = world_from_yaml(yaml.safe_dump(data))
    nsg["rules"] = [r for r in nsg["rules"] if r["name"] != "DenyIcmpInbound"]
    open_icmp = world_from_yaml(yaml.safe_dump(data))
    assert black.flow_outcome("web-to-redis").impairment == "pmtu-blackhole" and fault_problems(black) == []
    assert open_icmp.flow_outcome("web-to-redis").impairment == "pmtud"
    assert any("no such impairment" in p for p in fault_problems(open_icmp))
    mtu = int(str(black.fault.params["path_mtu"]))  # type: ignore[union-attr]
    for world, broken in ((black, True), (open_icmp, False)):
        path = tmp_path / f"{broken}.pcap"
        path.write_bytes(synthesize_capture(world, "web-vm-01", T0, T0 + WINDOW))
        a = analyze_capture(path)
        sem = build_semantic(a, path.stat().st_size)
        from_server = a.cols.sport[a.tcp_rows] == 6379
        biggest = int(np.max(a.cols.paylen[a.tcp_rows[from_server]]))
        assert biggest + 52 <= mtu  # nothing larger than the path MTU ever reaches the client
        retrans = sem["summary"]["tcp_analysis"].get("retransmission", 0)
        assert (retrans > 0) == broken, sem["summary"]["tcp_analysis"]
        assert ("pmtu_blackhole" in _kinds(sem) or "pmtu_suspect" in _kinds(sem)) == broken
