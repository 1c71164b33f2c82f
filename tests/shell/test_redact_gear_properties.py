"""Properties of the redactor over network-gear material (issue 28), for all inputs Hypothesis can build:

* redacting is idempotent, whatever the text around gear keywords, placeholders and encodings;
* a text made only of secret-free outputs comes back unchanged;
* a planted secret line of any class is redacted whatever text surrounds it;
* arbitrary unicode, lone surrogates and control characters never make it raise.
"""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netghost.redact import redact, redact_argv, redact_command
from tests.data.redact.make_corpus import SECRET_CLASSES, leaked

DATA = Path(__file__).resolve().parent.parent / "data" / "redact"
BENIGN_TEXTS = [
    json.loads(line)["text"] for line in (DATA / "benign.jsonl").read_text(encoding="utf-8").splitlines() if line
]

_FRAGMENTS = [
    "enable secret 5 ", "username admin password 7 ", "snmp-server community ", "tacacs-server key ",
    "crypto isakmp key ", " address 203.0.113.9", "set psksecret ENC ", "pre-shared-key ascii-text \"",
    "encrypted-password \"", "\"; ## SECRET-DATA", "$9$", "$6$rounds=5000$", "$apr1$", "{SSHA}", "root:",
    ":19000:0:99999:7:::", "CLIENT_RANDOM ", "Master-Key: ", "PASS ", "AUTH ", "*2\r\n$4\r\nAUTH\r\n$",
    "334 UGFzc3dvcmQ6\n", "Cookie: sid=", "; Path=/", "community: ", "C=\"", "\" GetRequest(28)",
    "sqlcmd -S srv -P ", "mysql -p", "az vm user update -u u -p ", "-passout pass:", "-storepass ",
    "PrivateKey = ", "PublicKey = ", "kind: Secret\ndata:\n  ", "chpasswd:\n  list: |\n    root:",
    "@Microsoft.KeyVault(SecretUri=", "\"kty\": \"RSA\", \"d\": \"", "\"nextLink\": \"", "$skiptoken=",
    "[REDACTED:password]", "********", "<removed>", "\\n", "\n", "\r\n", "\t", "\"", "'", "\\\"", "=", ":",
    "S3cr3t!x", "hunter22", "a0b1c2d3e4f5061728394a5b6c7d8e9f", "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=",
    "0822455D0A16", "Vy0s-PSK!x", "\x1b[31m", "\x00", "\ud800", "\udfff", "\u2028", "é", "→",
]  # fmt: skip
_ANY_CHAR = st.one_of(
    st.characters(exclude_categories=()),  # every category, control characters included
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
    st.sampled_from("\x00\x07\x1b\r\n\t\x0b\x0c\x85\u2028"),
)
_ANY_TEXT = st.text(alphabet=_ANY_CHAR, max_size=40)
_GEAR_TEXT = st.lists(st.one_of(st.sampled_from(_FRAGMENTS), _ANY_TEXT), max_size=20).map("".join)
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_GEAR_TEXT, st.sampled_from([None, "az keyvault secret show -n x --query value -o tsv", "wg show all dump",
                                    "tshark -r c.pcap -T fields -e ip.src -e snmp.community"]))
def test_redaction_is_idempotent(text: str, command: str | None) -> None:
    once = redact(text, command=command)
    twice = redact(once.text, command=command)
    assert twice.text == once.text
    assert twice.count == 0


@_SETTINGS
@given(st.lists(st.sampled_from(BENIGN_TEXTS), min_size=1, max_size=3), st.sampled_from(["\n", "\n\n", "\r\n"]))
def test_text_without_secrets_is_never_altered(parts: list[str], sep: str) -> None:
    text = sep.join(parts)
    assert redact(text).text == text


@_SETTINGS
@given(st.sampled_from(sorted(SECRET_CLASSES)), st.integers(0, 2**32), _ANY_TEXT, _ANY_TEXT)
@example("password-flag", 255, "", "")  # a four-character --password=VALUE in ps output: short, still a password
def test_a_planted_secret_is_redacted_whatever_surrounds_it(cls: str, seed: int, before: str, after: str) -> None:
    sample = SECRET_CLASSES[cls](random.Random(seed))
    text = f"{before}\n{sample.text}\n{after}"
    out = redact(text, command=sample.command).text
    assert [s for s in sample.secrets if leaked(s, out)] == [], (cls, seed)


@_SETTINGS
@given(_GEAR_TEXT, st.lists(_GEAR_TEXT, max_size=6))
def test_arbitrary_unicode_surrogates_and_controls_never_raise(text: str, argv: list[str]) -> None:
    redact(text)
    redact(text, command=text)
    shown, count, kinds = redact_argv(argv)
    assert len(shown) == len(argv) and count >= len(kinds)
    redact_command(text, argv)
    try:
        words = shlex.split(text)
    except ValueError:
        return
    redact_argv(words)
