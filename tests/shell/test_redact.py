"""Redaction against the secrets corpus (tests/data/shell/secrets_dev.jsonl) and hand-made hard shapes."""

from __future__ import annotations

import base64
import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from netghost.shell import Redaction, redact

CORPUS = Path(__file__).resolve().parent.parent / "data" / "shell" / "secrets_dev.jsonl"


def _samples() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def test_corpus_recall_at_least_99_percent() -> None:
    total = missed = 0
    misses = []
    for sample in _samples():
        out = redact(sample["text"], command=sample.get("command")).text
        for secret in sample["secrets"]:
            total += 1
            if secret in out:
                missed += 1
                misses.append((sample["kind"], secret[:40]))
    assert total == 107
    assert (total - missed) / total >= 0.99, misses


def test_corpus_recall_without_command_context() -> None:
    """Only the bare tsv password needs the command; everything else is found from the text alone."""
    missed = [
        (s["kind"], secret[:30])
        for s in _samples()
        for secret in s["secrets"]
        if secret in redact(s["text"]).text
    ]
    assert [kind for kind, _ in missed] == ["az-keyvault-secret-show-tsv"]


def test_keep_substrings_survive() -> None:
    lost = [
        (s["kind"], keep)
        for s in _samples()
        for keep in s.get("keep") or []
        if keep not in redact(s["text"], command=s.get("command")).text
    ]
    assert lost == []


def test_benign_samples_lose_at_most_one_percent_of_characters() -> None:
    changed = chars = 0
    for sample in _samples():
        if sample["secrets"]:
            continue
        out = redact(sample["text"], command=sample.get("command")).text
        matcher = difflib.SequenceMatcher(None, sample["text"], out, autojunk=False)
        same = sum(block.size for block in matcher.get_matching_blocks())
        chars += len(sample["text"])
        changed += len(sample["text"]) - same
    assert chars > 10_000
    assert changed / chars <= 0.01


def test_corpus_is_idempotent() -> None:
    for sample in _samples():
        once = redact(sample["text"], command=sample.get("command"))
        twice = redact(once.text, command=sample.get("command"))
        assert twice.text == once.text
        assert twice.count == 0


def test_result_shape_counts_and_kinds() -> None:
    text = 'Password=Tr0ub4dor&3xyz;\n{"accessToken": "eyJ0eXAiOiJKV1QiLCJhbGc.eyJzdWIiOiIxMjM0NTY3ODkw.sig_sig_sig"}'
    result = redact(text)
    assert isinstance(result, Redaction)
    assert result.count == 2
    assert result.kinds == ("jwt", "password")
    assert "[REDACTED:password]" in result.text
    assert "Tr0ub4dor" not in result.text


PEM = (
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----\n"
)


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (json.dumps({"key": PEM}), "MIIEvQIBADANBgkqhkiG9w0", "private_key"),
        (
            "client-key-data: " + base64.b64encode(PEM.encode()).decode(),
            "LS0tLS1CRUdJTiBQUklW",
            "private_key",
        ),
        ('\x1b[1;34m"password"\x1b[0m: \x1b[0;32m"Tr0ub4dor&3xyz"\x1b[0m', "Tr0ub4dor&3xyz", "password"),
        ('{"url": "https://admin:p%40ss%2Fw0rd!@db.example.com/x"}', "p%40ss%2Fw0rd!", "basic_auth"),
        (
            "az vm create -n x --admin-password 'Hunter2!xyzzy' --generate-ssh-keys",
            "Hunter2!xyzzy",
            "password",
        ),
        ("curl -u admin:S3cr3tPassw0rd https://10.0.0.1/", "S3cr3tPassw0rd", "password"),
        ('{"message": "ok\\nexport DB_PASSWORD=\\"p4ss_w0rd_1\\"\\n"}', "p4ss_w0rd_1", "password"),
        ("GEMINI_API_KEY=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72", "google_api_key"),
        (
            "Authorization: SharedAccessSignature sr=x&sig=abcd1234efgh5678&se=1",
            "abcd1234efgh5678",
            "authorization",
        ),
        ("x-ms-encryption-key: fRCvoOJevPVxkjQnR2ZCON7ID4E1+pwEOEIVVFC1Ov4=", "fRCvoOJevPVx", "azure_key"),
        ("token=ghs_16C7e42F292c6912E7710c838347Ae178B4a and more", "ghs_16C7e42F292c", "github_token"),
        ("<password>Zx9!vQ2#mL7pK4</password>\nPassword: Zx9!vQ2#mL7pK4", "Zx9!vQ2#mL7pK4", "password"),
        ("redis://:Sup3rS3cretPw@cache:6380", "Sup3rS3cretPw", "basic_auth"),
        ("Ocp-Apim-Subscription-Key: 0123456789abcdef0123456789abcdef", "0123456789abcdef0123", "secret"),
        ('{"key1": "0123456789abcdef0123456789abcdef"}', "0123456789abcdef0123", "secret"),
        ("Driver={ODBC Driver 18};Server=x;Pwd={ab;cd efg12};", "efg12", "password"),
        ('{"auths": {"acr.io": {"auth": "dXNlcjpwYXNzd29yZDEyMw=="}}}', "dXNlcjpwYXNzd29yZDEyMw", "secret"),
        (
            "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
            "sk-proj-abcdef",
            "api_token",
        ),
        (
            "https://x.blob.core.windows.net/c?sv=2022-11-02&sig=AbC%2Bd%2Fe%3D12345678",
            "AbC%2Bd",
            "sas_signature",
        ),
        ('password := "Hunter2xyzq"', "Hunter2xyzq", "password"),
        ("<publishData><userPWD>Zx9vQ2mL7pK4wq</userPWD></publishData>", "Zx9vQ2mL7pK4wq", "password"),
        ('$password => "s3cr3tValue!"', "s3cr3tValue!", "password"),
        (
            'az login --service-principal -u 7fc6f80b -p "k8Q~abc.def_ghi-jkl" --tenant t',
            "k8Q~abc",
            "password",
        ),
        (
            "Cookie: a=1; ARRAffinity=0123456789abcdef0123; .AspNetCore.Session=CfDJ8LongValue12345",
            "CfDJ8Long",
            "cookie",
        ),
        ("SLACK_APP=xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef", "xapp-1-A01", "slack_token"),
        ("key: Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZ+ASbxyz=", "Zm9vYmFyYmF6cXV4", "azure_key"),
        (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAAIBl3ZWtleQ\nPrivate-MAC: 0a1b2c",
            "AAAAIBl3ZWtleQ",
            "private_key",
        ),
    ],
)
def test_hard_shapes(text: str, secret: str, kind: str) -> None:
    result = redact(text)
    assert secret not in result.text
    assert kind in result.kinds


@pytest.mark.parametrize(
    "text",
    [
        "certificate-authority-data: "
        + base64.b64encode(
            b"-----BEGIN CERTIFICATE-----\nMIIC5zCCAc+gAwIBAgIBADANBgkqhkiG9w0BAQsFADAV\n-----END CERTIFICATE-----\n"
        ).decode(),
        "x-ms-encryption-key-sha256: TbrRczAdGgMLlswQjXtJ6t6dpH2YyAZlNNnyrSBFwJk=",
        '"tokenType": "Bearer"',
        "client_secret=bP88Q~xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        '"password": "********"',
        "PING 10.0.0.4 (10.0.0.4) 56(84) bytes of data.\n64 bytes from 10.0.0.4: icmp_seq=1 ttl=64 time=0.04 ms",
        "[REDACTED:password] and [REDACTED:jwt]",
        "`az account get-access-token` emits credentials: Prints a bearer token for ARM",
        "commit 537224b83e772c85e19eec14180e39b32ff6895c",
        '"etag": "0x8DC1234567890AB"',
        '"keyName": "key1", "permissions": "FULL"',
        "api_key: YOUR_API_KEY",
        'password: "{{ .Values.pw }}"',
        '"secret": "DB_PASSWORD"',
        'password = "example-password"',
        "client_secret: ${CLIENT_SECRET}",
    ],
)
def test_benign_look_alikes_are_kept(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.count == 0


def test_secret_command_redacts_bare_value_only_with_context() -> None:
    text = "Saffron92@velvet1\n"
    assert redact(text).text == text
    cmd = "az keyvault secret show --vault-name kv -n db-password --query value -o tsv"
    assert "Saffron92" not in redact(text, command=cmd).text


def test_table_cells_under_secret_headers() -> None:
    table = (
        "Name         Value             ContentType\n"
        "-----------  ----------------  -----------\n"
        "db-password  Winter24?maple8\n"
        "api-key      Zx9vQ2mL7pK4wqRt  text/plain\n"
    )
    plain = redact(table).text
    assert "Zx9vQ2mL7pK4wqRt" not in plain  # random-looking: redacted on the header alone
    assert "Winter24?maple8" in plain  # human-style: needs the command
    with_cmd = redact(table, command="az keyvault secret list-versions --vault-name kv -o table").text
    assert "Winter24?maple8" not in with_cmd
    assert "db-password" in with_cmd and "ContentType" in with_cmd


@pytest.mark.parametrize(
    "text",
    [
        '{"primaryKey": "Ofoytbk2Ayweg9Juk0x4qZAKxXLXg0PSil9Pjuy5258=", "note": "Ofoytbk2Ayweg9Juk0x4qZAKxXLXg0PSil9Pjuy5258="}',
        '{"primaryKey": "Ofoytbk2Ayweg9Juk0x4qZAKxXLXg0PSil9Pjuy5258=", "note": "k=Ofoytbk2Ayweg9Juk0x4qZAKxXLXg0PSil9Pjuy5258%3D"}',
        '{"password": "Tr0ub4dor/&3xyz", "echo": "Tr0ub4dor\\/\\u00263xyz"}',
    ],
)
def test_every_spelling_of_a_found_secret_goes(text: str) -> None:
    out = redact(text).text
    assert "Ofoytbk2Ayweg9" not in out
    assert "Tr0ub4dor" not in out


def test_secret_command_makes_random_values_secret_whatever_their_name() -> None:
    text = (
        '{"default": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZ_-xyzAB", "code": "ProvisioningState/succeeded"}'
    )
    assert redact(text).text == text
    out = redact(text, command="az functionapp function keys list -g rg -n fn --function-name f").text
    assert "Zm9vYmFy" not in out
    assert "ProvisioningState/succeeded" in out


def test_public_certificate_blobs_are_kept_but_secret_blobs_go() -> None:
    blob = base64.b64encode(bytes(range(256)) * 3).decode()
    assert redact(json.dumps({"cer": blob})).count == 0
    assert redact(json.dumps({"x5c": [blob]})).count == 0
    assert blob not in redact(json.dumps({"value": blob})).text


def test_a_secret_that_spells_redacted_is_still_redacted() -> None:
    """Only a finished placeholder (``[REDACTED...``) is skipped as already redacted, not any value
    holding the word: ``Password=xREDACTED1`` is a password like any other."""
    for text in ("Password=xREDACTED1;Encrypt=True;", '{"password": "REDACTED-2024!"}'):
        out = redact(text).text
        assert "xREDACTED1" not in out and "REDACTED-2024" not in out, out
        assert "[REDACTED:" in out
