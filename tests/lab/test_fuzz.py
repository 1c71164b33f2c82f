"""The simulator never crashes: any argv gives one of az's exit codes and an ``ERROR:`` on failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netghost.lab.az import REGISTRY, run_az
from netghost.lab.state import init_state

from .conftest import Lab

VM_ID = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/prod-rg/providers/"
         "Microsoft.Compute/virtualMachines/web-vm-01")
_VALUES = st.sampled_from([
    "prod-rg", "hub-rg", "nope", "web-vm-01", "redis-primary", "eastus", "East US", "x", "", "10.1.1.4",
    "10.1.1.4:443", "1.2.3.4:*", "*", "999999", "-1", "abc:def", "/subscriptions/x", VM_ID, "[]",
    '[{"protocol":"TCP"}]', "[1]", "{", "Inbound", "TCP", "captures", "forensicssa", "login", "key", "abc",
    "https://forensicssa.blob.core.windows.net/captures", "300.1.1.1", "10.1.2.4", "10.1.1.4:99999",
    "web-vm-01VMNic", "nsg-data", "rt-web", "vnet-prod", "prod.internal", "ghost_x", "60", "20000",
])


@st.composite
def _argv(draw: st.DrawFn) -> list[str]:
    words = draw(st.sampled_from(sorted(REGISTRY)))
    spec = REGISTRY[words].spec
    argv = list(words)
    for arg in spec.args:  # required arguments most of the time, so the handlers run
        if arg.required and draw(st.integers(0, 9)) > 0:
            argv += [arg.long, draw(_VALUES)]
    # --file is left out: a fuzzed relative path would write into the working directory
    optional = [a.long for a in spec.all_args() if not a.required and a.long not in ("--help", "--file")]
    optional.append("--bogus")
    for _ in range(draw(st.integers(0, 4))):
        argv.append(draw(st.sampled_from(optional)))
        if draw(st.booleans()):
            argv.append(draw(_VALUES))
    return argv


@pytest.fixture(scope="module")
def fuzz_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    root = tmp_path_factory.mktemp("fuzz-lab")
    return Lab(init_state(root, "healthy"), {"NETGHOST_LAB_STATE": str(root), "HOME": str(root)})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=_argv())
# malformed resource ids (found by this test): az's "invalid resource ID", not a traceback
@example(argv=["network", "watcher", "show-security-group-view", "--vm", "/subscriptions/x"])
@example(argv=["network", "watcher", "show-topology", "--vnet", "/subscriptions/x"])
def test_any_argv_gives_an_az_exit_code(fuzz_lab: Lab, argv: list[str]) -> None:
    if argv[:3] == ["storage", "blob", "download"]:
        argv = [*argv, "--file", str(Path(fuzz_lab.state.root) / "dl.cap")]
    code, out, err = run_az(argv, fuzz_lab.env)
    assert code in (0, 1, 2, 3)
    if code:
        assert err.startswith("ERROR:") or "\nERROR:" in err, (argv, err)
        assert out == ""
