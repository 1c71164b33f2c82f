"""What the command that printed a text says about it: which output is a bare secret, which column is one.

``az keyvault secret show --query value -o tsv`` prints a password with no label; ``tshark -T fields -e
ip.src -e snmp.community`` prints a community in its second column; ``wg show all dump`` prints private,
pre-shared and public keys in fixed columns. Only the command knows. A command is judged by its *words*
(``keyvault secret show``, ``keys list``, ``printenv``), by the files it names (``.env``, ``id_rsa``) and
by its ``--query``, never by an option's value: ``--auth-mode key`` asks az to fetch a key, it does not
print one, and treating its warnings as bare secrets hid why a download failed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from netghost.redact._rules import LINE_ASSIGNMENT, PLACEHOLDER, SECRET_COMMAND_WORDS
from netghost.redact._values import _looks_random, _value_shaped

__all__ = ["bare_spans", "column_spans", "is_secret_command", "value_field_spans"]

_SECRET_FILES = re.compile(
    r"(?i)(?:credentials|\.env|\.netrc|\.pgpass|id_(?:rsa|dsa|ecdsa|ed25519)|.*\.(?:pem|key|pfx|p12)|"
    r"secrets?(?:\.\w+)?|\.git-credentials|accesstokens\.json|msal_token_cache\.\w+)"
)
# A --query field that selects a secret (keys[0].value, primaryKey, osProfile.customData, passwords[].value).
_SECRET_FIELD = re.compile(
    r"(?i)\w*(?:password|passwd|pwd|secret|token|connectionstring|customdata|userdata|sharedkey|sas|credential)s?"
    r"\w*|(?:primary|secondary)\w*|(?:\w*master)?key\d*|keys|values?"
)
_SECRET_URL = re.compile(
    r"(?i)/(?:list\w*keys|listsecrets?|listconnectionstrings|list\w*credentials?|regenerate\w*keys?|getsecrets?|"
    r"publishxml)\b"
)
_STATUS_WORDS = frozenset(
    {"true", "false", "none", "null", "enabled", "disabled", "succeeded", "failed", "running", "stopped",
     "available", "unavailable", "connected", "notconnected", "ok", "error", "warning"}
)  # fmt: skip
# tshark -T fields columns that hold a credential, and columns that do only on some rows (the command
# column beside them names the row: an FTP argument is the password on a PASS row only).
_CREDENTIAL_FIELDS = frozenset(
    {"snmp.community", "http.authbasic", "http.authorization", "http.proxy_authorization", "http.cookie",
     "http.cookie_pair", "http.set_cookie", "smtp.auth.password", "pgsql.password", "ldap.simple",
     "mysql.passwd", "ntlmssp.auth.ntresponse", "ntlmssp.ntlmv2_response", "radius.user_password",
     "tacplus.password", "sip.auth.password", "imap.auth.password", "pop.request.parameter.password"}
)  # fmt: skip
_PAIRED_FIELDS = {
    "ftp.request.arg": ("ftp.request.command", frozenset({"PASS"})),
    "pop.request.parameter": ("pop.request.command", frozenset({"PASS"})),
    "smtp.req.parameter": ("smtp.req.command", frozenset({"AUTH"})),
}


def is_secret_command(command: str) -> bool:
    """Tell whether ``command`` prints secrets without labels (so a lone value in its output is one).

    Args:
        command: The command line (split on whitespace; not run through a shell).
    """
    tokens = [raw.strip("'\"") for raw in command.split()]
    if "describe" in tokens:  # kubectl describe secret prints sizes, never values
        return False
    value_next = False
    secret = False
    query = None
    for i, token in enumerate(tokens):
        base = token.rsplit("/", 1)[-1]
        if base and _SECRET_FILES.fullmatch(base):
            return True
        if token.startswith("-"):
            name, eq, value = token.partition("=")
            if name == "--query":
                query = value if eq else (tokens[i + 1] if i + 1 < len(tokens) else "")
            value_next = not eq
            continue
        if not value_next and SECRET_COMMAND_WORDS.fullmatch(token):
            secret = True
        value_next = False
    if query is not None:  # the query says which fields are printed: keys list --query [0].keyName is not secret
        return any(_SECRET_FIELD.fullmatch(field.replace("_", "")) for field in re.findall(r"[A-Za-z_]\w*", query))
    return secret or _SECRET_URL.search(command) is not None


def bare_spans(text: str) -> Iterator[tuple[int, int]]:
    """Under a secret-emitting command, a lone token on a line (``-o tsv``) is the secret itself; in a
    tab-separated row, each random-looking field is.

    Lines that only label (``WARNING:``, ``Code:``), ``NAME=value`` pairs (the label rules know which
    names are secrets), status words and numbers are left alone.
    """
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        fields = [(m.group(), pos + m.start()) for m in re.finditer(r"[^\t]+", body) if m.group().strip()]
        pos += len(line)
        if len(fields) == 1:
            field, at = fields[0]
            token = field.strip()
            if re.search(r"\s", token) or not _bare_ok(token):
                continue
            start = at + field.index(token)
            inner = token.strip("\"'")
            yield start + token.index(inner), start + token.index(inner) + len(inner)
        elif len(fields) > 1:
            for field, at in fields:
                token = field.strip()
                if (_looks_random(token) or _value_shaped(token)) and _bare_ok(token):
                    start = at + field.index(token)
                    yield start, start + len(token)


_VALUE_FIELD = re.compile(r"\"(?:value|secret|password)\"\s*:\s*\"(?P<v>(?:[^\"\\\r\n]|\\.)+)\"")


def value_field_spans(text: str) -> Iterator[tuple[int, int]]:
    """Under a secret-emitting command, a JSON ``"value"`` is the secret however short (``az network
    vpn-connection shared-key show`` prints ``{"id": ..., "value": "abc12"}``)."""
    for match in _VALUE_FIELD.finditer(text):
        yield match.start("v"), match.end("v")


def _bare_ok(token: str) -> bool:
    inner = token.strip("\"'")
    if len(inner) < 3 or inner.endswith(":") or inner.isdigit() or PLACEHOLDER.match(inner):
        return False
    if not any(c.isalnum() for c in inner):  # a table rule: ----, ====
        return False
    if "[REDACTED" in inner or inner.lower() in _STATUS_WORDS or _is_assignment(inner):
        return False
    return inner not in "{}[],"


def _is_assignment(token: str) -> bool:
    """``DB_PASSWORD=x`` (printenv) is a name and a value; ``bs6fWtG=cz9g`` is a password with an ``=``: a
    name has no digits mixed into both cases."""
    match = LINE_ASSIGNMENT.match(token)
    if match is None:
        return False
    name = match.group("name")
    return not (any(c.isdigit() for c in name) and any(c.isupper() for c in name) and any(c.islower() for c in name))


def column_spans(text: str, command: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(secret spans, public spans) of the columns a known tool prints: ``tshark -T fields`` credential
    fields, ``wg show ... dump`` / ``preshared-keys`` key columns."""
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    names = [a.rsplit("/", 1)[-1] for a in argv]
    if "tshark" in names:
        return _tshark(text, argv), []
    if "wg" in names and "show" in argv:
        return _wireguard(text, argv)
    return [], []


def _rows(text: str, sep: str) -> Iterator[list[tuple[str, int]]]:
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        cells, at = [], pos
        for cell in body.split(sep):
            cells.append((cell, at))
            at += len(cell) + len(sep)
        pos += len(line)
        yield cells


def _tshark(text: str, argv: list[str]) -> list[tuple[int, int]]:
    fields: list[str] = []
    sep, header, is_fields = "\t", False, False
    for i, arg in enumerate(argv):
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if arg in ("-T", "-Tfields") and (arg == "-Tfields" or nxt == "fields"):
            is_fields = True
        elif arg == "-e" and nxt:
            fields.append(nxt)
        elif arg.startswith("-e") and len(arg) > 2:
            fields.append(arg[2:])
        elif arg == "-E" and nxt.startswith("separator="):
            sep = {"/t": "\t", "/s": " "}.get(nxt[10:], nxt[10:] or "\t")
        elif arg == "-E" and nxt in ("header=y", "header=Y"):
            header = True
    if not is_fields or not fields:
        return []
    secret_cols = {i for i, f in enumerate(fields) if f.lower() in _CREDENTIAL_FIELDS}
    paired = {
        i: (fields.index(cmd), words)
        for i, f in enumerate(fields)
        if f in _PAIRED_FIELDS and (cmd := _PAIRED_FIELDS[f][0]) in fields
        for words in (_PAIRED_FIELDS[f][1],)
    }
    if not secret_cols and not paired:
        return []
    spans = []
    for n, cells in enumerate(_rows(text, sep)):
        if (header and n == 0) or len(cells) != len(fields):
            continue
        for i, (cell, at) in enumerate(cells):
            hit = i in secret_cols or (i in paired and cells[paired[i][0]][0].strip('"').upper() in paired[i][1])
            inner = cell.strip().strip('"')
            if hit and inner and not PLACEHOLDER.match(inner):
                start = at + cell.index(inner)
                spans.append((start, start + len(inner)))
    return spans


def _wireguard(text: str, argv: list[str]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``wg show [IF|all] dump``: interface rows 'private public port fwmark', peer rows 'public psk endpoint
    ...'; ``wg show IF preshared-keys``: 'public psk'. Rows from ``all`` start with the interface name."""
    mode = "dump" if "dump" in argv else "psk" if "preshared-keys" in argv else ""
    if not mode:
        return [], []
    secret, public = [], []
    for row in _rows(text, "\t"):
        keys = row[1:] if "all" in argv and len(row) > 1 else row
        if mode == "psk" and len(keys) == 2:
            public.append((keys[0][1], keys[0][1] + len(keys[0][0])))
            secret.append((keys[1][1], keys[1][1] + len(keys[1][0])))
        elif len(keys) == 4:
            secret.append((keys[0][1], keys[0][1] + len(keys[0][0])))
            public.append((keys[1][1], keys[1][1] + len(keys[1][0])))
        elif len(keys) == 8:
            public.append((keys[0][1], keys[0][1] + len(keys[0][0])))
            if keys[1][0] != "(none)":
                secret.append((keys[1][1], keys[1][1] + len(keys[1][0])))
    return secret, public
