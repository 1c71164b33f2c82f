"""Seed 000 "Command Templates", rewritten in the real azure-cli syntax of AZURE.md, must get the
classification the seed gives each operation (seed 002 repeats the same table)."""

from __future__ import annotations

import pytest

from netghost.redact import PathContext
from netghost.shell.classify import classify

# The seed's engine runs in the task's capture directory: that is the session directory its outputs may
# go to (issue 28 confines the engine's writes to the shell's working directory).
SESSION = PathContext(cwd="/tmp/captures")

# (operation, command in the corrected syntax of AZURE.md §1/§6, verdict, tier) -- seed 000 table.
SEED_000_TEMPLATES = [
    ("Detect target type", "az resource show --ids /subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg1/providers/Microsoft.Compute/virtualMachines/web-vm-01 --query type -o tsv", "SAFE", 2),
    ("Detect target type (short name)", 'az vm show -g rg1 -n web-vm-01 --query "{id:id, location:location}" -o tsv', "SAFE", 2),
    ("Verify storage access", "az storage container exists --account-name ghoststore -n captures --auth-mode login --query exists -o tsv", "SAFE", 2),
    ("Create capture (VM)", "az network watcher packet-capture create -g rg1 -n ghost_web-vm-01_20250115T143200 --vm web-vm-01 --storage-account ghoststore --storage-path https://ghoststore.blob.core.windows.net/captures --time-limit 60 --query storageLocation.storagePath -o tsv", "RISKY", 2),
    ("Create capture (VMSS)", "az network watcher packet-capture create -g rg1 -n ghost_vmss1_20250115T143200 --target vmss1 --target-type AzureVMSS --storage-account ghoststore --time-limit 60 -o json", "RISKY", 2),
    ("Poll capture status", "az network watcher packet-capture show-status -l eastus -n ghost_web-vm-01_20250115T143200 --query packetCaptureStatus -o tsv", "SAFE", 2),
    ("Poll capture (show)", "az network watcher packet-capture show -l eastus -n ghost_web-vm-01_20250115T143200 --query provisioningState -o tsv", "SAFE", 2),
    ("Download capture blob", "az storage blob download --account-name ghoststore -c captures -n ghost_web-vm-01_20250115T143200.cap -f /tmp/captures/web-vm-01.cap --auth-mode login --no-progress -o none", "RISKY", 2),
    ("Analyze single capture", "python pcap_forensics.py /tmp/captures/web-vm-01.cap --semantic-dir /tmp/captures --report-dir /tmp/captures", "SAFE", 1),
    ("Compare two captures", "python pcap_forensics.py /tmp/captures/a.cap --compare /tmp/captures/b.cap --semantic-dir /tmp/captures --report-dir /tmp/captures", "SAFE", 1),
    ("Analyze (console script)", "pcap-forensics /tmp/captures/web-vm-01.cap --semantic-dir /tmp/captures --report-dir /tmp/captures", "SAFE", 1),
    ("Analyze (module)", "python -m netghost.forensics /tmp/captures/a.cap --compare /tmp/captures/b.cap --semantic-dir out --report-dir out", "SAFE", 1),
    ("Stop capture early", "az network watcher packet-capture stop -l eastus -n ghost_web-vm-01_20250115T143200", "RISKY", 2),
    ("Delete packet capture", "az network watcher packet-capture delete -l eastus -n ghost_web-vm-01_20250115T143200", "RISKY", 2),
    ("Delete storage blob", "az storage blob delete --account-name ghoststore -c captures -n ghost_web-vm-01_20250115T143200.cap --auth-mode login", "RISKY", 2),
    ("Sweep orphans", "az network watcher packet-capture list -l eastus --query \"[?starts_with(name, 'ghost_')].name\" -o tsv", "SAFE", 2),
    ("Find watcher region", "az network watcher list --query \"[?location=='eastus'].name\" -o tsv", "SAFE", 2),
    ("Cleanup local file", "rm /tmp/captures/web-vm-01.cap", "RISKY", 3),
    ("Read a report", "cat /tmp/captures/web-vm-01_forensic_report.md", "RISKY", 3),
]


@pytest.mark.parametrize(("operation", "command", "verdict", "tier"), SEED_000_TEMPLATES, ids=[r[0] for r in SEED_000_TEMPLATES])
def test_seed_000_command_templates(operation: str, command: str, verdict: str, tier: int) -> None:
    c = classify(command, local=SESSION)
    assert (c.verdict, c.tier) == (verdict, tier), f"{operation}: {c.reason}"
    assert c.environment == ("azure" if command.startswith("az ") else "local")
    assert c.error is None


# AZURE.md §5: read-only diagnostics, including the read-only POST actions.
AZURE_READ_ONLY = [
    "az network watcher test-ip-flow -g rg --vm VM --direction Inbound --protocol TCP --local 10.1.1.4:443 --remote 203.0.113.10:50000",
    "az network watcher show-next-hop -g rg --vm VM --source-ip 10.1.1.4 --dest-ip 8.8.8.8",
    "az network nic list-effective-nsg -g rg -n nic1",
    "az network nic show-effective-route-table -g rg -n nic1 -o table",
    "az network nsg rule list -g rg --nsg-name nsg1 --include-default",
    "az network route-table route list -g rg --route-table-name rt",
    "az network vnet peering list -g rg --vnet-name vnet1",
    "az network private-dns zone list -g rg",
    "az network private-dns record-set a list -g rg -z privatelink.blob.core.windows.net",
    "az network private-dns link vnet list -g rg -z zone.example",
    "az network watcher show-topology -g rg",
    "az network watcher run-configuration-diagnostic --resource /x --direction Inbound --protocol TCP --source 10.0.0.4 --destination 10.0.0.5 --port 443",
    "az network watcher show-security-group-view -g rg --vm VM",
    "az vm get-instance-view -g rg -n VM",
    "az vm extension list -g rg --vm-name VM --query \"[?publisher=='Microsoft.Azure.NetworkWatcher'].{name:name,state:provisioningState}\" -o tsv",
]


@pytest.mark.parametrize("command", AZURE_READ_ONLY)
def test_azure_md_read_only_diagnostics_are_safe(command: str) -> None:
    c = classify(command)
    assert (c.verdict, c.tier) == ("SAFE", 2), c.reason


def test_test_connectivity_sends_live_probes_so_it_is_risky() -> None:
    c = classify("az network watcher test-connectivity -g rg --source-resource vm1 --dest-address 10.2.0.4 --dest-port 1433")
    assert c.verdict == "RISKY"


# The seed's templates verbatim (placeholders filled): even where AZURE.md shows the arguments are
# wrong for azure-cli 2.91, the verb decides, so the classification is the seed's.
SEED_000_VERBATIM = [
    ("az resource show --ids /subscriptions/0/resourceGroups/prod-rg/providers/Microsoft.Compute/virtualMachines/web-vm-01 --query type -o tsv", "SAFE"),
    ("az storage container exists --account-name forensics-sa --name captures --auth-mode login -o tsv", "SAFE"),
    ("az network watcher packet-capture create --vm web-vm-01 --resource-group prod-rg --name ghost_web-vm-01_20250115T143200 --storage-account forensics-sa --storage-path https://forensics-sa.blob.core.windows.net/captures/ghost_web-vm-01_20250115T143200.pcap --time-limit 60", "RISKY"),
    ("az network watcher packet-capture show --resource-group prod-rg --name ghost_web-vm-01_20250115T143200 --query provisioningState -o tsv", "SAFE"),
    ("az storage blob download --account-name forensics-sa --container-name captures --name ghost_web-vm-01_20250115T143200.pcap --file /tmp/captures/web-vm-01.pcap --no-progress", "RISKY"),
    ("python pcap_forensics.py /tmp/captures/web-vm-01.pcap --semantic-dir /tmp/captures --report-dir /tmp/captures", "SAFE"),
    ("python pcap_forensics.py /tmp/captures/a.pcap --compare /tmp/captures/b.pcap --semantic-dir /tmp/captures --report-dir /tmp/captures", "SAFE"),
    ("az network watcher packet-capture delete --resource-group prod-rg --name ghost_web-vm-01_20250115T143200", "RISKY"),
    ("az storage blob delete --account-name forensics-sa --container-name captures --name ghost_web-vm-01_20250115T143200.pcap", "RISKY"),
    ("rm /tmp/captures/web-vm-01.pcap", "RISKY"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "verdict"), SEED_000_VERBATIM)
def test_seed_000_templates_verbatim(command: str, verdict: str) -> None:
    assert classify(command, local=SESSION).verdict == verdict
