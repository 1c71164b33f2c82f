"""The credential ontology (netghost.redact): credential stores, persistence targets and secret variables in
every spelling, the context that resolves relative paths, and secret values in a command line."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.redact import (
    PathContext,
    argv_secrets,
    credential_ancestor,
    credential_context,
    credential_path,
    mask_argv_secrets,
    persistence_path,
    secret_env_name,
)
from netghost.redact._globpath import globs_intersect, path_spellings

SHADOW_SPELLINGS = [
    "/etc/shadow", "//etc/shadow", "/etc//shadow", "/./etc/shadow", "/etc/./shadow", "/tmp/../etc/shadow",
    "/proc/self/root/etc/shadow", "/proc/1/root/proc/self/root/etc/shadow", "/proc/self/task/7/root/etc/shadow",
    "~/../../etc/shadow", "$HOME/../../etc/shadow", "${HOME}/../../etc/shadow", "../../../../../../etc/shadow",
    "/etc/sha*", "/etc/sh?dow", "/etc/sh[a]dow", "/etc/[!x]hadow", "/e*/shadow", "/etc/{passwd,shadow}",
    "/etc/{passwd,{group,shadow}}", "file:///etc/shadow", "FILE:///etc/shadow", "file://localhost/etc/shadow",
    "--input=/etc/shadow", "if=/etc/shadow", "-f/etc/shadow", "@/etc/shadow", "x=@/etc/shadow", "host:/etc/shadow",
    "/etc/shadow:/x:ro", "type=bind,src=/etc/shadow,dst=/x",
]  # fmt: skip


@pytest.mark.parametrize("word", SHADOW_SPELLINGS)
def test_every_spelling_of_shadow_is_a_credential(word: str) -> None:
    hit = credential_path(word)
    assert hit is not None and hit.entry == "system-secrets", (word, hit)


@pytest.mark.parametrize(
    "word",
    ["~/.azure/msal_token_cache.json", "'~'/.azure/config", "~azureuser/.azure/azureProfile.json", "~root/.kube/config",
     "/home/*/.ssh/id_*", "/home/u/.ssh/*", "/mnt/backup/home/u/.aws/credentials", "~/.a*/msal*", "/home/u/.*/config",
     "../.git-credentials", "/root/.config/netghost/audit.key", "/home/u/.config/netghost/anchors/x.head",
     "/var/lib/waagent/Certificates.pem", "/var/lib/waagent", "/proc/*/environ", "/proc/thread-self/environ",
     "/run/secrets/kubernetes.io/serviceaccount/token", "server.key", "/etc/letsencrypt/live/x/privkey.pem"],
)  # fmt: skip
def test_credential_stores(word: str) -> None:
    assert credential_path(word) is not None, word


@pytest.mark.parametrize(
    "word",
    ["/etc/passwd", "/etc/hosts", "/home/u/.ssh/id_rsa.pub", "report.md", "/tmp/captures/a.pcap", "https://docs.example/.azure/x",
     "--output=/tmp/x", "az", "-sS", "SELECT * FROM BlobStorage", "[?contains(name,'key')]", "*", "/srv/app/*", "*:443:10.0.0.4",
     "subscriptions", "/subscriptions/0/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/kv"],
)  # fmt: skip
def test_not_credential_stores(word: str) -> None:
    assert credential_path(word) is None, (word, credential_path(word))


def test_relative_paths_resolve_from_the_working_directory() -> None:
    assert credential_path("shadow") is None
    assert credential_path("shadow", PathContext(cwd="/etc")) is not None
    assert credential_path("config", PathContext(cwd="/home/u/.kube")) is not None
    assert credential_path("../../etc/shadow", PathContext(cwd="/home/u")) is not None
    assert credential_path("../../etc/shadow", PathContext(cwd="/home/u/work")) is None  # that is /home/etc/shadow
    assert credential_path("/proc/self/cwd/id_rsa", PathContext(cwd="/srv/keys")) is not None


def test_environment_named_locations_come_from_the_shells_context() -> None:
    env = {"AZURE_CONFIG_DIR": "/opt/azcfg", "NETGHOST_AUDIT_KEY": "/srv/keys/ng.key", "HOME": "/srv/u", "PATH": "/srv/tools/bin:/usr/bin"}
    ctx = credential_context(env, cwd="/srv/u/session")
    assert credential_path("/opt/azcfg/clouds.config", ctx) is not None
    assert credential_path("/opt/azcfg/clouds.config") is None  # without the context nothing names that directory
    assert credential_path("/srv/keys/ng.key", ctx) is not None
    assert credential_path("/srv/keys/anchors/shell_audit_x.head", ctx) is not None
    assert credential_path("~/.azure/config", ctx).path == "/srv/u/.azure/config"  # type: ignore[union-attr]
    assert persistence_path("/srv/tools/bin/az", ctx) is not None  # a directory of the shell's PATH
    assert persistence_path("/srv/tools/bin/az") is None


@pytest.mark.parametrize(
    "path",
    ["/home/u/.bashrc", "~/.profile", "/root/.ssh/authorized_keys", "/etc/cron.d/x", "/etc/systemd/system/x.service",
     "/usr/local/bin/az", "/home/u/.local/bin/kubectl", "/etc/ld.so.preload", "/etc/sudoers.d/x", "/home/u/.config/systemd/user/x",
     "//etc/./profile.d/x.sh", "/tmp/../etc/crontab", "/home/u/bin/ls"],
)  # fmt: skip
def test_persistence_targets(path: str) -> None:
    assert persistence_path(path) is not None, path


@pytest.mark.parametrize("path", ["/tmp/x", "/tmp/restore/*", "/tmp/profile", "out/report.md", "/srv/app/bin/tool", "/var/tmp/x"])
def test_not_persistence_targets(path: str) -> None:
    assert persistence_path(path) is None, path


def test_credential_ancestors() -> None:
    for path in ("/", "/etc", "/var", "/var/lib", "/home", "/home/u", "/root", "/*", "/home/*"):
        assert credential_ancestor(path) is not None, path
    for path in ("/tmp", "/var/log/nginx", "./src", "/opt/app"):
        assert credential_ancestor(path) is None, path
    assert credential_ancestor(".", PathContext(cwd="/home/u", home="/home/u")) is not None


@pytest.mark.parametrize(
    ("name", "secret"),
    [("AZURE_CLIENT_SECRET", True), ("IDENTITY_HEADER", True), ("MSI_SECRET", True), ("MYSQL_PWD", True), ("PGPASSWORD", True),
     ("GITHUB_TOKEN", True), ("AZURE_DEVOPS_EXT_PAT", True), ("AZURE_STORAGE_CONNECTION_STRING", True), ("ARM_ACCESS_KEY", True),
     ("SAS_TOKEN", True), ("DATABASE_URL", True), ("HOME", False), ("PATH", False), ("PWD", False), ("OLDPWD", False),
     ("SSH_AUTH_SOCK", False), ("LANG", False), ("KUBECONFIG", False), ("XDG_SESSION_TYPE", False)],
)  # fmt: skip
def test_secret_variable_names(name: str, secret: bool) -> None:
    assert secret_env_name(name) is secret


def test_globs_meet_when_some_name_matches_both() -> None:
    assert globs_intersect("sha*", "shadow") and globs_intersect("*.key", "server.k?y") and globs_intersect("sh[a]dow", "shadow")
    assert not globs_intersect("*.pcap", "*.key") and not globs_intersect("[!s]hadow", "shadow") and not globs_intersect("a", "b")


def test_spellings_fold_every_indirection() -> None:
    assert "/etc/shadow" in path_spellings("/proc/self/root//etc/../etc/shadow", PathContext())
    assert set(path_spellings("~/.ssh/id_rsa", PathContext())) >= {"/root/.ssh/id_rsa", "/home/_/.ssh/id_rsa"}
    assert path_spellings("a/{b,c}", PathContext(cwd="/w")) == ("/w/a/b", "/w/a/c")


# --- secret values in argv --------------------------------------------------------------------------------

SECRET_ARGVS = [
    ["curl", "https://sa.blob.core.windows.net/c/b?sv=2022-11-02&sig=abcDEF123xyz%2B%3D"],
    ["curl", "https://sa.blob.core.windows.net/c/b?sv%3D2022%26sig%3DabcDEF123xyzQWE"],
    ["curl", "https://b.s3.amazonaws.com/k?X-Amz-Signature=4f0c1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"],
    ["curl", "https://gitlab.example/api/v4/projects?private_token=glpat-abcdefghijklmnop1234"],
    ["curl", "https://graph.example/me?access_token=ya29.a0AfH6SMBx1234567890abcdef"],
    ["curl", "-H", "X-ZUMO-AUTH: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "http://10.0.0.4/"],
    ["curl", "-H", "aeg-sas-key: 8q3Hd7fKLmQpZr2XyT5vWbNcJ0aE1sUoIiGhFt4=", "http://10.0.0.4/"],
    ["curl", "-H", "Authorization: SharedKey myaccount:ctzMq410TV3wS7upTBcunJTDLEJwMAZuFPfr0mrrA08=", "http://10.0.0.4/"],
    ["curl", "-H", "Authorization: Basic YWRtaW46cGFzc3dvcmQxMjM=", "http://10.0.0.4/"],
    ["mytool", "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abcdefghijklmnopqrstuvwxyz0123456789ABCD="],
    ["mytool", "--password", "Winter24?maple8"],
    # the value of a secret-named option is judged with its label wherever the option sits in a long line
    ["az", "sql", "server", "create", "-g", "rg", "-n", "s1", "--admin-password", "Winter24?maple8", "-l", "westeurope", "-o", "none"],
    ["az", "vm", "create", "-g", "rg", "-n", "v", "--image", "Ubuntu2204", "--admin-password=Winter24?maple8", "--size", "B1s"],
    ["mytool", "--password", "-Winter24?maple8", "--verbose"],
]  # fmt: skip


@pytest.mark.parametrize("argv", SECRET_ARGVS, ids=range(len(SECRET_ARGVS)))
def test_secret_values_are_found_and_masked(argv: list[str]) -> None:
    found = argv_secrets(argv)
    assert found, argv
    masked = mask_argv_secrets(argv, found)
    assert masked[0] == argv[0]
    for secret in found:
        assert secret.value not in " ".join(masked)
    assert "[REDACTED:" in " ".join(masked)


@pytest.mark.parametrize(
    "argv",
    [["ping", "-c", "4", "10.0.0.4"], ["az", "network", "vnet", "list", "--query", "[].{name:name, p:addressSpace.addressPrefixes}"],
     ["az", "resource", "show", "--ids", "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Network/networkSecurityGroups/n"],
     ["curl", "-H", "Accept: application/json", "http://10.0.0.4/"], ["az", "vm", "list", "--location", "southeastasia"],
     ["curl", "https://api.contoso.com/v1/items?limit=10&offset=0"], ["dig", "+short", "kv-prod.vault.azure.net"]],
)  # fmt: skip
def test_ordinary_arguments_are_not_secrets(argv: list[str]) -> None:
    assert argv_secrets(argv) == ()


# --- the fast paths answer as the segment matcher does ---------------------------------------------------

_WORDS = ["home", "azureuser", ".azure", "msal_token_cache.json", ".ssh", "id_rsa", "etc", "shadow", "var", "lib",
          "waagent", "x.key", ".kube", "config", "proc", "1", "environ", "root", ".bashrc", "usr", "bin", "token",
          "secrets", "serviceaccount", ".docker", "config.json", "cron.d", "netghost", "audit.key", ".env"]  # fmt: skip
_GLOBS = ["*", "**", "?", "*.key", "id_*", ".a*", "[ab]*", "s*w"]


def _templates() -> list[Any]:
    from netghost.redact._credentials import _compiled, ontology_variables

    ctx = PathContext.from_environ({"HOME": "/home/azureuser", "PATH": "/usr/bin"}, ontology_variables(), cwd="/w")
    return [t for kind in ("credential", "persistence") for _, t in _compiled(kind, ctx).templates]


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6), absolute=st.booleans())
def test_the_template_regex_answers_as_the_segment_matcher(parts: list[str], absolute: bool) -> None:
    from netghost.redact._globpath import _segments_match, template_matches

    path = ("/" if absolute else "") + "/".join(parts)
    for tmpl in _templates():
        slow = (tmpl.floating or absolute) and _segments_match(tuple(parts), tmpl.segments, tmpl.floating)
        assert template_matches(path, tmpl) == slow, (path, tmpl.text)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from(_WORDS + _GLOBS), min_size=1, max_size=5), absolute=st.booleans())
def test_the_template_prefilter_never_drops_a_hit(parts: list[str], absolute: bool) -> None:
    import netghost.redact._credentials as ontology

    word = ("/" if absolute else "") + "/".join(parts)
    ctx = PathContext.from_environ({"HOME": "/home/azureuser", "PATH": "/usr/bin"}, ontology.ontology_variables(), cwd="/w")
    fast = (credential_path(word, ctx), persistence_path(word, ctx))
    original = ontology._Compiled.plausible
    try:
        ontology._Compiled.plausible = lambda self, spelling: list(self.templates)  # type: ignore[method-assign]
        slow = (credential_path(word, ctx), persistence_path(word, ctx))
    finally:
        ontology._Compiled.plausible = original  # type: ignore[method-assign]
    assert fast == slow, word
