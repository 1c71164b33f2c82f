"""Shared pieces of the redaction corpus generators: the sample record, random values, and the ways a
tool wraps a text (a device prompt, a run-command JSON message, a log prefix, CRLF, a code fence)."""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "Gen",
    "Sample",
    "b64",
    "case",
    "guid",
    "hexs",
    "ip",
    "pick",
    "pw",
    "quote",
    "rid",
    "token",
    "user",
    "wrap_config",
    "wrap_log",
    "wrap_output",
]


@dataclass(frozen=True)
class Sample:
    """One corpus row: a text, the exact substrings that must be gone (``secrets``) or must survive
    (``keep``), the command that printed it (when context matters), and why the verdict is what it is."""

    cls: str
    text: str
    secrets: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    command: str | None = None
    why: str = ""
    meta: dict[str, str] = field(default_factory=dict)


Gen = Callable[[random.Random], Sample]

_PW_BODY = string.ascii_letters + string.digits + "!%^*_+-.~@#=,"


def pw(rng: random.Random, lo: int = 8, hi: int = 24, *, short: float = 0.12, specials: str = "") -> str:
    """A human-ish password: mixed classes, no whitespace or quotes; ``short`` of them are 4-7 long."""
    if rng.random() < short:
        lo, hi = 4, 7
    n = rng.randint(lo, hi)
    body = _PW_BODY + specials
    core = "".join(rng.choice(body) for _ in range(max(0, n - 2)))
    return rng.choice(string.ascii_letters) + core + rng.choice(string.digits)


def token(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def hexs(rng: random.Random, nbytes: int, *, upper: bool = False) -> str:
    text = rng.randbytes(nbytes).hex()
    return text.upper() if upper else text


def b64(rng: random.Random, nbytes: int, *, urlsafe: bool = False, pad: bool = True) -> str:
    raw = rng.randbytes(nbytes)
    text = (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode()
    return text if pad else text.rstrip("=")


def guid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def ip(rng: random.Random, public: bool = True) -> str:
    if public:
        return f"{rng.choice([20, 40, 52, 104, 198, 203])}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def user(rng: random.Random) -> str:
    return rng.choice(["admin", "netops", "svc-backup", "jdoe", "monitor", "cisco", "ops_ro", "azureuser"])


def pick(rng: random.Random, options: list[str]) -> str:
    return rng.choice(options)


def case(rng: random.Random, word: str) -> str:
    """A keyword as another vendor or a human might type it (lower, UPPER, Title)."""
    return rng.choice([word, word, word.upper(), word.title()])


def quote(rng: random.Random, value: str, chars: str = "\"'") -> str:
    """The value bare, or quoted with one of ``chars``."""
    q = rng.choice(["", "", *chars])
    return f"{q}{value}{q}"


def rid(rng: random.Random, provider: str, name: str) -> str:
    return f"/subscriptions/{guid(rng)}/resourceGroups/rg-{rng.randint(1, 99)}/providers/{provider}/{name}"


def wrap_config(rng: random.Random, text: str, *, device: bool = True) -> str:
    """A configuration as it reaches the redactor: bare, after a ``show running-config`` prompt, inside a
    run-command JSON message (escaped), in a code fence, with CRLF or tab indentation."""
    roll = rng.random()
    if device and roll < 0.2:
        text = f"rtr-{rng.randint(1, 9)}#show running-config\nBuilding configuration...\n\nCurrent configuration : {rng.randint(900, 9000)} bytes\n!\n{text}\nend\n"
    elif roll < 0.35:
        return json.dumps(
            {"value": [{"code": "ProvisioningState/succeeded", "displayStatus": "Provisioning succeeded",
                        "level": "Info", "message": f"Enable succeeded: \n[stdout]\n{text}\n[stderr]\n"}]},
            indent=2,
        )
    elif roll < 0.45:
        text = f"```\n{text}\n```\n"
    elif roll < 0.55:
        text = text.replace("\n ", "\n\t")
    if rng.random() < 0.25:
        text = text.replace("\n", "\r\n")
    return text


def wrap_output(rng: random.Random, text: str) -> str:
    """Command output as the shell returns it: bare, CRLF, or escaped inside a JSON message."""
    roll = rng.random()
    if roll < 0.2:
        return json.dumps({"value": [{"code": "ComponentStatus/StdOut/succeeded", "message": text}]}, indent=2)
    if roll < 0.4:
        return text.replace("\n", "\r\n")
    return text


def wrap_log(rng: random.Random, lines: list[str]) -> str:
    """Lines as a decoder or a log prints them: bare, with a timestamp and host, or tshark-style indented."""
    style = rng.choice(["bare", "stamp", "indent"])
    if style == "stamp":
        lines = [f"2026-05-{rng.randint(10, 28)}T0{rng.randint(0, 9)}:1{rng.randint(0, 9)}:22Z sensor1 {line}" for line in lines]
    elif style == "indent":
        lines = ["    " + line for line in lines]
    return "\n".join(lines) + "\n"
