"""Secrets told in a sentence: what the user's problem statement (or a model's reasoning) holds in prose.

The issue's case: "the cache password is ..." in the intent reached the model, because every label
rule wants ``name=value`` or ``name: value``. Prose forms must be caught; a sentence that only talks
about a password must be left alone.
"""

from __future__ import annotations

import pytest

from netghost.redact import redact, redact_value

PROSE = [
    ("the cache password is Tr0ub4dor-cache-99", "Tr0ub4dor-cache-99"),
    ("web-vm-01 cannot reach redis; the cache password is hunter2.", "hunter2"),
    ("The password was Winter24?maple8 yesterday", "Winter24?maple8"),
    ("the admin password for sql-01 is 'S3cret pass phrase!'", "S3cret pass phrase!"),
    ("password for admin: hunter22 (rotated)", "hunter22"),
    ("the passphrase is still blue-Sky-77", "blue-Sky-77"),
    ("The API key for prod was x9Zq8Wv7Ut6", "x9Zq8Wv7Ut6"),
    ("our storage key is set to Q2xvdWRLZXkxMjM0NQ", "Q2xvdWRLZXkxMjM0NQ"),
    ("the client secret is “Ab3~dEf9.ghI”", "Ab3~dEf9.ghI"),
]
WORDS = [
    "the password is incorrect",
    "Password is Required.",
    "the storage key is stored in Key Vault",
    "The access token is expired.",
    "the primary key is customer_id",
    "token: Prints a bearer token",
    "curl https://x.example/?password=abc&next=1 fails",  # name=value belongs to the label rules
]


@pytest.mark.parametrize(("text", "secret"), PROSE)
def test_a_secret_told_in_a_sentence_is_redacted(text: str, secret: str) -> None:
    done = redact(text)
    assert secret not in done.text and done.count >= 1
    assert redact(done.text).text == done.text  # idempotent


@pytest.mark.parametrize("text", WORDS)
def test_a_sentence_about_a_secret_is_left_alone(text: str) -> None:
    assert redact(text).text == text


def test_a_value_is_redacted_string_by_string_and_as_json() -> None:
    value = {"note": "the cache password is hunter22", "password": "plainword9", "n": 3, "ok": True,
             "list": ("the API key was x9Zq8Wv7Ut6",)}
    out = redact_value(value)
    assert "hunter22" not in str(out) and "x9Zq8Wv7Ut6" not in str(out) and "plainword9" not in str(out)
    assert out["n"] == 3 and out["ok"] is True and isinstance(out["list"], list)


def test_a_labelled_password_holding_an_ampersand_is_redacted_whole() -> None:
    """The hostile harness's planted password (the label rule once stopped at the '&')."""
    assert "&3-horse-battery" not in redact("password=Tr0ub4dor&3-horse-battery").text
