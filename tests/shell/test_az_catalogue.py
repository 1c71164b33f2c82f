"""The az catalogue (issue 28): az commands are judged by what azure-cli 2.91 calls, not by their verbs.

Why these tests: a verb-name table called `az acr task show --with-secure-properties`, `az acr webhook
get-config` and `az webapp auth-classic show` SAFE. The catalogue generated from azure-cli itself
(``tools/az_catalogue``) knows each command's REST operations, whether their responses carry secrets
and which options switch them; these tests check the shipped data decides those classes, that no az
command outside it is ever SAFE, and that the everyday reads the product issues stay SAFE.
"""

from __future__ import annotations

import ast
import json
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from netghost.shell.classify import classify
from netghost.shell.classify._az import classify_az, command_group
from netghost.shell.classify._azcat import Catalogue, load_catalogue
from netghost.shell.classify._azdecide import decide
from netghost.shell.classify._classify import _classify_builtin
from netghost.shell.classify._tables import load_tables

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "netghost" / "shell" / "classify" / "data" / "az_catalogue.json.gz"


def _corpus_az_commands() -> list[str]:
    """Every az command line in the shell corpora and shell tests (data files and string literals)."""
    out: list[str] = []
    for path in sorted((ROOT / "tests" / "data").glob("shell*/**/*")):
        if path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    cmd = json.loads(line).get("command")
                except (ValueError, AttributeError):
                    continue
                if isinstance(cmd, str) and cmd.startswith("az "):
                    out.append(cmd)
        elif path.suffix == ".txt":
            out += [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip().startswith("az ")]
    for path in sorted((ROOT / "tests" / "shell").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("az "):
                out.append(node.value)
    return sorted(set(out))


def _in_catalogue(cat: Catalogue, line: str) -> bool:
    """True when the az command of ``line`` is a catalogue command, or an ``az rest`` GET whose path the
    catalogue's templates (or az.toml's reviewed ``arm_reads``) resolve to a specific operation, or
    azure-cli's own help/version output."""
    argv = shlex.split(line)[1:]
    group = command_group(argv)
    if group[:1] == ["rest"]:
        urls = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--url", "--uri", "-u")]
        urls += [a.split("=", 1)[1] for a in argv if a.startswith(("--url=", "--uri="))]
        extra = load_tables().az.arm_reads  # az.toml's reviewed ARM reads outside the command code
        specific = [any(m is not None and not m.generic for m in (cat.arm().match(urlsplit(u).path), extra.match(urlsplit(u).path)))
                    for u in urls]  # fmt: skip
        return bool(specific) and all(specific)
    if not group:
        return all(a in ("--version", "--help", "-h") for a in argv)
    return cat.lookup(group) is not None or (("--help" in argv or "-h" in argv) and cat.known_group(group))


def test_the_packaged_catalogue_is_azure_cli_291_and_small() -> None:
    cat = load_catalogue()
    assert cat.version.startswith("2.91")
    assert len(cat) > 5000, "the catalogue lost commands"
    assert DATA.stat().st_size < 5_000_000
    assert cat.lookup(["network", "watcher", "test-ip-flow"]) is not None


def test_every_safe_az_command_of_the_corpora_is_in_the_catalogue() -> None:
    cat = load_catalogue()
    lines = _corpus_az_commands()
    safe = [line for line in lines if classify(line).verdict == "SAFE"]
    assert len(safe) > 100, "the corpora hold fewer SAFE az commands than expected: the test would prove little"
    outside = [line for line in safe if not _in_catalogue(cat, line)]
    assert outside == [], f"SAFE az commands the catalogue does not know: {outside[:10]}"


def test_no_sibling_group_outside_the_catalogue_is_safe() -> None:
    """`webapp auth` is not `webapp auth-classic`: a command group the catalogue does not hold (a
    sibling of every real group, here `<group>-classic`) is never SAFE, whatever its verb."""
    cat = load_catalogue()
    firsts = sorted({n.split()[0] for n in cat.names()})
    checked = 0
    for first in firsts:
        sibling = f"{first}-classic"
        if cat.known_group([sibling]):
            continue
        for verb in ("show", "list"):
            checked += 1
            assert classify(f"az {sibling} {verb} -g rg -n x").verdict != "SAFE", sibling
    assert checked > 100


def _unambiguous_prefixes(option: str, options: frozenset[str]) -> list[str]:
    """The abbreviations argparse accepts for ``option``: prefixes no other option of the command shares."""
    return [option[:n] for n in range(3, len(option) + 1)
            if not any(o != option and o.startswith(option[:n]) for o in options)]  # fmt: skip


def test_secret_revealing_options_and_their_abbreviations_are_never_safe() -> None:
    """Every option the catalogue lists as asking a read for secret material, for every command, in
    full, in every abbreviation azure-cli accepts, in upper case and with `=`: not SAFE."""
    cat = load_catalogue()
    checked = 0
    for name in cat.names():
        entry = cat.lookup(name.split())
        assert entry is not None
        for option in sorted(entry.reveal):
            forms = _unambiguous_prefixes(option, entry.options) if option.startswith("--") else [option]
            for form in forms:
                for arg in (form, form.upper(), f"{form}=true"):
                    checked += 1
                    found = decide(cat, entry, ["-n", "x", arg], {})
                    assert found.verdict != "SAFE", f"az {name} {arg}"
    assert checked > 100
    task = cat.lookup(["acr", "task", "show"])
    assert task is not None and "--with-secure-properties" in task.reveal


@pytest.mark.parametrize(
    "line",
    [
        "az acr task show -n t -r reg --with-secure-properties",
        "az acr task show -n t -r reg --with-secure-prop",
        "az acr task show -n t -r reg --with-sec",
        "az acr task show -n t -r reg --WITH-SECURE-PROPERTIES",
        "az acr task show -n t -r reg --with-secure-properties=true",
        "az acr webhook get-config -n hook -r reg",
        "az webapp auth-classic show -g rg -n app",
        "az rest --url /subscriptions/0/resourceGroups/rg/providers/Microsoft.Automation/automationAccounts/a/agentRegistrationInformation?api-version=2023-11-01",
        "az rest -m get -u https://management.azure.com/subscriptions/0/resourceGroups/rg/providers/Microsoft.Automation/automationAccounts/a/agentRegistrationInformation?api-version=2023-11-01",
        "az resource show --ids /subscriptions/0/resourceGroups/rg/providers/Microsoft.Automation/automationAccounts/a/agentRegistrationInformation",
    ],
)
def test_the_issue_classes_are_not_safe(line: str) -> None:
    assert classify(line).verdict != "SAFE", classify(line).reason


def _rule(line: str) -> str:
    return classify_az(load_tables().az, shlex.split(line)[1:]).rule


def test_the_issue_classes_are_decided_by_the_catalogue_data() -> None:
    """Not by a name rule: the decisive rule is the catalogue's (its operations, options, templates)."""
    assert _rule("az acr task show -n t -r reg --with-secure-prop").startswith("az-catalogue-")
    assert _rule("az acr webhook get-config -n hook -r reg").startswith("az-catalogue-")
    # auth-classic is an extension's group in 2.91: the catalogue does not hold it, so it is unknown;
    # its core sibling `webapp auth show` reads auth settings through a POST that returns clientSecret
    assert _rule("az webapp auth-classic show -g rg -n app") == "az-not-in-catalogue"
    assert _rule("az webapp auth show -g rg -n app").startswith("az-catalogue-")
    assert classify("az webapp auth show -g rg -n app").verdict != "SAFE"
    cat = load_catalogue()
    vm_show = cat.lookup(["vm", "show"])
    assert vm_show is not None
    assert decide(cat, vm_show, ["-g", "rg", "-n", "vm"], {}).verdict == "SAFE"
    for option in ("--include-user-data", "--include-user", "--INCLUDE-USER-D"):
        assert decide(cat, vm_show, ["-g", "rg", "-n", "vm", option], {}).rule == "az-catalogue-reveal", option
    rest = _rule("az rest --url /subscriptions/0/resourceGroups/rg/providers/Microsoft.Automation/automationAccounts/a/agentRegistrationInformation?api-version=2023-11-01")
    assert rest.startswith("az-arm-"), rest


def _toy(secret: int, method: str = "GET", template: str = "/subscriptions/{s}/providers/Microsoft.Toy/toys/{t}") -> Catalogue:
    return Catalogue({
        "format": 1, "azure_cli": "0.0", "global_options": ["--debug", "--output", "-o"], "config_keys": [],
        "ops": [[method, template, 1 if method == "GET" else 0, secret, "`password` names a secret value"]],
        "commands": {"toy show": {"k": "a", "a": [0], "o": "--name -n --reveal-secrets", "r": ["--reveal-secrets"]}},
    })  # fmt: skip


def test_the_decision_follows_the_data_not_the_command_name() -> None:
    """The same command name is SAFE or not by what its operation's response carries."""
    for secret, verdict in ((0, "SAFE"), (1, "SAFE"), (2, "RISKY"), (3, "RISKY")):
        cat = _toy(secret)
        entry = cat.lookup(["toy", "show"])
        assert entry is not None
        assert decide(cat, entry, ["-n", "x"], {}).verdict == verdict, secret
    cat = _toy(1)
    entry = cat.lookup(["toy", "show"])
    assert entry is not None
    assert decide(cat, entry, ["-n", "x", "--deb"], {}).verdict == "RISKY"  # --debug logs hidden fields
    assert decide(cat, entry, ["-n", "x", "--reveal-s"], {}).verdict == "RISKY"
    cat = _toy(0, "POST", "/subscriptions/{s}/providers/Microsoft.Toy/toys/{t}/listKeys")
    entry = cat.lookup(["toy", "show"])
    assert entry is not None and decide(cat, entry, [], {}).verdict == "FORBIDDEN"


def test_arm_paths_resolve_against_the_catalogue_templates() -> None:
    cat = load_catalogue()
    nsg = cat.arm().match("/subscriptions/0/resourceGroups/rg/providers/Microsoft.Network/networkSecurityGroups/nsg1")
    assert nsg is not None and not nsg.generic
    assert any("networkSecurityGroups/{" in cat.ops[i].template for i in nsg.ops)
    assert cat.arm().match("/subscriptions/0/resourceGroups/rg/providers/Microsoft.Nope/widgets/w") is None or \
        cat.arm().match("/subscriptions/0/resourceGroups/rg/providers/Microsoft.Nope/widgets/w").generic  # fmt: skip
    assert classify("az resource show --ids /subscriptions/0/resourceGroups/rg/providers/Microsoft.Nope/widgets/w").verdict == "RISKY"


# The reads the product itself issues (playbooks, lab seeds) and an engineer's everyday reads.
EVERYDAY_READS = [
    "az account show",
    "az account list -o table",
    "az vm list -g rg -o table",
    "az vm list -d --query [].name",
    "az vm show -g rg -n web01 -d --query powerState -o tsv",
    "az vm get-instance-view -g rg -n web01",
    "az vm extension list -g rg --vm-name web01 -o table",
    "az vmss list -g rg",
    "az vmss list-instances -g rg -n ss",
    "az vmss nic list -g rg --vmss-name ss",
    "az network nsg list -g rg",
    "az network nsg show -g rg -n nsg1",
    "az network nsg rule list -g rg --nsg-name nsg1",
    "az network nic list-effective-nsg -g rg -n nic1",
    "az network nic show-effective-route-table -g rg -n nic1",
    "az network vnet list -g rg",
    "az network vnet subnet list -g rg --vnet-name v",
    "az network vnet peering list -g rg --vnet-name v",
    "az network route-table route list -g rg --route-table-name rt",
    "az network private-dns zone list -g rg",
    "az network private-dns link vnet list -g rg -z privatelink.blob.core.windows.net",
    "az network private-dns record-set a list -g rg -z privatelink.blob.core.windows.net",
    "az network private-endpoint list -g rg",
    "az network private-endpoint show -g rg --name pe1",
    "az network local-gateway list -g rg",
    "az network watcher test-ip-flow -g rg --vm web01 --direction Inbound --protocol TCP --local 10.0.0.4:443 --remote 203.0.113.10:50000",
    "az network watcher show-next-hop -g rg --vm web01 --source-ip 10.0.0.4 --dest-ip 10.1.0.4",
    "az network watcher show-security-group-view -g rg --vm web01",
    "az network watcher packet-capture list -l westeurope",
    "az network application-gateway show-backend-health -g rg -n gw",
    "az storage account list -g rg",
    "az resource show --ids /subscriptions/0/resourceGroups/rg/providers/Microsoft.Network/networkSecurityGroups/nsg1",
    # the tiers' verdict: the learned second opinion's view of `az rest` (it reads "script" inside
    # "subscriptions") is not the catalogue's to fix
    "az rest --url /subscriptions/0/resourceGroups/rg/providers/Microsoft.Network/networkSecurityGroups/nsg1?api-version=2023-09-01",
]


@pytest.mark.parametrize("line", EVERYDAY_READS)
def test_everyday_reads_stay_safe(line: str) -> None:
    found = classify(line) if not line.startswith("az rest") else _classify_builtin(line)[0]
    assert found.verdict == "SAFE", found.reason
