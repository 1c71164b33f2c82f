"""What the learned models see: a parsed argv, or a piece of text, as a fixed-length float vector.

One definition serves training (``training/``) and run time, so the vectors a model was fitted on are
the vectors it scores. Tokens are hashed with CRC-32 (stable across processes, unlike ``hash()``) into
``2**bits`` buckets, each set to 1 (commands) or to log(1 + count) (text).

Command features are read from the *argv*, not the characters: the command key (``az vm show``, or the
program's name), each option and the option crossed with the key, the shape of each value (an ``@``
file reference, a URL and its scheme, an absolute or home path, ``..``, an IP literal, a link-local
address, a glob, a length bucket) alone, crossed with the key and with the option it follows, and
words of a small credential/escape lexicon found in the arguments at a word boundary. Four numeric features
close the vector: argument count, longest argument, and how many of the command's options were never
seen on a benign read of that command (``novel``, from the model's own vocabulary), so "unusual
options for `az vm show`" is something the model can score and the reason can name.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import zlib
from collections.abc import Collection, Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "COMMAND_BITS",
    "TEXT_BITS",
    "argv_digest",
    "command_key",
    "command_options",
    "command_tokens",
    "command_vector",
    "lexicon_words",
    "text_chunks",
    "text_vector",
]

COMMAND_BITS = 11
"""log2 of the hashed part of a command vector."""
TEXT_BITS = 12
"""log2 of the text vector."""
_NUMERIC = 4

LEXICON: tuple[str, ...] = (
    "access", "account", "admin", "auth", "cert", "config", "connection", "cred", "custom-data", "exec",
    "file", "follow", "id_rsa", "identity", "imds", "key", "kube", "location", "login", "metadata", "netrc",
    "oauth", "output", "passw", "private", "proc", "redirect", "root", "sas", "script", "secret", "shadow",
    "sig", "token", "upload", "user-data", "userdata", "wireserver", ".azure", ".ssh", "/etc", "169.254",
    "168.63.129.16",
)
"""Words whose presence in an argument is worth a feature of its own (weights are learned). Each is matched
at a word boundary on its left and as a prefix on its right: ``script`` fires on ``--scripts`` but not
inside ``subscriptions``; ``.azure`` on ``~/.azure/config`` but not on ``management.azure.com``."""
_LEXICON_AT_WORD: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (word, re.compile(r"(?<![a-z0-9])" + re.escape(word))) for word in LEXICON
)

_IPV4 = re.compile(r"(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?")
_IPV6 = re.compile(r"[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):/")
_WORD = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?")
_MAX_AZ_WORDS = 4


def argv_digest(argv: Sequence[str]) -> str:
    """The first 16 hex digits of the SHA-256 of ``argv`` as canonical JSON (the reviewed-SAFE list's key),
    az command words case-folded as azure-cli reads them (``az VM Show`` is ``az vm show``)."""
    key = command_key(argv)
    skip = len(key.split()) if key.startswith("az") else 1
    data = json.dumps([*key.split()[:skip], *argv[skip:]], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _bucket(token: str, mask: int) -> int:
    return zlib.crc32(token.encode("utf-8", "surrogatepass")) & mask


def command_key(argv: Sequence[str]) -> str:
    """``az`` plus its command words (case-folded, as azure-cli reads them), else the program's name."""
    if not argv:
        return ""
    name = argv[0].rsplit("/", 1)[-1].lower()
    if name != "az":
        return name
    words = ["az"]
    for tok in argv[1 : 1 + _MAX_AZ_WORDS]:
        if tok.startswith("-"):
            break
        words.append(tok.lower())
    return " ".join(words)


def command_options(argv: Sequence[str]) -> list[str]:
    """The option names of ``argv`` (``--name=x`` -> ``--name``), in order; case kept (``-L`` is not ``-l``)."""
    return [tok.split("=", 1)[0] for tok in argv[1:] if tok.startswith("-") and len(tok) > 1]


def _shapes(value: str) -> list[str]:  # noqa: PLR0912  one branch per shape: it reads as the table it is
    """The coarse shapes of one argument value (never the value itself: values are unbounded)."""
    out = [f"len{min(len(value).bit_length(), 9)}"]
    if value.startswith("@"):
        out.append("at0")
    elif "@" in value:
        out.append("at")
    scheme = _SCHEME.match(value)
    if scheme:
        out.append("scheme:" + scheme.group(1).lower())
    if "://" in value:
        out.append("url")
    if value.startswith(("/subscriptions/", "/providers/")):
        out.append("armid")
    elif value.startswith("/"):
        out.append("abspath")
    if value.startswith("~"):
        out.append("home")
    if ".." in value:
        out.append("dotdot")
    if "=" in value:
        out.append("eq")
    # In a URL or an ARM path `?` starts the query (`?api-version=...`): it is no glob there.
    query = "?" in value and ("://" in value or value.startswith("/"))
    for ch, name in (("*", "glob"), ("?", "query" if query else "glob"), ("[", "bracket"), ("$", "dollar"),
                     ("{", "brace"), ("%", "pct"), ("\\", "bslash"), ("#", "hash"), (";", "semi"), ("|", "pipe")):
        if ch in value:
            out.append(name)
    if _IPV4.search(value):
        out.append("ip4")
    elif _IPV6.fullmatch(value):
        out.append("ip6")
    if value.isdigit():
        out.append("num")
    return out


def command_tokens(argv: Sequence[str], key: str | None = None) -> list[str]:
    """The feature tokens of one argv (see the module docstring); deterministic, order-preserving."""
    key = command_key(argv) if key is None else key
    skip = len(key.split()) if key.startswith("az") else 1
    tokens = [f"c:{key}"]
    option = ""
    lowered = " ".join(argv[1:]).lower()
    for tok in argv[skip:]:
        if tok.startswith("-") and len(tok) > 1:
            name, _, inline = tok.partition("=")
            option = name
            tokens += [f"o:{option}", f"co:{key}|{option}"]
            if not option.startswith("--") and len(option) > 2:
                tokens += [f"o:-{c}" for c in option[1:]]
            if inline:
                tokens += [f"os:{option}|{s}" for s in _shapes(inline)]
            continue
        for shape in _shapes(tok):
            tokens += [f"s:{shape}", f"cs:{key}|{shape}", f"os:{option}|{shape}"]
        if "/providers/" in tok.lower():
            # An ARM id's resource type path (names dropped): which kinds of resource are read.
            parts = tok.lower().split("/providers/", 1)[1].split("/")
            tokens.append("arm:" + "/".join(parts[0::2][:4]))
        option = ""
    for word in lexicon_words(lowered):
        tokens += [f"l:{word}", f"cl:{key}|{word}"]
    return tokens


def lexicon_words(lowered: str) -> list[str]:
    """The lexicon words in ``lowered`` (the arguments, lower-cased), each at a word boundary."""
    # The substring test first: the cheap "no" for almost every word.
    return [word for word, at_word in _LEXICON_AT_WORD if word in lowered and at_word.search(lowered) is not None]


def command_vector(argv: Sequence[str], benign_pairs: Collection[str] = (), known_keys: Collection[str] = (),
                   *, key: str | None = None) -> npt.NDArray[np.float32]:
    """One row (shape ``(1, 2**COMMAND_BITS + 4)``) for the command risk model.

    Args:
        argv: the parsed command.
        benign_pairs: ``"key|option"`` pairs seen on benign reads (the model's vocabulary).
        known_keys: command keys seen on benign reads.
        key: the command key when the caller has it already.
    """
    key = command_key(argv) if key is None else key
    size = 1 << COMMAND_BITS
    mask = size - 1
    row = np.zeros((1, size + _NUMERIC), dtype=np.float32)
    for tok in command_tokens(argv, key):
        row[0, _bucket(tok, mask)] = 1.0
    novel = sum(1 for o in set(command_options(argv)) if f"{key}|{o}" not in benign_pairs)
    row[0, size] = math.log1p(len(argv))
    row[0, size + 1] = math.log1p(max((len(a) for a in argv), default=0)) / 4.0
    row[0, size + 2] = min(novel, 3) / 3.0
    row[0, size + 3] = 0.0 if key in known_keys else 1.0
    return row


# ---- text -------------------------------------------------------------------------------------------

_CHUNK_CHARS = 600
_CHUNK_STEP = 400


def text_chunks(text: str) -> list[str]:
    """Windows of about 600 characters that overlap by 200, cut at line ends where there are lines.

    Why windows: an instruction planted in a long output is one sentence among thousands of benign
    words; scored as one bag it would drown, scored per window it stands out.
    """
    if len(text) <= _CHUNK_CHARS:
        return [text]
    chunks: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + _CHUNK_CHARS)
        if end < len(text):
            cut = text.rfind("\n", start + _CHUNK_STEP // 2, end)
            end = cut + 1 if cut > start else end
        chunks.append(text[start:end])
        if end >= len(text):
            break
        start = max(end - (_CHUNK_CHARS - _CHUNK_STEP), start + 1)
    return chunks


def _text_tokens(text: str) -> Iterable[str]:
    words = _WORD.findall(text.lower())
    yield from (f"w:{w}" for w in words)
    yield from (f"b:{a} {b}" for a, b in itertools.pairwise(words))


def text_vector(chunks: Sequence[str]) -> npt.NDArray[np.float32]:
    """One row per chunk (shape ``(len(chunks), 2**TEXT_BITS)``): log(1 + count) of hashed words and bigrams."""
    size = 1 << TEXT_BITS
    mask = size - 1
    rows = np.zeros((len(chunks), size), dtype=np.float32)
    for i, chunk in enumerate(chunks):
        counts: dict[int, int] = {}
        for tok in _text_tokens(chunk):
            b = _bucket(tok, mask)
            counts[b] = counts.get(b, 0) + 1
        if counts:
            idx = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
            rows[i, idx] = np.log1p(np.fromiter(counts.values(), dtype=np.float32, count=len(counts)))
    return rows
