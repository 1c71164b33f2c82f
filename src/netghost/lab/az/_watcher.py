"""``az network watcher list | test-ip-flow | show-next-hop | test-connectivity``.

The three diagnostics resolve the VM, then the regional watcher (exit 1 when the region has
none), then answer from :class:`~netghost.lab.world.World` — the same computation that shapes the
synthesized traffic, so the diagnostics and the packets agree.
"""

from __future__ import annotations

import ipaddress
import itertools
from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._arm_docs import guid, watcher_doc
from netghost.lab.az._arm_docs import ipconfig_id as _ipconfig_id
from netghost.lab.az._cloud_faults import WATCHER_EXTENSIONS, extension_missing, find_fault, no_watcher
from netghost.lab.az._context import AzContext, Command, find_vm, int_arg, ipv4_arg
from netghost.lab.az._errors import AzError
from netghost.lab.world import FlowOutcome, TrafficFlow, Vm

__all__ = ["COMMANDS", "require_watcher"]


def normalise_location(location: str) -> str:
    """``East US`` -> ``eastus``, as az does (it looks display names up in the location list)."""
    return location.replace(" ", "").lower()


def require_watcher(ctx: AzContext, location: str) -> str:
    """The watcher name for ``location``, or the real 'not enabled' error (exit 1)."""
    location = normalise_location(location)
    name = ctx.world.watcher_for(location)
    if name is None or find_fault(ctx.state.cloud_faults(), "no-network-watcher", region=location):
        raise no_watcher(location)
    return name


def require_extension(ctx: AzContext, vm: Vm) -> None:
    """Packet capture and connectivity checks need AzureNetworkWatcherExtension on the VM."""
    fault = find_fault(ctx.state.cloud_faults(), "extension-missing", vm=vm.name)
    if fault is not None or not any(e.lower() in WATCHER_EXTENSIONS for e in vm.extensions):
        raise extension_missing(ctx.world.vm_id(vm), fault)


def _watcher_list(ctx: AzContext, args: ParsedArgs) -> Any:
    faults = ctx.state.cloud_faults()
    return [
        watcher_doc(ctx.world, d.location, d.watcher_name, d.resource_group)
        for d in ctx.world.spec.network_watchers
        if not find_fault(faults, "no-network-watcher", region=d.location)
    ]


def _split_endpoint(text: str, arg: str) -> tuple[str, int | None]:
    ip, sep, port = text.rpartition(":")
    if not sep:
        raise AzError(1, f"ERROR: usage error: {arg} must be in X.X.X.X:PORT format\n")
    ipv4_arg(ip, arg)
    if port == "*":
        return ip, None
    try:
        number = int(port)
    except ValueError as exc:
        raise AzError(1, f"ERROR: usage error: {arg} must be in X.X.X.X:PORT format\n") from exc
    if not 0 <= number <= 65535:
        raise AzError(1, f"ERROR: usage error: {arg} port {number} is outside 0-65535\n")
    return ip, number


def _vm_and_nic(ctx: AzContext, args: ParsedArgs, ip: str | None = None) -> tuple[Vm, Any]:
    vm = find_vm(ctx, args["resource_group"], args["vm"])
    require_watcher(ctx, ctx.world.vm_location(vm))
    if args["nic"]:
        nic = next((n for n in vm.nics if (n.name or "").lower() == args["nic"].split("/")[-1].lower()), None)
        if nic is None:
            raise AzError(1, f"ERROR: (InvalidNic) NIC {args['nic']} is not attached to VM {vm.name}.\n")
    else:
        nic = next((n for n in vm.nics if n.private_ip == ip), vm.nics[0])
    return vm, nic


def _test_ip_flow(ctx: AzContext, args: ParsedArgs) -> Any:
    local_ip, local_port = _split_endpoint(args["local"], "--local")
    remote_ip, remote_port = _split_endpoint(args["remote"], "--remote")
    vm, nic = _vm_and_nic(ctx, args, local_ip)
    if nic.private_ip != local_ip:
        raise AzError(1, f"ERROR: (InvalidLocalIpAddress) Local IP address {local_ip} does not belong to "
                         f"the NIC of VM {vm.name}.\n")
    decision = ctx.world.evaluate_nsg(vm, args["direction"], protocol=args["protocol"], local_ip=local_ip,
                                      local_port=local_port, remote_ip=remote_ip, remote_port=remote_port, nic=nic)
    return {"access": decision.access, "ruleName": decision.rule_name}


def _show_next_hop(ctx: AzContext, args: ParsedArgs) -> Any:
    ipv4_arg(args["source_ip"], "--source-ip")
    _vm, nic = _vm_and_nic(ctx, args, args["source_ip"])
    hop = ctx.world.next_hop(nic, ipv4_arg(args["dest_ip"], "--dest-ip"))
    doc: dict[str, Any] = {"nextHopType": hop.next_hop_type, "routeTableId": hop.route_table_id}
    if hop.next_hop_ip:
        doc["nextHopIpAddress"] = hop.next_hop_ip
    return doc


def _hop(ctx: AzContext, kind: str, address: str, resource_id: str, issues: list[dict[str, Any]]) -> dict[str, Any]:
    return {"address": address, "id": guid("hop", address, kind), "issues": issues, "nextHopIds": [],
            "resourceId": resource_id, "type": kind}


def _test_connectivity(ctx: AzContext, args: ParsedArgs) -> Any:
    ctx.warn("WARNING: This command is in preview and under development. Reference and support levels: "
             "https://aka.ms/CLI_refstatus\n")
    w = ctx.world
    vm = find_vm(ctx, args["resource_group"], args["source_resource"])
    require_watcher(ctx, w.vm_location(vm))
    require_extension(ctx, vm)
    server = _connectivity_target(ctx, args, vm)
    protocol = (args["protocol"] or "Tcp")
    port = int_arg(args["dest_port"], "--dest-port") if args["dest_port"] else (80 if protocol == "Http" else 443)
    outcome = None
    if server is not None:  # Icmp probes are echo requests (no port); Http/Https/Tcp open a TCP connection
        flow = (TrafficFlow(name="connectivity-check", client=vm.name, server=server, protocol="Icmp")
                if protocol == "Icmp" else
                TrafficFlow(name="connectivity-check", client=vm.name, server=server, port=port, protocol="Tcp"))
        outcome = w.flow_outcome(flow)
    hops = _connectivity_hops(ctx, vm, outcome)
    reachable = outcome is not None and outcome.connects
    sent = 30
    doc: dict[str, Any] = {"connectionStatus": "Reachable" if reachable else "Unreachable", "hops": hops,
                           "probesSent": sent, "probesFailed": 0 if reachable else sent}
    if reachable and outcome is not None:
        loss = float(outcome.params.get("loss_rate", 0.0)) if outcome.impairment == "path-packet-loss" else 0.0  # type: ignore[arg-type]
        doc["probesFailed"] = round(sent * loss)
        doc.update({"avgLatencyInMs": 2, "minLatencyInMs": 1, "maxLatencyInMs": 4})
    return doc


def _connectivity_target(ctx: AzContext, args: ParsedArgs, vm: Vm) -> str | None:
    """The destination as a VM name or an address; None when a host name does not resolve."""
    w = ctx.world
    if args["dest_resource"]:
        return find_vm(ctx, args["resource_group"], args["dest_resource"]).name
    if not args["dest_address"]:
        raise AzError(1, "ERROR: usage error: --dest-resource ID | --dest-address ADDRESS\n")
    address: str = args["dest_address"]
    if address.replace(".", "").isdigit():
        ipv4_arg(address, "--dest-address")
        return address
    # a host name: the agent resolves it from its VNet
    dns = w.resolve(address, w.subnet_of(vm.nics[0])[0].name)
    owner = w.vm_by_ip(dns.addresses[0]) if dns.addresses else None
    return owner[0].name if owner else (dns.addresses[0] if dns.addresses else None)


def _connectivity_hops(ctx: AzContext, vm: Vm, outcome: FlowOutcome | None) -> list[dict[str, Any]]:
    """The hops test-connectivity reports (source, appliance, destination) with their issues."""
    w = ctx.world
    src_issues: list[dict[str, Any]] = []
    hops = [_hop(ctx, "Source", vm.nics[0].private_ip, _ipconfig_id(w, vm, vm.nics[0]), src_issues)]
    _note_source_issues(outcome, src_issues, hops)
    if outcome is not None and outcome.next_hop and outcome.next_hop.next_hop_type == "VirtualAppliance":
        ip = outcome.next_hop.next_hop_ip or ""
        found = w.vm_by_ip(ip)
        fw = w.firewall_by_ip(ip)
        rid = _ipconfig_id(w, *found) if found else (
            f"{w.firewall_id(fw)}/azureFirewallIpConfigurations/{fw.name}-ipconfig" if fw else "")
        issues: list[dict[str, Any]] = ([{"context": [], "origin": "Local", "severity": "Error", "type": "Platform"}]
                                        if outcome.outcome in ("appliance-down", "appliance-not-forwarding") else [])
        if outcome.outcome == "nsg-denied-at-appliance":  # the appliance NIC's NSG stops it there
            issues.append({"context": [{"key": "RuleName", "value": outcome.nsg.rule_name.split("/")[-1]
                                        if outcome.nsg else ""}],
                           "origin": outcome.nsg_direction or "Inbound",
                           "severity": "Error", "type": "NetworkSecurityRule"})
        hops.append(_hop(ctx, "VirtualAppliance", ip, rid, issues))
    if outcome is not None and outcome.server_ip and outcome.outcome not in _STOPPED_BEFORE_SERVER:
        kind, address, rid = _last_hop(ctx, outcome)
        hops.append(_hop(ctx, kind, address, rid, []))
        if outcome.outcome == "nsg-denied-inbound":
            hops[-1]["issues"].append({"context": [{"key": "RuleName", "value": outcome.nsg.rule_name.split("/")[-1]
                                                    if outcome.nsg else ""}],
                                       "origin": "Inbound", "severity": "Error", "type": "NetworkSecurityRule"})
    for prev, nxt in itertools.pairwise(hops):
        prev["nextHopIds"] = [nxt["id"]]
    return hops


_STOPPED_BEFORE_SERVER = ("appliance-down", "appliance-not-forwarding", "no-route", "nsg-denied-outbound",
                          "nsg-denied-at-appliance", "firewall-denied", "gateway-subnet-blocked")


def _last_hop(ctx: AzContext, outcome: FlowOutcome) -> tuple[str, str, str]:
    """(type, address, resource id) of the destination hop: a VM's (or a load balancer member's) NIC IP
    configuration, a private endpoint's NIC, or an address on the Internet (no resource)."""
    w = ctx.world
    server_ip = outcome.server_ip or ""
    backend = str(outcome.params.get("backend_ip", "")) or server_ip
    found = w.vm_by_ip(backend)
    if found is not None:
        return "VirtualMachine", backend, _ipconfig_id(w, *found)
    endpoint = w.private_endpoint_by_ip(server_ip)
    if endpoint is not None:
        pid = w.private_endpoint_id(endpoint)
        nic = w.rid(endpoint.resource_group, "Microsoft.Network/networkInterfaces", f"{endpoint.name}.nic.{guid(pid)}")
        return "PrivateEndpoint", server_ip, f"{nic}/ipConfigurations/privateEndpointIpConfig.{guid(pid, 'ipconfig')}"
    if not ipaddress.IPv4Address(server_ip).is_global:
        vnet = w.vnet_of_ip(server_ip)
        return ("VnetLocal" if vnet is not None else "VirtualNetworkGateway"), server_ip, ""
    return "Internet", server_ip, ""


def _note_source_issues(outcome: FlowOutcome | None, src_issues: list[dict[str, Any]],
                        hops: list[dict[str, Any]]) -> None:
    """The issues test-connectivity reports at the source: DNS, an NSG rule, a missing route."""
    if outcome is None or outcome.outcome == "dns-nxdomain":
        src_issues.append({"context": [], "origin": "Local", "severity": "Error", "type": "DnsResolution"})
    elif outcome.outcome == "nsg-denied-outbound":  # an inbound deny is the destination hop's issue (below)
        src_issues.append({"context": [{"key": "RuleName", "value": (outcome.nsg.rule_name.split("/")[-1]
                                                                     if outcome.nsg else "")}],
                           "origin": "Outbound", "severity": "Error", "type": "NetworkSecurityRule"})
    elif outcome.outcome == "no-route":
        src_issues.append({"context": [], "origin": "Local", "severity": "Error", "type": "UserDefinedRoute"
                           if outcome.next_hop and outcome.next_hop.route_table_id != "System Route" else "Platform"})


_VM_ARGS = (Arg("--vm", required=True), Arg("--nic"), Arg("--no-wait", kind="optbool"), Arg("--resource-group", "-g"))

COMMANDS = [
    Command(CommandSpec(("network", "watcher", "list"), ()), _watcher_list),
    Command(CommandSpec(("network", "watcher", "test-ip-flow"), (
        Arg("--direction", required=True, choices=("Inbound", "Outbound")), Arg("--local", required=True),
        Arg("--protocol", required=True, choices=("TCP", "UDP")), Arg("--remote", required=True), *_VM_ARGS,
    ), (("Run test-ip-flow verify to test logical connectivity from a VM to the specified destination IPv4 address and port.",
         "az network watcher test-ip-flow -g MyResourceGroup --direction Outbound --protocol TCP --local 10.0.0.4:* --remote 10.1.0.4:80 --vm MyVm"),),
        policy=True), _test_ip_flow),
    Command(CommandSpec(("network", "watcher", "show-next-hop"), (
        Arg("--dest-ip", required=True), Arg("--source-ip", required=True), *_VM_ARGS,
    ), (("Get the next hop from a VMs assigned IP address to a destination at 10.1.0.4.",
         "az network watcher show-next-hop -g MyResourceGroup --vm MyVm --source-ip 10.0.0.4 --dest-ip 10.1.0.4"),),
        policy=True), _show_next_hop),
    Command(CommandSpec(("network", "watcher", "test-connectivity"), (
        Arg("--source-resource", required=True), Arg("--no-wait", kind="optbool"),
        Arg("--protocol", choices=("Http", "Https", "Icmp", "Tcp")), Arg("--resource-group", "-g"),
        Arg("--source-port"), Arg("--dest-address"), Arg("--dest-port"), Arg("--dest-resource"),
        Arg("--headers", kind="many"), Arg("--method", choices=("Get",)), Arg("--valid-status-codes", kind="many"),
    ), (("Check connectivity between two virtual machines in the same resource group over port 80.",
         "az network watcher test-connectivity -g MyResourceGroup --source-resource MyVmId1 --dest-resource MyVmId2 --dest-port 80"),),
        policy=True), _test_connectivity),
]
