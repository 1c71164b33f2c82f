"""Every builder's argv is accepted by the lab simulator's parser (the real CLI: test_conformance_real_az)."""

from __future__ import annotations

import pytest

from netghost.lab.az import REGISTRY
from netghost.lab.az._args import parse_command_args
from netghost.lab.az._run import _split
from netghost.orchestrator import _commands as cmd
from netghost.orchestrator._plan import MAX_CAPTURE_BYTES, PlanInputs, build_plan, storage_account_ref
from netghost.shell import classify

NIC = "/subscriptions/0/resourceGroups/prod-rg/providers/Microsoft.Network/networkInterfaces/web-vm-01VMNic"
NAME = "ghost_web-vm-01_20250115T143200"


def all_builder_argvs() -> list[list[str]]:
    """One argv per builder and per variant the orchestrator produces."""
    url = cmd.blob_url("forensicssa", "captures", f"{NAME}.cap")
    return [
        cmd.vm_show("prod-rg", "web-vm-01"),
        cmd.vmss_show("prod-rg", "web-vmss"),
        cmd.aks_show("prod-rg", "aks-prod"),
        cmd.vmss_extension_list("prod-rg", "web-vmss"),
        cmd.vmss_instances("prod-rg", "web-vmss"),
        cmd.subnet_nsg("/subscriptions/0/resourceGroups/prod-rg/providers/Microsoft.Network/virtualNetworks/"
                       "vnet-prod/subnets/web"),
        cmd.nsg_outbound_rules("/subscriptions/0/resourceGroups/prod-rg/providers/Microsoft.Network/"
                               "networkSecurityGroups/nsg-web"),
        cmd.extension_list("prod-rg", "web-vm-01"),
        cmd.watcher_list(),
        cmd.nic_effective_nsg(NIC),
        cmd.storage_account_show("forensicssa"),
        cmd.storage_account_show("forensicssa", "/subscriptions/0/resourceGroups/shared-rg/providers/"
                                                "Microsoft.Storage/storageAccounts/forensicssa"),
        *(cmd.container_exists("forensicssa", "captures", m) for m in ("login", "key")),
        cmd.capture_create("prod-rg", NAME, "web-vm-01", "forensicssa", url, 60, 104857600),
        cmd.capture_create("prod-rg", NAME, "web-vmss", "forensicssa", url, 60, 104857600, vmss=True),
        cmd.capture_show("eastus", NAME),
        cmd.capture_status("eastus", NAME),
        cmd.capture_list("eastus"),
        cmd.capture_delete("eastus", NAME),
        *(cmd.blob_exists("forensicssa", "captures", f"{NAME}.cap", m) for m in ("login", "key")),
        *(cmd.blob_list("forensicssa", "captures", f"{NAME}_", m) for m in ("login", "key")),
        *(cmd.blob_download("forensicssa", "captures", f"{NAME}.cap", "/tmp/x.cap", m) for m in ("login", "key")),
        *(cmd.blob_show("forensicssa", "captures", f"{NAME}.cap", m) for m in ("login", "key")),
        *(cmd.blob_delete("forensicssa", "captures", f"{NAME}.cap", m) for m in ("login", "key")),
    ]


@pytest.mark.parametrize("argv", all_builder_argvs(), ids=lambda a: " ".join(a[1:5]))
def test_builder_argv_parses_in_the_lab_az(argv: list[str]) -> None:
    words, rest = _split(argv[1:])
    assert words in REGISTRY, f"lab does not know az {' '.join(words)}"
    parse_command_args(REGISTRY[words].spec, rest)  # raises AzError (exit 2) on a usage error


@pytest.mark.parametrize("argv", all_builder_argvs(), ids=lambda a: " ".join(a[1:5]))
def test_rendered_command_round_trips_through_the_shell_parser(argv: list[str]) -> None:
    assert list(classify(cmd.render(argv)).argv) == argv


def test_read_only_steps_are_safe_and_mutations_risky() -> None:
    verdicts = {" ".join(a[1:5]): classify(cmd.render(a)).verdict for a in all_builder_argvs()}
    risky = {k for k, v in verdicts.items() if v == "RISKY"}
    assert all(k.split()[-1] in {"create", "download", "delete"} or "create" in k or "download" in k
               or "delete" in k for k in risky)
    assert verdicts["network watcher packet-capture show-status"] == "SAFE"
    assert classify(cmd.render(cmd.engine_run(("pcap-forensics",), "/tmp/w/a.cap", "/tmp/w"))).verdict == "SAFE"
    assert classify(cmd.render(cmd.remove_file("/w/a.cap"))).verdict == "RISKY"


def test_storage_commands_always_carry_auth_mode_and_download_is_quiet() -> None:
    for argv in all_builder_argvs():
        if argv[1] == "storage" and argv[2] != "account":  # data-plane commands (account show is ARM)
            assert "--auth-mode" in argv
    download = cmd.blob_download("sa", "c", "b.cap", "/x", "login")
    assert download[-2:] == ["-o", "none"] and "--no-progress" in download


def test_packet_capture_reads_use_location_never_resource_group() -> None:
    for argv in (cmd.capture_show("eastus", NAME), cmd.capture_status("eastus", NAME),
                 cmd.capture_list("eastus"), cmd.capture_delete("eastus", NAME)):
        assert "-l" in argv and "-g" not in argv and "--resource-group" not in argv


def test_plan_holds_every_lifecycle_command() -> None:
    plan = build_plan(PlanInputs(NAME, "web-vm-01", "prod-rg", "forensicssa", "captures", "login", 60,
                                 MAX_CAPTURE_BYTES, "/w/a.cap", "/w", ("pcap-forensics",)))
    verbs = [" ".join(s[1:5]) if s[0] == "az" else s[0] for s in plan]
    for needed in ("vm show -g prod-rg", "storage container exists --account-name",
                   "network watcher packet-capture create", "network watcher packet-capture show-status",
                   "storage blob download --account-name", "pcap-forensics",
                   "network watcher packet-capture delete", "storage blob delete --account-name", "rm"):
        assert any(v.startswith(needed) for v in verbs), needed


def test_an_account_in_another_group_is_created_by_id_and_read_by_name() -> None:
    """az expands a bare --storage-account with the target's -g (AZURE.md T3): an account elsewhere goes by id."""
    sid = "/subscriptions/0000/resourceGroups/ci-rg/providers/Microsoft.Storage/storageAccounts/cicaptures"
    assert storage_account_ref(sid) == ("cicaptures", sid)
    assert storage_account_ref("forensicssa") == ("forensicssa", None)
    plan = build_plan(PlanInputs(NAME, "artifacts-01", "tools-rg", "cicaptures", "captures", "login", 60,
                                 MAX_CAPTURE_BYTES, "/w/a.cap", "/w", ("pcap-forensics",), storage_account_id=sid))
    creates = [s for s in plan if s[4:5] == ["create"]]
    assert creates and all(s[s.index("--storage-account") + 1] == sid for s in creates)
    assert all("https://cicaptures.blob.core.windows.net/captures/" in s[s.index("--storage-path") + 1]
               for s in creates)
    blob_steps = [s for s in plan if s[:2] == ["az", "storage"] and s[2] != "account"]
    assert blob_steps and all(s[s.index("--account-name") + 1] == "cicaptures" for s in blob_steps)
    assert cmd.storage_account_show("cicaptures", sid) in plan  # resolved through ARM by its id
