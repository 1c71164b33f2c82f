"""Labelled commands for the command risk model, from the project's own corpora and rules.

Rows are ``{"command", "argv", "label", "source", "group", "split", "old_tiers_safe"}``:

- **risky** (label 1): every corpus row expected NOT_SAFE or FORBIDDEN that parses to one argv
  (``tests/data/shell/commands_dev.jsonl``, ``redteam_issue16.jsonl``, ``not_safe_probes.txt``);
- **benign** (label 0): every row expected SAFE, the SAFE probes, the rule tables' own ``match``
  examples, and everyday reads generated from the lab simulator's command declarations (the same
  options and value shapes the real azure-cli takes), from the tier-1 programs and from every option
  the network probes' allowlists accept (``probe_option_reads``), kept only when today's tiers call
  them SAFE (an everyday read the tiers would stop is not a benign example; probes are judged in a
  session whose problem statement names their hosts).

``split`` (train / val / test, 60/20/20) is drawn from a hash of the row's *group*: the command key
plus the shape of its arguments, so the re-quoted and re-cased variants the red-team generators
produce land in one split and never straddle train and test. ``old_tiers_safe`` says whether the
tiers as they stood before the issue-16 red-team pass (commit 704c018) called the command SAFE:
those rows are the forms a rule table had never seen, the case the learned stage exists for.
"""

# ruff: noqa: PLC0415  the project modules load inside the functions that need them (training runs apart)

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "shell"
OLD_TIERS_COMMIT = "704c018"
SEED = 17

RGS = ["rg-net", "rg-prod-web", "contoso-rg", "rg-ghost-lab", "rg-hub", "rg-spoke-01", "MC_rg-aks_aks1_eastus"]
NAMES = ["vm-web-01", "web01", "nsg-web", "nic-web01", "vnet-hub", "snet-app", "rt-spoke", "stghostcaps",
         "pcap-1700000000", "app-gw", "db01", "vm-api-2", "aks1", "vmss-front", "peer-hub-spoke", "default"]
ZONES = ["privatelink.blob.core.windows.net", "contoso.internal", "corp.local"]
LOCATIONS = ["eastus", "westeurope", "northeurope", "uksouth", "eastus2"]
QUERIES = ["[].name", "[].{name:name, ip:privateIps}", "properties.provisioningState", "length(@)",
           "[?provisioningState=='Succeeded'].id", "securityRules[].{n:name,p:priority,a:access}",
           "id", "[0]", "ipConfigurations[].privateIPAddress", "routes[].{prefix:addressPrefix,hop:nextHopType}",
           "packetCaptureStatus", "value[].{source:source,state:state}", "[].{name:name, rg:resourceGroup}",
           "effectiveSecurityRules[?access=='Deny']", "tags", "location", "[].location"]
HOSTS = ["10.0.0.4", "10.1.0.5", "10.2.0.4", "web01.contoso.com", "example.com", "api.contoso.com",
         "stghost.blob.core.windows.net", "172.16.3.9", "192.168.10.20", "db01.corp.local", "1.1.1.1",
         "redis-primary", "redis-primary.prod.internal", "db01.corp.internal", "kv-prod.vault.azure.net", "web-vm-01"]
CAPTURES = ["cap.pcap", "captures/web.pcap", "/tmp/captures/a.pcapng", "ws/task/artifacts/x.cap", "out/b.pcap"]
SUB = "00000000-1111-2222-3333-444455556666"


def _read_jsonl(path: Path) -> Iterator[dict[str, str]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def _read_lines(path: Path) -> Iterator[str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            yield line.strip()


def corpus_rows() -> Iterator[tuple[str, int, str]]:
    """(command, label, source) of every corpus row."""
    for row in _read_jsonl(DATA / "commands_dev.jsonl"):
        yield row["command"], int(row["expected"] != "SAFE"), "commands_dev:" + (row.get("tags") or ["-"])[0]
    for row in _read_jsonl(DATA / "redteam_issue16.jsonl"):
        yield row["command"], int(row["expected"] != "SAFE"), "issue16:" + row["class"]
    for line in _read_lines(DATA / "not_safe_probes.txt"):
        yield line, 1, "not_safe_probes"
    for line in _read_lines(DATA / "safe_probes.txt"):
        yield line, 0, "safe_probes"
    # Issue 28's SAFE rows only: its unsafe rows are all stopped by the tiers (a test checks it with the model
    # off), so they add nothing to a second opinion on what the tiers call SAFE, and their shapes (encoded data
    # in a path toward a private address) taught the model to distrust every plain `curl -s http://10.x/`.
    for row in _read_jsonl(DATA / "issue28_corpus.jsonl"):
        if row["expected"] == "SAFE":
            yield row["command"], 0, "issue28:" + row["class"]


def table_examples() -> Iterator[tuple[str, int, str]]:
    """The rule tables' own examples (tier 1 match lists, az examples expected SAFE)."""
    from netghost.shell.classify._tables import load_tables

    tables = load_tables()
    for name, spec in tables.tier1.items():
        for cmd in spec.match:
            yield cmd, 0, f"tier1-match:{name}"
    for cmd, want in tables.az.examples:
        if want == "SAFE":
            yield cmd, 0, "az-example"


TEST_COMMANDS = Path(__file__).resolve().parent / "data" / "test_commands.txt"


def harvest_test_literals() -> list[str]:
    """Every string literal in the test suite that parses to one command the tiers call SAFE: the
    commands the project's tests expect to run without asking (seed templates, rule checks, e2e runs).
    The stage's own tests (tests/governance, tests/llm) are left out: they probe the model."""
    import ast

    from netghost.shell.classify._classify import _classify_builtin

    found: set[str] = set()
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.parent.name in ("governance", "llm"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if 3 < len(text) < 400 and "\n" not in text and " " in text and _classify_builtin(text)[0].verdict == "SAFE":
                found.add(text)
    return sorted(found)


def test_literals() -> Iterator[tuple[str, int, str]]:
    """The snapshot of :func:`harvest_test_literals` (``data/test_commands.txt``), so that a new test
    string elsewhere does not change the training data; ``--refresh-test-commands`` renews it."""
    for line in TEST_COMMANDS.read_text(encoding="utf-8").splitlines():
        if line:
            yield line, 0, "tests"


def _value(arg_long: str, rng: random.Random) -> str:
    if "resource-group" in arg_long:
        return rng.choice(RGS)
    if arg_long in ("--location", "-l"):
        return rng.choice(LOCATIONS)
    if "zone" in arg_long:
        return rng.choice(ZONES)
    if arg_long == "--ids":
        kind = rng.choice(["networkSecurityGroups", "networkInterfaces", "virtualNetworks", "routeTables"])
        return f"/subscriptions/{SUB}/resourceGroups/{rng.choice(RGS)}/providers/Microsoft.Network/{kind}/{rng.choice(NAMES)}"
    if arg_long in ("--local", "--remote"):
        return f"{rng.choice(HOSTS[:4])}:{rng.choice([22, 80, 443, 1433, 3389, 5432])}"
    if arg_long in ("--max-items", "--top", "--num-results", "--timeout"):
        return str(rng.choice([5, 10, 50, 100]))
    if arg_long == "--prefix":
        return rng.choice(["pcap/", "captures/2026/", "vm-web-01"])
    if arg_long in ("--expand", "--select", "--filter", "--include", "--delimiter", "--marker", "--next-token"):
        return rng.choice(["instanceView", "name", "m", "/", "token1"])
    if arg_long == "--api-version":
        return rng.choice(["2023-09-01", "2024-01-01"])
    if arg_long == "--resource-type":
        return rng.choice(["Microsoft.Network/networkSecurityGroups", "Microsoft.Compute/virtualMachines"])
    if arg_long == "--namespace":
        return "Microsoft.Network"
    return rng.choice(NAMES)


def lab_az_reads(rng: random.Random, per_command: int = 40) -> Iterator[tuple[str, int, str]]:
    """Everyday az reads: each SAFE command of the lab simulator with sampled options and values."""
    from netghost.lab.az import REGISTRY

    for words, cmd in sorted(REGISTRY.items()):
        args = [a for a in cmd.spec.args if not any(s in a.long for s in ("account-key", "connection-string", "sas-token", "password", "user-data"))]
        for _ in range(per_command):
            argv = ["az", *words]
            for a in args:
                if not (a.required or rng.random() < 0.35):
                    continue
                flag = a.short if a.short and rng.random() < 0.5 else a.long
                if a.kind == "flag":
                    argv.append(flag)
                elif a.kind == "optbool":
                    argv.append(a.long)
                else:
                    argv += [flag, rng.choice(a.choices) if a.choices else _value(a.long, rng)]
            if rng.random() < 0.5:
                argv += [rng.choice(["-o", "--output"]), rng.choice(["json", "table", "tsv", "jsonc", "yaml", "none"])]
            if rng.random() < 0.4:
                argv += ["--query", rng.choice(QUERIES)]
            if rng.random() < 0.15:
                argv += ["--subscription", rng.choice([SUB, "Contoso-Prod"])]
            if rng.random() < 0.1:
                argv.append(rng.choice(["--only-show-errors", "--verbose"]))
            yield _join(argv), 0, "lab-az-read"


def local_reads(rng: random.Random, n: int = 2500) -> Iterator[tuple[str, int, str]]:
    """Everyday local diagnostics with varied hosts, counts and formats."""
    forms = [
        lambda h: ["ping", "-c", str(rng.choice([1, 3, 4, 5, 10])), h],
        lambda h: ["ping", "-c", "4", "-W", str(rng.choice([1, 2])), h],
        lambda h: ["ping", "-M", "do", "-s", str(rng.choice([1372, 1400, 1472])), "-c", "2", h],
        lambda h: ["dig", "+short", h],
        lambda h: ["dig", h, rng.choice(["A", "AAAA", "MX", "TXT", "CNAME", "SOA", "NS"])],
        lambda h: ["dig", "@168.63.129.16", h],
        lambda h: ["dig", "+noall", "+answer", h],
        lambda h: ["nslookup", h],
        lambda h: ["nslookup", h, "168.63.129.16"],
        lambda h: ["host", h],
        lambda h: ["traceroute", "-n", h],
        lambda h: ["traceroute", "-n", "-w", "2", "-q", "1", "-m", "20", h],
        lambda h: ["tracepath", "-n", h],
        lambda h: ["mtr", "-r", "-c", str(rng.choice([5, 10, 20])), "-n", h],
        lambda h: ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", f"https://{h}/"],
        lambda h: ["curl", "-sv", "--max-time", "5", f"http://{h}:{rng.choice([80, 8080, 443])}/health"],
        lambda h: ["curl", "-I", f"https://{h}/"],
        lambda h: ["curl", "-s", "--connect-timeout", "3", f"https://{h}/status"],
        lambda h: ["curl", "-s", f"http://{h}:{rng.choice([80, 8080, 8443, 3000])}/{rng.choice(['healthz', 'api/v1/status', 'ready', ''])}"],
        lambda h: ["curl", rng.choice(["-v", "-sv", "-sS", "-s"]), f"https://{h}/{rng.choice(['', 'health', 'v1/items?limit=10'])}",
                   "-o", "/dev/null"],
        lambda h: ["curl", "-s", "-H", "Accept: application/json", f"https://{h}/api/status"],
        lambda h: ["curl", "--resolve", f"{h}:443:10.0.0.4", f"https://{h}/"] if not h[0].isdigit() else ["curl", "-s", f"http://{h}/"],
        lambda h: ["ip", "-br", rng.choice(["addr", "link"]), "show"],
        lambda h: ["ip", rng.choice(["-4", "-6", "-s", "-d", "-j", "-c"]), rng.choice(["addr", "route", "link", "neigh"]),
                   rng.choice(["show", "list"]), *rng.choice([[], ["dev", "eth0"]])],
        lambda h: ["ss", "-tn", "state", "established"],
        lambda h: ["dig", "+trace", h] if not h[0].isdigit() else ["dig", "-x", h],
        lambda h: ["host", "-t", rng.choice(["A", "AAAA", "MX", "TXT"]), h],
        lambda h: ["nslookup", "-type=" + rng.choice(["A", "TXT", "MX", "SRV"]), h],
        lambda h: ["pcap-forensics", f"/tmp/captures/{rng.choice(NAMES)}.cap", "--semantic-dir", "out"],
        lambda h: ["tcpdump", rng.choice(["-nn", "-n", "-tttt", "-e", "-vv", "-A", "-X"]), "-r", rng.choice(CAPTURES),
                   *rng.choice([[], ["-c", "100"], ["host", h], ["port", str(rng.choice([443, 6379, 53]))]])],
        lambda h: ["tshark", "-r", rng.choice(CAPTURES), *rng.choice([
            [], ["-Y", rng.choice(["dns", "tcp.analysis.retransmission", "tcp.flags.reset==1", f"ip.addr=={h}"])],
            ["-q", "-z", rng.choice(["io,phs", "conv,tcp", "endpoints,ip", "expert", "http,tree", "dns,tree"])],
            ["-T", "fields", "-e", "frame.time_relative", "-e", rng.choice(["ip.src", "tcp.stream", "dns.qry.name"])],
            ["-V", "-c", "5"], ["-n", "-Y", "icmp"]])],
        lambda h: ["capinfos", *rng.choice([[], ["-T"], ["-c", "-u"], ["-TmQ"], ["-A", "-M"]]), rng.choice(CAPTURES)],
        lambda h: ["openssl", "s_client", "-connect", f"{h}:443", *rng.choice([[], ["-servername", h], ["-showcerts"], ["-brief"]])],
        lambda h: ["ss", "-tan", "dst", h],
        lambda h: ["ss", rng.choice(["-tlnp", "-tunap", "-s", "-ti", "-lntu"])],
        lambda h: ["ip", "route", "get", h],
        lambda h: ["ip", rng.choice(["addr", "route", "link", "neigh"]), "show"],
        lambda h: ["netstat", rng.choice(["-rn", "-tlnp", "-an", "-s"])],
        lambda h: ["pcap-forensics", f"captures/{rng.choice(NAMES)}.pcap", "--json"],
    ]
    for _ in range(n):
        yield _join(rng.choice(forms)(rng.choice(HOSTS))), 0, "local-read"


def catalogue_reads(rng: random.Random, per_command: int = 3) -> Iterator[tuple[str, int, str]]:
    """Every az command of the shipped catalogue (azure-cli's own command table), spelled with the options it
    declares for naming a resource (``-g``, ``-n``, ``--vnet-name`` ...), an output format and a query. Only
    those the tiers call SAFE are kept (:func:`build_rows`): a read the catalogue proves secret-free is as
    everyday as the lab's, and a command key the model never saw was flagged for that alone
    (``az network application-gateway show``, ``az vm identity show``)."""
    from netghost.shell.classify._azcat import load_catalogue

    catalogue = load_catalogue()
    for name in catalogue.names():
        entry = catalogue.lookup(name.split())
        if entry is None or not entry.always:
            continue
        naming = sorted(o for o in entry.options if o.startswith("--") and o.endswith("-name") and o != "--name")
        for _ in range(per_command):
            argv = ["az", *name.split()]
            if "--resource-group" in entry.options:
                argv += [rng.choice(["-g", "--resource-group"]) if "-g" in entry.options else "--resource-group", rng.choice(RGS)]
            if "--name" in entry.options:
                argv += [rng.choice(["-n", "--name"]) if "-n" in entry.options else "--name", rng.choice(NAMES)]
            for option in naming[:2]:
                argv += [option, rng.choice(NAMES)]
            if rng.random() < 0.5:
                argv += ["-o", rng.choice(["json", "table", "tsv"])]
            if rng.random() < 0.3:
                argv += ["--query", rng.choice(QUERIES)]
            yield _join(argv), 0, "catalogue-read"


# The probes whose destinations the egress policy checks (classify/_egress.py EGRESS_CHECKS), and value checks
# of their option tables that have a benign value to draw (numbers in range, enumerations).
PROBES = ("curl", "ping", "dig", "nslookup", "host", "traceroute", "tracepath", "mtr")
PROBE_TARGETS = ["10.0.0.4", "10.1.0.5", "web01.contoso.com", "api.contoso.com", "example.com",
                 "redis-primary.prod.internal", "stghost.blob.core.windows.net", "kv-prod.vault.azure.net"]


def _sample_value(check: str, rng: random.Random) -> str | None:
    """A value the table's check accepts, for the checks with an obvious benign draw; else None."""
    kind, _, arg = check.partition(":")
    if kind in ("int", "num"):
        lo, _, hi = arg.partition("..")
        low, high = float(lo), float(hi)
        value = rng.choice([low, high, low + (high - low) / 10, min(high, low + 3), min(high, low + 5)])
        return str(int(value)) if kind == "int" or value.is_integer() else f"{value:g}"
    if kind in ("enum", "ienum"):
        return rng.choice(arg.split(","))
    # The checks that name their benign values: output to the terminal or nowhere, a status line format.
    fixed = {"stdout": ["-"], "devnull_or_stdout": ["/dev/null", "-"], "writeout": ["%{http_code}", "%{time_total}\\n"],
             "header": ["Accept: application/json", "Host: api.contoso.com"]}
    return rng.choice(fixed[kind]) if kind in fixed else None


def _probe_options(spec: dict[str, object], rng: random.Random) -> list[list[str]]:
    """Every option of a probe's allowlist as argv pieces: flags alone, value options with a sampled value."""
    out: list[list[str]] = [[f"-{c}"] for c in str(spec.get("short_flags", "")) if c not in "hVM"]
    out += [[str(f)] for f in spec.get("long_flags", ()) if f not in ("--help", "--version", "--manual")]  # type: ignore[attr-defined]
    for prefix, table in (("-", spec.get("short_values", {})), ("", spec.get("long_values", {}))):
        for name, check in dict(table).items():  # type: ignore[call-overload]
            value = _sample_value(str(check), rng)
            if value is not None:
                out.append([f"{prefix}{name}", value])
    return out


def probe_option_reads(rng: random.Random, per_option: int = 8) -> Iterator[tuple[str, int, str]]:
    """Probes toward in-scope hosts with each option their allowlist accepts (protocol versions, address
    families, verbosity, timeouts, counts ...), alone and beside others: the options the tiers let run
    are benign evidence, so the second opinion does not learn an allowed option as unusual
    (``curl -4 --http1.1`` was flagged because no benign row ever carried ``--http1.1``)."""
    import tomllib

    raw = tomllib.loads((ROOT / "src/netghost/shell/classify/rules/tier1.toml").read_text(encoding="utf-8"))["binary"]
    for program in PROBES:
        options = _probe_options(raw[program], rng)
        for option in options:
            for _ in range(per_option):
                extra = rng.sample(options, k=min(len(options), rng.choice([0, 1, 1, 2])))
                argv = [program, *option, *(p for o in extra if o != option for p in o)]
                target = rng.choice(PROBE_TARGETS)
                argv.append(f"https://{target}/{rng.choice(['', 'health', 'status'])}" if program == "curl" else target)
                yield _join(argv), 0, "probe-option"


SESSION_ROOTS = ["/home/azureuser/audit", "/root/audit", "/tmp/pytest-of-root/pytest-12/test_x0", "/srv/ghost/audit",
                 "/home/runner/work/audit", "/var/tmp/ghost/audit", "/tmp/se_eval/after/nsg-deny-1"]


ARM_PATHS = [
    "/subscriptions/{sub}?api-version=2022-12-01", "/subscriptions?api-version=2022-12-01",
    "/subscriptions/{sub}/resourceGroups?api-version=2021-04-01", "/subscriptions/{sub}/resourceGroups/{rg}?api-version=2021-04-01",
    "/subscriptions/{sub}/providers/Microsoft.Network/virtualNetworks?api-version=2023-09-01",
    "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Network/networkSecurityGroups/{name}?api-version=2023-09-01",
    "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Network/networkInterfaces/{name}/effectiveRouteTable?api-version=2023-09-01",
    "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachines/{name}?api-version=2024-03-01",
    "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Network/privateDnsZones?api-version=2020-06-01",
    "/subscriptions/{sub}/providers/Microsoft.Network/locations/{loc}/usages?api-version=2023-09-01",
]  # fmt: skip


def arm_rest_reads(rng: random.Random, n: int = 400) -> Iterator[tuple[str, int, str]]:
    """``az rest`` GETs of ARM reads (subscriptions, groups, networks), as an engineer spells them."""
    for _ in range(n):
        path = rng.choice(ARM_PATHS).format(sub=SUB, rg=rng.choice(RGS), name=rng.choice(NAMES), loc=rng.choice(LOCATIONS))
        url = rng.choice([path, "https://management.azure.com" + path])
        method = rng.choice([[], ["--method", "get"], ["-m", "GET"], ["--method", "GET"]])
        opt = rng.choice(["--url", "--uri", "-u"])
        extra = rng.choice([[], ["-o", "json"], ["--query", rng.choice(QUERIES)]])
        yield _join(["az", "rest", *method, opt, url, *extra]), 0, "arm-rest-read"


def engine_runs(rng: random.Random, n: int = 300) -> Iterator[tuple[str, int, str]]:
    """The forensics engine as the orchestrator runs it: absolute paths under the session's directory. The
    tiers call these SAFE in their session (the shell's working directory), not from nowhere, so they are
    benign rows without the tiers' filter."""
    # Every spelling the shell resolves to the installed engine (shell/engine.py): the console script, the
    # seeds' `python pcap_forensics.py` template and the module form.
    programs = [["pcap-forensics"], ["python", "pcap_forensics.py"], ["python3", "pcap_forensics.py"],
                ["python", "-m", "netghost.forensics"], ["python3", "-m", "netghost.forensics"]]
    for _ in range(n):
        root = rng.choice(SESSION_ROOTS)
        task = f"{root}/captures/ghost_{rng.choice(NAMES)}_20261122T050000/artifacts"
        cap = f"{task}/ghost_{rng.choice(NAMES)}_20261122T050000.cap"
        form = rng.choice([
            [cap, "--semantic-dir", task, "--report-dir", task, "--format", "md,json,html"],
            [cap, "--compare", cap.replace(".cap", "_b.cap"), "--semantic-dir", task, "--report-dir", task],
            ["--fleet", task, "--out", f"{task}/fleet"],
            [cap, "--format", "html", "--report-dir", task, "--semantic-dir", task],
        ])  # fmt: skip
        yield _join([*rng.choice(programs), *form]), 0, "engine-run"


def _join(argv: list[str]) -> str:
    import shlex

    return shlex.join(argv)


def old_tiers_safe(commands: list[str]) -> list[bool]:
    """Whether the tiers before the issue-16 red-team pass called each command SAFE (run from git)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", OLD_TIERS_COMMIT, "src"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        script = ("import json,sys\nfrom netghost.shell.classify import classify\n"
                  "cmds=json.load(sys.stdin)\nprint(json.dumps([classify(c).verdict=='SAFE' for c in cmds]))\n")
        out = subprocess.run([sys.executable, "-c", script], input=json.dumps(commands), text=True,
                             capture_output=True, check=True, env={"PYTHONPATH": f"{tmp}/src", "PATH": "/usr/bin:/bin"},
                             cwd=tmp)
    return list(json.loads(out.stdout))


def _reachable_programs() -> set[str]:
    from netghost.shell.classify._tables import load_tables

    return {"az", "ip", "python", "python3", "openssl", *load_tables().tier1}


def _group(argv: tuple[str, ...], label: int) -> str:
    from netghost.governance.onnx import command_tokens

    shape = sorted({t for t in command_tokens(argv) if t.startswith(("c:", "o:", "s:"))})
    return f"{label}|" + "|".join(shape)


def _split(group: str) -> str:
    bucket = zlib.crc32(group.encode()) % 10
    return "train" if bucket < 6 else "val" if bucket < 8 else "test"


def build_rows() -> list[dict[str, object]]:
    """All labelled rows, deduplicated by argv (a benign and a risky copy of one argv: risky wins)."""
    from netghost.shell.classify import EgressScope
    from netghost.shell.classify._classify import Context, _classify_builtin
    from netghost.shell.classify._parse import ParseRejection, parse_command

    def tiers(command: str) -> str:
        """The tiers' verdict alone: the data must not depend on the model being rebuilt (with the learned
        stage in the loop, each rebuild changed the next one's data and the file never came out the same)."""
        return _classify_builtin(command)[0].verdict

    # Probes are judged as in a session whose problem statement names the hosts they go to (the agent seeds
    # its egress scope that way): a probe of a named host is as benign as one of a private address.
    session = Context(EgressScope().with_text(" ".join([*HOSTS, *PROBE_TARGETS])))

    def probe_tiers(command: str) -> str:
        return _classify_builtin(command, session)[0].verdict

    rng = random.Random(SEED)
    candidates = [*corpus_rows(), *table_examples(), *test_literals(), *lab_az_reads(rng), *local_reads(rng),
                  *engine_runs(rng), *arm_rest_reads(rng), *probe_option_reads(random.Random(SEED + 1)),
                  *catalogue_reads(random.Random(SEED + 2))]
    by_argv: dict[tuple[str, ...], dict[str, object]] = {}
    for command, label, source in candidates:
        parsed = parse_command(command)
        if isinstance(parsed, ParseRejection):
            continue  # no argv: the tiers make every structural rejection FORBIDDEN already
        if label == 0 and source in ("lab-az-read", "arm-rest-read", "catalogue-read") and tiers(command) != "SAFE":
            continue
        if label == 0 and source in ("local-read", "probe-option") and probe_tiers(command) != "SAFE":
            continue
        argv = tuple(parsed.argv)
        prev = by_argv.get(argv)
        if prev is not None and int(prev["label"]) >= label:  # type: ignore[call-overload]
            continue
        by_argv[argv] = {"command": command, "argv": list(argv), "label": label, "source": source}
    # The stage is consulted only on commands the tiers can call SAFE: az and the tier-1 programs.
    reachable = _reachable_programs()
    rows = sorted((r for r in by_argv.values() if str(r["argv"][0]) in reachable),  # type: ignore[index]
                  key=lambda r: str(r["command"]))
    old = old_tiers_safe([str(r["command"]) for r in rows])
    for row, was_safe in zip(rows, old, strict=True):
        group = _group(tuple(row["argv"]), int(row["label"]))  # type: ignore[arg-type, call-overload]
        row.update(group=group, split=_split(group), old_tiers_safe=was_safe,
                   tiers_safe=tiers(str(row["command"])) == "SAFE")
    return rows


if __name__ == "__main__":
    if "--refresh-test-commands" in sys.argv:
        TEST_COMMANDS.parent.mkdir(exist_ok=True)
        TEST_COMMANDS.write_text("".join(f"{c}\n" for c in harvest_test_literals()), encoding="utf-8")
        sys.exit(0)
    built = build_rows()
    from collections import Counter

    print(Counter((r["split"], r["label"]) for r in built))
    print("old tiers SAFE on risky:", Counter(r["split"] for r in built if r["label"] and r["old_tiers_safe"]))
