"""Property: redact() is idempotent and never leaves a planted secret, whatever surrounds it."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from netghost.redact._rules import PLACEHOLDER
from netghost.shell import redact

_FRAGMENTS = [
    "Password=",
    "password: ",
    '"primaryKey": "',
    '"',
    "sig=",
    "&",
    "?code=",
    "https://user:",
    "@host/",
    "Authorization: Bearer ",
    "[REDACTED:password]",
    "********",
    "<redacted>",
    "\\n",
    "\n",
    "\x1b[32m",
    "%2B",
    "=",
    ";",
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "-----END RSA PRIVATE KEY-----",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.",
    "AKIA44L64WRT3QHBMZOH",
    "yY55Q~BchV9xTkOdLVJI4oHCtawu2jM69G2ft-wH",
    "Ofoytbk2Ayweg9Juk0x4qZAKxXLXg0PSil9Pjuy5258=",
    "ghp_Wt7HfuXZiMNRRqlw90O6OkQhug3m8FsvjogS",
    "Tr0ub4dor&3",
    "xyzzy42",
    "REDACTED",
    "[REDACTED:",
    "]",
]

texts = st.lists(
    st.one_of(st.sampled_from(_FRAGMENTS), st.text(min_size=0, max_size=12)), min_size=0, max_size=25
).map("".join)


@settings(max_examples=200, deadline=None)
@given(texts)
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.count == 0
    assert once.count >= len(once.kinds)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_planted_shaped_secret_is_always_removed(before: str, after: str) -> None:
    secret = "ghp_Wt7HfuXZiMNRRqlw90O6OkQhug3m8FsvjogS"
    out = redact(f"{before} {secret} {after}").text
    assert secret not in out
    assert redact(out).text == out


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=80))
def test_redact_is_idempotent_with_command_context(text: str) -> None:
    cmd = "az keyvault secret show --vault-name kv -n db --query value -o tsv"
    once = redact(text, command=cmd)
    assert redact(once.text, command=cmd).text == once.text


_VALUE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%^*()_+-.~"


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=_VALUE_CHARS, min_size=8, max_size=40).filter(
        # documented placeholders (YOUR_API_KEY, ********, ${VAR}) are deliberately kept
        lambda v: (
            not v.isdigit()
            and len(set(v)) >= 4
            and not v.startswith(("$", "-", "."))
            and not PLACEHOLDER.match(v)
            # a setting's word, not a secret (``"clientSecret": "DISABLED"`` says the secret is off)
            and v.lower() not in {"required", "optional", "enabled", "disabled", "managedidentity", "serviceprincipal"}
        )
    ),
    st.sampled_from(
        [
            "Password={v};Encrypt=True;",
            '{{"password": "{v}"}}',
            '{{\n  "clientSecret": "{v}",\n  "name": "x"\n}}',
            'export API_TOKEN="{v}"',
            "DB_PASSWORD={v}\nHOME=/root",
            '{{"message": "env\\nDB_PASSWORD={v}\\nHOME=/root"}}',
            "aws_secret_access_key = {v}",
            "az login --service-principal -u app --password {v} --tenant t",
        ]
    ),
)
def test_labelled_secret_never_survives(value: str, template: str) -> None:
    text = template.format(v=value)
    out = redact(text).text
    # a value may itself spell part of a placeholder ("REDACTED"): look for it outside the placeholders
    assert value not in re.sub(r"\[REDACTED(?::[A-Za-z0-9_]+)?\]", "", out), (text, out)
    assert redact(out).text == out
