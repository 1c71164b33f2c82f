"""Credentials by program (issue 24, bug 2): az gets the Azure identity's variables, no other program does.

Real subprocesses through the real Safe-Exec Shell: fake ``az``, ``curl``, ``dig``, ``ping`` and ``ss``
programs first on the shell's PATH print every variable they received (the name and a hash of the value,
so the shell's redactor has nothing to hide and the test still sees that az got the exact value).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from netghost.shell import HitlDecision, SafeExecShell
from netghost.shell.exec import child_environments, env_classes, program_classes

MANAGED_IDENTITY = {
    "IDENTITY_ENDPOINT": "http://127.0.0.1:41741/msi/token",
    "IDENTITY_HEADER": "3f1c6a4e-5d7b-4c1e-9a0f-hdr",
    "IDENTITY_SERVER_THUMBPRINT": "A1B2C3D4E5F60718293A4B5C6D7E8F9012345678",
    "MSI_ENDPOINT": "http://127.0.0.1:41742/msi/token",
    "MSI_SECRET": "msi-secret-0f9e8d7c",
    "IMDS_ENDPOINT": "http://localhost:40342",
}
SERVICE_PRINCIPAL = {
    "AZURE_CLIENT_ID": "11111111-2222-3333-4444-555555555555",
    "AZURE_TENANT_ID": "66666666-7777-8888-9999-000000000000",
    "AZURE_CLIENT_SECRET": "Xy7Q~sp-secret.value_0123456789abcdefGH",
    "AZURE_CLIENT_CERTIFICATE_PATH": "/etc/sp/cert.pem",
    "AZURE_FEDERATED_TOKEN_FILE": "/var/run/secrets/azure/tokens/azure-identity-token",
}
AZ_SETTINGS = {"AZURE_CONFIG_DIR": "/home/u/.azure-ghost", "AZURE_CORE_OUTPUT": "json"}
IDENTITY = {**MANAGED_IDENTITY, **SERVICE_PRINCIPAL, **AZ_SETTINGS}
PROXY = {"HTTPS_PROXY": "http://bob:proxypw@proxy.corp:3128", "NO_PROXY": "localhost,127.0.0.1"}
COMMON = {"REQUESTS_CA_BUNDLE": "/etc/ssl/corp-ca.pem", "EDITOR": "vi"}

_PRINT_ENV = """#!{python}
import hashlib, os
for name, value in sorted(os.environ.items()):
    print(name, hashlib.sha256(value.encode()).hexdigest()[:16])
"""


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:16]


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SafeExecShell]:
    fakes = tmp_path / "bin"
    fakes.mkdir()
    for program in ("az", "curl", "dig", "ping", "ss"):
        path = fakes / program
        path.write_text(_PRINT_ENV.format(python=sys.executable))
        path.chmod(0o755)
    for name, value in {**IDENTITY, **PROXY, **COMMON}.items():
        monkeypatch.setenv(name, value)
    made = SafeExecShell("s1", lambda _r: HitlDecision.approve(), audit_dir=tmp_path / "audit",
                         path=f"{fakes}{os.pathsep}{os.environ['PATH']}", cwd=tmp_path)
    yield made
    made.close()


def _received(shell: SafeExecShell, command: str) -> dict[str, str]:
    response = shell.execute({"command": command, "reasoning": "which variables does this program get?"})
    assert (response["status"], response["exit_code"]) == ("completed", 0), response
    return dict(line.split(" ", 1) for line in response["output"].splitlines() if " " in line)


def test_az_receives_the_azure_identity_and_its_settings_unchanged(shell: SafeExecShell) -> None:
    got = _received(shell, "az account show -o json")
    for name, value in {**IDENTITY, **PROXY, **COMMON}.items():
        assert got.get(name) == _digest(value), name  # the proxy with its password: az must pass the proxy


@pytest.mark.parametrize("command", ["curl -s http://10.0.0.4:6379/", "dig redis.internal", "ping -c 1 10.0.0.4",
                                     "ss -tn"])
def test_no_other_program_receives_any_of_them(shell: SafeExecShell, command: str) -> None:
    got = _received(shell, command)
    assert not set(IDENTITY) & set(got), sorted(set(IDENTITY) & set(got))
    assert got["HTTPS_PROXY"] == _digest("http://bob@proxy.corp:3128")  # the proxy, without its password
    assert got["REQUESTS_CA_BUNDLE"] == _digest(COMMON["REQUESTS_CA_BUNDLE"]) and "EDITOR" in got


def test_a_program_named_az_by_path_is_not_az(tmp_path: Path) -> None:
    envs = child_environments(IDENTITY, path="/usr/bin")
    assert not set(IDENTITY) & set(envs.for_program([str(tmp_path / "az"), "account", "show"]))
    assert set(IDENTITY) <= set(envs.for_program(["az", "account", "show"]))
    assert not set(IDENTITY) & set(envs.for_program(["timeout", "5", "az", "account", "show"]))


def test_variables_the_caller_sets_follow_the_same_classes() -> None:
    envs = child_environments({}, extra={"AZURE_CONFIG_DIR": "/lab/az", "IDENTITY_HEADER": "h",
                                         "NETGHOST_LAB_STATE": "/lab", "GEMINI_API_KEY": "never"})
    assert envs.for_program(["curl"]) == {"NETGHOST_LAB_STATE": "/lab"}
    assert envs.for_program(["az"]) == {"NETGHOST_LAB_STATE": "/lab", "AZURE_CONFIG_DIR": "/lab/az",
                                        "IDENTITY_HEADER": "h"}


def test_the_table_names_each_class_once_and_gives_az_the_identity_classes() -> None:
    names = [n for c in env_classes() for n in c.names]
    assert len(names) == len(set(names))
    assert all(c.why for c in env_classes())
    assert set(program_classes()["az"]) >= {"azure-managed-identity", "azure-service-principal", "azure-cli"}
    assert set(program_classes()) == {"az"}  # no other program is given a credential class

