"""Everyday reads of a network engineer, with the verdict each must get and why (issue 28: benign reads SAFE).

A network diagnosis reads: the virtual network, its subnets, NSGs, routes, NICs, load balancers, gateways,
private endpoints and DNS zones; the VMs and scale sets behind them; storage accounts and their network rules;
metrics and the activity log; and, locally, addresses, routes, sockets, DNS answers, HTTP and TLS handshakes
toward the hosts the complaint names, and the captures it took. Each base command below is spelled several
ways (resource names, short and long options, output formats, JMESPath queries, option order) under a fixed
seed.

``expected`` is what the catalogue's and the policy's *data* says, not what the classifier answers today:

- SAFE: a read whose REST operations only read and whose responses carry no secret (azure-cli 2.91's own
  command table and models), or a probe toward the investigation's scope in a data-free shape;
- NOT_SAFE: a read whose response model declares a readable secret (a VPN connection's ``sharedKey``, an
  ExpressRoute circuit's ``authorizationKey``, an ACR task's ``contextAccessToken`` and
  ``credentials...password.value``, a SQL server's ``administratorLoginPassword``, a web app's
  ``siteConfig.machineKey``, a Redis cache's ``rdb-storage-connection-string``), that mints one (boot log SAS
  URIs, ACR repository tokens), or a command azure-cli 2.91 does not have (an extension's);
- SAFE with ``gap``: a read the data says is secret-free that the classifier still stops (the test marks
  them as known gaps, strict, so they flip to failures the day they are fixed).

Rows are classified in the context an investigation runs in (:data:`SCOPE_TEXT`, :data:`SESSION`).
Run ``python tests/shell/everyday_corpus.py`` to rewrite ``tests/data/shell/everyday_reads.jsonl``.
"""

from __future__ import annotations

import json
import random
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

SEED = 2891
OUT = Path(__file__).resolve().parents[1] / "data" / "shell" / "everyday_reads.jsonl"
SCOPE_TEXT = ("web01 (10.0.1.4) in vnet-hub 10.0.0.0/16 cannot reach api.contoso.com and db01.contoso.internal "
              "on 1433 since 05:00; sql1.database.windows.net resolves publicly")
SESSION = "/home/azureuser/audit/session-20261128T1200"
SUB = "00000000-0000-0000-0000-000000000000"

Row = dict[str, str]

RGS = ["rg-net", "rg-app", "rg-hub", "contoso-prod-rg"]
FORMATS = [[], ["-o", "table"], ["-o", "json"], ["-o", "tsv"], ["--output", "jsonc"], ["-o", "yaml"]]
QUERIES = [[], [], ["--query", "[].name"], ["--query", "[].{name:name, state:provisioningState}"], ["--query", "length(@)"]]
SHOW_QUERIES = [[], [], ["--query", "id"], ["--query", "properties.provisioningState"], ["--query", "{name:name, location:location}"]]
VM_ID = f"/subscriptions/{SUB}/resourceGroups/rg-app/providers/Microsoft.Compute/virtualMachines/web01"
NSG_ID = f"/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/networkSecurityGroups/nsg-web"

# (class, argv with {rg}, expected, why); list-style commands get FORMATS x QUERIES, show-style SHOW_QUERIES.
AZ_READS: list[tuple[str, str, str, str]] = [
    ("az-network", "network vnet list", "SAFE", "VirtualNetworks_List: GET, no secret in VirtualNetwork"),
    ("az-network", "network vnet show -g {rg} -n vnet-hub", "SAFE", "VirtualNetworks_Get"),
    ("az-network", "network vnet subnet list -g {rg} --vnet-name vnet-hub", "SAFE", "Subnets_List"),
    ("az-network", "network vnet subnet show -g {rg} --vnet-name vnet-hub -n snet-app", "SAFE", "Subnets_Get"),
    ("az-network", "network vnet peering list -g {rg} --vnet-name vnet-hub", "SAFE", "VirtualNetworkPeerings_List"),
    ("az-network", "network vnet list-available-ips -g {rg} -n vnet-hub", "SAFE", "CheckIPAddressAvailability: GET"),
    ("az-network", "network nsg list", "SAFE", "NetworkSecurityGroups_ListAll"),
    ("az-network", "network nsg show -g {rg} -n nsg-web", "SAFE", "NetworkSecurityGroups_Get"),
    ("az-network", "network nsg rule list -g {rg} --nsg-name nsg-web", "SAFE", "SecurityRules_List"),
    ("az-network", "network nsg rule show -g {rg} --nsg-name nsg-web -n allow-https", "SAFE", "SecurityRules_Get"),
    ("az-network", "network nic list -g {rg}", "SAFE", "NetworkInterfaces_List"),
    ("az-network", "network nic show -g {rg} -n web01-nic", "SAFE", "NetworkInterfaces_Get"),
    ("az-network", "network nic show-effective-route-table -g {rg} -n web01-nic", "SAFE", "effectiveRouteTable: a read-only POST"),
    ("az-network", "network nic list-effective-nsg -g {rg} -n web01-nic", "SAFE", "effectiveNetworkSecurityGroups: a read-only POST"),
    ("az-network", "network nic ip-config list -g {rg} --nic-name web01-nic", "SAFE", "NetworkInterfaces_Get"),
    ("az-network", "network route-table list", "SAFE", "RouteTables_ListAll"),
    ("az-network", "network route-table show -g {rg} -n rt-spoke", "SAFE", "RouteTables_Get"),
    ("az-network", "network route-table route list -g {rg} --route-table-name rt-spoke", "SAFE", "Routes_List"),
    ("az-network", "network public-ip list", "SAFE", "PublicIPAddresses_ListAll"),
    ("az-network", "network public-ip show -g {rg} -n pip-gw", "SAFE", "PublicIPAddresses_Get"),
    ("az-network", "network lb list", "SAFE", "LoadBalancers_ListAll"),
    ("az-network", "network lb show -g {rg} -n lb-web", "SAFE", "LoadBalancers_Get"),
    ("az-network", "network lb probe list -g {rg} --lb-name lb-web", "SAFE", "LoadBalancers_Get (probes)"),
    ("az-network", "network lb rule list -g {rg} --lb-name lb-web", "SAFE", "LoadBalancers_Get (rules)"),
    ("az-network", "network lb address-pool list -g {rg} --lb-name lb-web", "SAFE", "LoadBalancerBackendAddressPools_List"),
    ("az-network", "network application-gateway list", "SAFE", "ApplicationGateways_ListAll (certificate passwords are write-only)"),
    ("az-network", "network application-gateway show -g {rg} -n agw", "SAFE", "ApplicationGateways_Get"),
    ("az-network", "network application-gateway show-backend-health -g {rg} -n agw", "SAFE", "backendhealth: a read-only POST"),
    ("az-network", "network application-gateway http-listener list -g {rg} --gateway-name agw", "SAFE", "ApplicationGateways_Get"),
    ("az-network", "network application-gateway probe list -g {rg} --gateway-name agw", "SAFE", "ApplicationGateways_Get"),
    ("az-network", "network private-endpoint list", "SAFE", "PrivateEndpoints_ListBySubscription"),
    ("az-network", "network private-endpoint show -g {rg} -n pe-sql", "SAFE", "PrivateEndpoints_Get"),
    ("az-network", "network private-dns zone list", "SAFE", "PrivateZones_List"),
    ("az-network", "network private-dns record-set a list -g {rg} -z privatelink.database.windows.net", "SAFE", "RecordSets_ListByType"),
    ("az-network", "network private-dns link vnet list -g {rg} -z privatelink.database.windows.net", "SAFE", "VirtualNetworkLinks_List"),
    ("az-network", "network dns zone list", "SAFE", "Zones_List"),
    ("az-network", "network dns record-set list -g {rg} -z contoso.com", "SAFE", "RecordSets_ListByDnsZone"),
    ("az-network", "network dns record-set a show -g {rg} -z contoso.com -n www", "SAFE", "RecordSets_Get"),
    ("az-network", "network watcher list", "SAFE", "NetworkWatchers_ListAll"),
    ("az-network", "network watcher show-next-hop -g {rg} --vm web01 --source-ip 10.0.1.4 --dest-ip 10.0.2.5", "SAFE", "nextHop: a read-only POST"),
    ("az-network", "network watcher test-ip-flow -g {rg} --vm web01 --direction Outbound --protocol TCP --local 10.0.1.4:50000 --remote 10.0.2.5:1433", "SAFE", "ipFlowVerify: a read-only POST"),
    ("az-network", "network watcher show-topology -g {rg}", "SAFE", "topology: a read-only POST"),
    ("az-network", "network watcher flow-log list -l westeurope", "SAFE", "FlowLogs_List"),
    ("az-network", "network watcher packet-capture list -l westeurope", "SAFE", "PacketCaptures_List"),
    ("az-network", "network vnet-gateway list -g {rg}", "SAFE", "VirtualNetworkGateways_List"),
    ("az-network", "network vnet-gateway list-bgp-peer-status -g {rg} -n vgw", "SAFE", "getBgpPeerStatus: a read-only POST"),
    ("az-network", "network vnet-gateway list-learned-routes -g {rg} -n vgw", "SAFE", "getLearnedRoutes: a read-only POST"),
    ("az-network", "network local-gateway list -g {rg}", "SAFE", "LocalNetworkGateways_List"),
    ("az-network", "network nat gateway list", "SAFE", "NatGateways_ListAll"),
    ("az-network", "network asg list", "SAFE", "ApplicationSecurityGroups_ListAll"),
    ("az-network", "network list-usages -l westeurope", "SAFE", "Usages_List"),
    ("az-compute", "vm list", "SAFE", "VirtualMachines_ListAll (adminPassword and customData are write-only)"),
    ("az-compute", "vm list -d", "SAFE", "VirtualMachines_ListAll plus NIC and public IP reads"),
    ("az-compute", "vm show -g {rg} -n web01", "SAFE", "VirtualMachines_Get"),
    ("az-compute", "vm get-instance-view -g {rg} -n web01", "SAFE", "VirtualMachines_InstanceView"),
    ("az-compute", "vm list-ip-addresses -g {rg} -n web01", "SAFE", "VirtualMachines_Get, NIC and public IP reads"),
    ("az-compute", "vm nic list -g {rg} --vm-name web01", "SAFE", "VirtualMachines_Get"),
    ("az-compute", "vm list-sizes -l westeurope", "SAFE", "VirtualMachineSizes_List"),
    ("az-compute", "vm extension list -g {rg} --vm-name web01", "SAFE", "VirtualMachineExtensions_List (protectedSettings are write-only)"),
    ("az-compute", "vm identity show -g {rg} -n web01", "SAFE", "VirtualMachines_Get (identity ids, no token)"),
    ("az-compute", "vmss list", "SAFE", "VirtualMachineScaleSets_ListAll"),
    ("az-compute", "vmss show -g {rg} -n vmss-front", "SAFE", "VirtualMachineScaleSets_Get"),
    ("az-compute", "vmss list-instances -g {rg} -n vmss-front", "SAFE", "VirtualMachineScaleSetVMs_List"),
    ("az-storage", "storage account list", "SAFE", "StorageAccounts_List (keys only through listKeys)"),
    ("az-storage", "storage account show -g {rg} -n stghost", "SAFE", "StorageAccounts_GetProperties"),
    ("az-storage", "storage account network-rule list -g {rg} --account-name stghost", "SAFE", "StorageAccounts_GetProperties"),
    ("az-storage", "storage container list --account-name stghost --auth-mode login", "SAFE", "List Containers (data plane, Entra auth)"),
    ("az-storage", "storage blob list --account-name stghost -c captures --auth-mode login", "SAFE", "List Blobs (data plane, Entra auth)"),
    ("az-monitor", f"monitor metrics list --resource {VM_ID} --metric Percentage_CPU", "SAFE", "Metrics_List"),
    ("az-monitor", f"monitor metrics list-definitions --resource {VM_ID}", "SAFE", "MetricDefinitions_List"),
    ("az-monitor", "monitor activity-log list -g {rg} --offset 6h", "SAFE", "ActivityLogs_List"),
    ("az-monitor", f"monitor diagnostic-settings list --resource {NSG_ID}", "SAFE", "DiagnosticSettings_List"),
    ("az-monitor", "monitor metrics alert list -g {rg}", "SAFE", "MetricAlerts_ListByResourceGroup"),
    ("az-monitor", "monitor log-analytics workspace list", "SAFE", "Workspaces_List (shared keys only through sharedKeys)"),
    ("az-monitor", "monitor log-analytics workspace show -g {rg} -n law1", "SAFE", "Workspaces_Get"),
    ("az-other", "account show", "SAFE", "the CLI's local profile: the signed-in account, no token"),
    ("az-other", "account list-locations", "SAFE", "Subscriptions_ListLocations"),
    ("az-other", "group list", "SAFE", "ResourceGroups_List"),
    ("az-other", "group show -n {rg}", "SAFE", "ResourceGroups_Get"),
    ("az-other", "resource list -g {rg}", "SAFE", "Resources_ListByResourceGroup"),
    ("az-other", f"resource show --ids {NSG_ID}", "SAFE", "a generic GET resolved to NetworkSecurityGroups_Get"),
    ("az-other", "role assignment list -g {rg}", "SAFE", "RoleAssignments_ListForScope"),
    ("az-other", "keyvault list", "SAFE", "Vaults_ListBySubscription"),
    ("az-other", "keyvault show -n kv-prod", "SAFE", "Vaults_Get (access policies name permissions, not values)"),
    ("az-other", "aks list", "SAFE", "ManagedClusters_List (kubeconfigs only through listClusterUserCredential)"),
    ("az-other", "aks show -g {rg} -n aks1", "SAFE", "ManagedClusters_Get"),
    ("az-other", "aks nodepool list -g {rg} --cluster-name aks1", "SAFE", "AgentPools_List"),
    # The data says these reads print a secret, mint one, or are not azure-cli 2.91 commands.
    ("az-secret", "network vpn-connection list -g {rg}", "NOT_SAFE", "VirtualNetworkGatewayConnection.sharedKey is readable"),
    ("az-secret", "network vpn-connection show -g {rg} -n conn-onprem", "NOT_SAFE", "VirtualNetworkGatewayConnection.sharedKey is readable"),
    ("az-secret", "network express-route list", "NOT_SAFE", "ExpressRouteCircuit authorizations[].authorizationKey is readable"),
    ("az-secret", "acr task show -n build1 -r reg1", "NOT_SAFE", "the containerregistrytasks TypeSpec model declares Task step contextAccessToken "
     "and credentials.customRegistries.*.password.value readable (visibility read)"),
    ("az-secret", "acr task list -r reg1", "NOT_SAFE", "the same Task model"),
    ("az-secret", "sql server list", "NOT_SAFE", "the SQL Server model declares administratorLoginPassword readable"),
    ("az-secret", "webapp list", "NOT_SAFE", "the Site model declares siteConfig.machineKey.validationKey readable"),
    ("az-secret", "redis show -g {rg} -n redis1", "NOT_SAFE", "RedisConfiguration rdb-storage-connection-string is readable"),
    ("az-secret", "vm boot-diagnostics get-boot-log-uris -g {rg} -n web01", "NOT_SAFE", "retrieveBootDiagnosticsData mints SAS URIs"),
    ("az-secret", "acr repository list -n reg1", "NOT_SAFE", "exchanges the login for a registry refresh token"),
    ("az-extension", "network firewall list", "NOT_SAFE", "the azure-firewall extension: not an azure-cli 2.91 command"),
    ("az-extension", "network bastion list", "NOT_SAFE", "the bastion extension: not an azure-cli 2.91 command"),
    ("az-extension", "network vhub list", "NOT_SAFE", "the virtual-wan extension: not an azure-cli 2.91 command"),
    ("az-extension", "network dns resolver list", "NOT_SAFE", "the dns-resolver extension: not an azure-cli 2.91 command"),
    # Secret-free by their REST responses, still stopped (known gaps, see the test):
    ("az-other", "keyvault secret list --vault-name kv-prod", "SAFE", "GET /secrets: SecretListResult/SecretItem carry ids, "
     "attributes, tags and contentType, never a value"),
    ("az-other", "keyvault key list --vault-name kv-prod", "SAFE", "GET /keys: KeyItem carries ids and attributes"),
    ("az-other", "keyvault certificate list --vault-name kv-prod", "SAFE", "GET /certificates: CertificateItem carries ids, "
     "attributes and thumbprints"),
    ("az-gap", "role assignment list --assignee 11111111-2222-3333-4444-555555555555", "SAFE", "gap: --assignee resolves the "
     "principal with a Microsoft Graph GET (send_raw_request), which the catalogue records as a local effect"),
]  # fmt: skip

TARGETS = ["api.contoso.com", "db01.contoso.internal", "10.0.1.4", "10.0.2.5"]
CAPTURES = ["capture.pcap", "artifacts/web01.pcap", f"{SESSION}/captures/ghost_web01/artifacts/web01.cap"]
LOCAL_READS: list[tuple[str, str, str, str]] = [
    ("ip", "ip -br addr", "SAFE", "addresses"), ("ip", "ip route show", "SAFE", "routes"), ("ip", "ip -6 route", "SAFE", "routes"),
    ("ip", "ip neigh show", "SAFE", "ARP/ND cache"), ("ip", "ip link show eth0", "SAFE", "link state"),
    ("ip", "ip rule show", "SAFE", "policy routing"), ("ip", "ip -s link", "SAFE", "counters"),
    ("ip", "ip route get {ip}", "SAFE", "route lookup"),
    ("sockets", "ss -tunap", "SAFE", "sockets"), ("sockets", "ss -ltn", "SAFE", "listeners"), ("sockets", "ss -s", "SAFE", "summary"),
    ("sockets", "ss -tn state established", "SAFE", "connections"), ("sockets", "ss -tan dst {ip}", "SAFE", "connections to a host"),
    ("sockets", "netstat -rn", "SAFE", "routes"),
    ("dns", "dig {host}", "SAFE", "a named host"), ("dns", "dig +short {host}", "SAFE", "a named host"),
    ("dns", "dig @168.63.129.16 {host}", "SAFE", "Azure's resolver"), ("dns", "dig -x {ip}", "SAFE", "reverse lookup in scope"),
    ("dns", "dig {host} AAAA", "SAFE", "a named host"), ("dns", "nslookup {host}", "SAFE", "a named host"),
    ("dns", "nslookup {host} 168.63.129.16", "SAFE", "Azure's resolver"), ("dns", "host {host}", "SAFE", "a named host"),
    ("dns", "host -t CNAME {host}", "SAFE", "a named host"),
    ("http", "curl -I https://{host}", "SAFE", "HEAD toward a named host"),
    ("http", "curl -sI https://{host}/health", "SAFE", "HEAD toward a named host"),
    ("http", "curl -v https://{host}/health -o /dev/null", "SAFE", "verbose GET, body discarded"),
    ("http", "curl -s -o /dev/null -w '%{{http_code}} %{{time_total}}\\n' https://{host}/", "SAFE", "status and timing"),
    ("http", "curl -4 --connect-timeout 5 -m 10 -sS https://{host}/health", "SAFE", "IPv4, timeouts"),
    ("http", "curl --http2 -I https://{host}", "SAFE", "protocol version"), ("http", "curl --http1.1 -sv https://{host}/", "SAFE", "protocol version"),
    ("http", "curl --tlsv1.2 -vI https://{host}", "SAFE", "TLS version"), ("http", "curl -6 -sI https://{host}/", "SAFE", "IPv6"),
    ("http", "curl -k https://10.0.1.4:8443/healthz", "SAFE", "a private address in scope"),
    ("http", "curl -s http://10.0.1.4:8080/status", "SAFE", "a private address in scope"),
    ("http", "curl --resolve api.contoso.com:443:10.0.1.4 -I https://api.contoso.com/", "SAFE", "pinning a named host to its backend"),
    ("path", "ping -c 4 {ip}", "SAFE", "reachability"), ("path", "ping -c 3 {host}", "SAFE", "reachability"),
    ("path", "traceroute -n {ip}", "SAFE", "path"), ("path", "traceroute -T -p 1433 {ip}", "SAFE", "TCP path"),
    ("path", "tracepath -n {ip}", "SAFE", "path MTU"), ("path", "mtr -r -c 10 -n {ip}", "SAFE", "report mode"),
    ("tls", "openssl s_client -connect api.contoso.com:443 -servername api.contoso.com", "SAFE", "a TLS handshake in scope"),
    ("tls", "openssl s_client -connect api.contoso.com:443 -showcerts", "SAFE", "a TLS handshake in scope"),
    ("capture", "tcpdump -r {cap}", "SAFE", "reading a capture"), ("capture", "tcpdump -nn -r {cap} port 1433", "SAFE", "reading a capture"),
    ("capture", "tcpdump -r {cap} -c 100 host 10.0.2.5", "SAFE", "reading a capture"),
    ("capture", "tshark -r {cap}", "SAFE", "reading a capture"), ("capture", "tshark -r {cap} -Y tcp.analysis.retransmission", "SAFE", "a display filter"),
    ("capture", "tshark -r {cap} -q -z conv,tcp", "SAFE", "statistics"),
    ("capture", "tshark -r {cap} -T fields -e ip.src -e ip.dst -e tcp.dstport", "SAFE", "fields"),
    ("capture", "capinfos {cap}", "SAFE", "capture summary"), ("capture", "capinfos -T -m {cap}", "SAFE", "capture summary"),
    ("capture", "pcap-forensics {cap}", "SAFE", "the engine as itself, outputs in the session"),
    ("capture", "pcap-forensics {cap} --format md,json", "SAFE", "the engine as itself"),
    # Reading the session's own outputs: not allowlisted today (any file could be named).
    ("session-output", "cat report.md", "SAFE", "gap: the session's own report; readers are not confined to the session directory yet"),
    ("session-output", "head -n 50 artifacts/flows.csv", "SAFE", "gap: the session's own output"),
    ("session-output", "jq . artifacts/summary.json", "SAFE", "gap: the session's own output"),
]  # fmt: skip


def _row(command: str, expected: str, cls: str, why: str) -> Row:
    return {"command": command, "expected": expected, "class": cls, "why": why}


def _spell(argv: list[str], rng: random.Random) -> list[str]:
    """The same read with long option names where azure-cli has them, at random."""
    longs = {"-g": "--resource-group", "-n": "--name", "-o": "--output", "-l": "--location", "-z": "--zone-name"}
    return [longs[w] if w in longs and rng.random() < 0.4 else w for w in argv]


def az_rows(rng: random.Random, per_read: int = 3) -> Iterator[Row]:
    """Each az read with resource groups, output formats and queries drawn at random."""
    for cls, base, expected, why in AZ_READS:
        seen: set[str] = set()
        for _ in range(per_read):
            words = base.format(rg=rng.choice(RGS)).split()
            show = any(w in ("show", "get-instance-view") or w.startswith("show-") for w in words)
            argv = ["az", *_spell(words, rng), *rng.choice(FORMATS), *rng.choice(SHOW_QUERIES if show else QUERIES)]
            command = shlex.join(argv)
            if command not in seen:
                seen.add(command)
                yield _row(command, expected, cls, why)


def local_rows(rng: random.Random, per_read: int = 2) -> Iterator[Row]:
    """Each local read toward the hosts and captures of the investigation."""
    for cls, template, expected, why in LOCAL_READS:
        seen: set[str] = set()
        for _ in range(per_read):
            command = template.format(host=rng.choice(TARGETS[:2]), ip=rng.choice(TARGETS[2:]), cap=shlex.quote(rng.choice(CAPTURES)))
            if command not in seen:
                seen.add(command)
                yield _row(command, expected, cls, why)


def generate() -> list[Row]:
    rng = random.Random(SEED)
    return [*az_rows(rng), *local_rows(rng)]


def render(rows: list[Row]) -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)


if __name__ == "__main__":
    OUT.write_text(render(generate()), encoding="utf-8")
    print(f"wrote {len(generate())} rows to {OUT}", file=sys.stderr)
