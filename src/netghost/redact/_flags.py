"""Passwords on command lines, by what each tool reads as a password.

``-p`` is a password for ``sshpass`` and a port for ``ssh``; ``-P`` is a password for ``sqlcmd`` and a
port for ``mysql``; ``-p`` of ``az sql server create`` is the admin password and of ``az deployment group
create`` a parameters file. So the flags are looked up per tool (the table below, from each tool's manual),
on the command line itself (``redact_argv``) or inside text that shows one (``ps`` rows, shell history, an
audit JSON string). A value that only names where the password is (``pass:`` vs ``env:``/``file:`` in
openssl, ``$VAR``) is not a secret.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from netghost.redact._rules import PLACEHOLDER
from netghost.redact._span_rule import Haystack, decode_json_string
from netghost.redact._values import _label_kind

__all__ = ["argv_spans", "flag_spans", "property_spans"]


@dataclass(frozen=True)
class _Tool:
    """What one tool reads as a password: flags whose *next* word is one, flags with the value attached
    (``-pSECRET``, ``/p:SECRET``), and a prefix the value carries (openssl ``pass:``)."""

    names: tuple[str, ...]
    separate: frozenset[str] = frozenset()
    attached: tuple[str, ...] = ()
    split: str = ""  # the password is after this character (smbclient 'user%password')
    prefix: str = ""  # the value must start with this, which is not part of the password
    after: str = ""  # the flags mean a password only after this subcommand (docker login -p)


def _t(names: str, separate: str = "", attached: str = "", **kw: str) -> _Tool:
    return _Tool(tuple(names.split()), frozenset(separate.split()), tuple(attached.split()), **kw)


_TOOLS: tuple[_Tool, ...] = (
    _t("sqlcmd bcp osql isql", "-P", "-P"),
    _t("mysql mysqldump mysqladmin mysqlimport mysqlshow mysqlcheck mysqlsh mariadb mariadb-dump", "", "-p"),
    _t("ldapsearch ldapadd ldapmodify ldapdelete ldapwhoami ldappasswd ldapcompare ldapmodrdn ldapexop", "-w", "-w"),
    _t("redis-cli valkey-cli keydb-cli", "-a --pass"),
    _t("ipmitool", "-P"),
    _t("snmpwalk snmpget snmpbulkwalk snmpbulkget snmpset snmptrap snmpgetnext snmptable snmpdelta snmpstatus "
       "snmpinform snmptest snmpdf snmpusm snmpvacm snmptranslate onesixtyone braa", "-c -A -X", "-c -A -X"),
    _t("mosquitto_pub mosquitto_sub mosquitto_rr", "-P --pw"),
    _t("ssh-keygen", "-P -N"),
    _t("zip unzip zipcloak", "-P --password"),
    _t("7z 7za 7zr", "", "-p"),
    _t("keytool jarsigner", "-storepass -keypass -srcstorepass -deststorepass -srckeypass -destkeypass -new"),
    _t("openssl", "-passin -passout -pass -password -srcpass -destpass", prefix="pass:"),
    _Tool(("openssl",), frozenset({"-k"})),
    _t("xfreerdp wlfreerdp sdl-freerdp xfreerdp3", "", "/p: /password:"),
    _t("wmic", "", "/password:"),
    _t("smbclient rpcclient smbmap smbget smbcacls smbtree", "-U --user", "-U", split="%"),
    _t("sshpass", "-p", "-p"),
    _t("rdesktop psexec psexec.py", "-p"),
    _t("mongo mongosh mongodump mongorestore mongoexport mongoimport", "-p --password"),
    _t("docker podman nerdctl helm oras buildah skopeo crane", "-p --password", after="login"),
    _t("winrs", "", "-p: -password: /p: /password:"),
)
_AZ = _t("az", "-p")
# az keyvault secret set --value, az network vpn-connection shared-key update --value: the value is the secret.
_AZ_VALUE = _t("az", "--value")
_AZ_VALUE_GROUPS = frozenset({"secret", "shared-key"})
_BY_NAME = {name: tool for tool in _TOOLS for name in tool.names}
# az commands whose -p is a password: user and server administration (az sql server create -p, az vm user
# update -p, az postgres flexible-server create -p); elsewhere -p is --parameters, --port or --priority.
_AZ_PASSWORD_GROUPS = frozenset({"user", "users", "server", "flexible-server", "mi", "login"})
_SEPARATORS = frozenset({"|", "||", "&&", ";", "&", "|&"})
_TOKEN = re.compile(r"""(?:[^\s'"`|;&]+|'[^']*'|"(?:[^"\\]|\\.)*"|`[^`]*`)+|[|;&]+""")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_REFERENCE = re.compile(r"^(?:env|file|fd|stdin)(?::|$)|^\$[{(]?\w|^%\w+%$")
_SPECIAL = (
    # htpasswd -b[c...] FILE USER PASSWORD, htpasswd -nb USER PASSWORD (-n prints instead of writing a file)
    re.compile(r"\bhtpasswd[ \t]+(?:-(?!\w*n)\w*b\w*[ \t]+)(?:-\w+[ \t]+)*\S+[ \t]+\S+[ \t]+(?P<v>'[^'\r\n]*'|\"[^\"\r\n]*\"|[^\s'\"]+)"),
    re.compile(r"\bhtpasswd[ \t]+-(?=\w*n)(?=\w*b)\w+[ \t]+(?:-\w+[ \t]+)*\S+[ \t]+(?P<v>'[^'\r\n]*'|\"[^\"\r\n]*\"|[^\s'\"]+)"),
    # nmcli ... password X / wifi-sec.psk X; wpa_passphrase SSID PASSPHRASE
    re.compile(r"\bnmcli\b[^\r\n]*?\b(?:password|wifi-sec\.psk|802-1x\.password|vpn\.secrets\.password)[ \t]+(?P<v>'[^'\r\n]*'|\"[^\"\r\n]*\"|[^\s'\"]+)"),
    re.compile(r"\bwpa_passphrase[ \t]+(?:'[^']*'|\"[^\"]*\"|\S+)[ \t]+(?P<v>'[^'\r\n]*'|\"[^\"\r\n]*\"|[^\s'\"|;&]+)"),
    # echo PASSWORD | sudo -S ...: sudo reads its password from the pipe
    re.compile(r"\becho[ \t]+(?:-[neE]+[ \t]+)?(?P<v>'[^'\r\n]*'|\"[^\"\r\n]*\"|[^\s'\"|;&]+)[ \t]*\|[ \t]*sudo[ \t]+(?:-\w+[ \t]+)*?-S\b"),
    # net use \\host\share PASSWORD /user:NAME, net user NAME PASSWORD /add
    re.compile(r"(?i)\bnet[ \t]+use[ \t]+\S+[ \t]+(?P<v>[^\s/*][^\s]*)[ \t]+/user:"),
    re.compile(r"(?i)\bnet[ \t]+user[ \t]+\S+[ \t]+(?P<v>[^\s/*][^\s]*)[ \t]+/add\b"),
    # sqlplus user/password@db
    re.compile(r"(?i)\bsqlplus[ \t]+(?:-\w+[ \t]+)*[\w$#.]+/(?P<v>[^@\s/]+)(?:@|[ \t]|$)"),
    # echo 'user:password' | chpasswd
    re.compile(r"\becho[ \t]+(?P<q>['\"]?)[\w.-]+:(?P<v>[^\s'\"]+)(?P=q)[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b"),
    # PowerShell ConvertTo-SecureString 'password' -AsPlainText
    re.compile(r"(?i)\bConvertTo-SecureString[ \t]+(?:-String[ \t]+)?(?P<q>['\"])(?P<v>[^'\"\r\n]+)(?P=q)"),
)
_NEEDLES = tuple(
    sorted({n.split(".")[0] for n in _BY_NAME} | {"az ", "htpasswd", "net use ", "net user ", "sqlplus", "chpasswd",
                                                   "securestring", "nmcli", "wpa_passphrase", "sudo"})
)
# Password forms without an option-like token (" -x"): Windows-style "/p:", positional passwords.
_SPECIAL_NEEDLES = ("/p:", "/password:", "-p:", "-password:", "net use ", "net user ", "sqlplus", "chpasswd",
                    "securestring", "nmcli", "wpa_passphrase")


def _unquote(token: str, start: int) -> tuple[str, int, int]:
    """A token's text without one level of surrounding quotes, and its span."""
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1], start + 1, start + len(token) - 1
    return token, start, start + len(token)


def _base(token: str) -> str:
    name = token.strip("'\"").rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    return name[:-4] if name.endswith(".exe") else name


def _accept(value: str) -> bool:
    return bool(value) and not PLACEHOLDER.match(value) and _REFERENCE.search(value) is None and "[REDACTED" not in value


def _value_span(tool: _Tool, value: str, start: int, end: int) -> tuple[int, int] | None:
    """The password part of a flag's value (after ``pass:``, after ``user%``), or None."""
    value, start, end = _unquote(value, start)
    if tool.prefix:
        if not value.startswith(tool.prefix):
            return None
        start += len(tool.prefix)
        value = value[len(tool.prefix) :]
        value, start, end = _unquote(value, start)
    if tool.split:
        if tool.split not in value:
            return None
        cut = value.index(tool.split) + 1
        start += cut
        value = value[cut:]
    return (start, end) if _accept(value) else None


def _flag_value(tool: _Tool, tokens: Sequence[tuple[str, int]], i: int) -> tuple[int, int, int] | None:
    """The password ``tool`` reads from token ``i`` (``-P x``, ``--pass=x``, ``-px``), as (token, start, end)."""
    token, at = tokens[i]
    bare = token.strip("'\"")
    if bare in tool.separate and i + 1 < len(tokens):
        value, start = tokens[i + 1]
        if value in _SEPARATORS or (value.startswith("-") and len(value) <= 3):
            return None
        span = _value_span(tool, value, start, start + len(value))
        return (i + 1, *span) if span else None
    flag = next((f for f in tool.separate if f.startswith("--") and bare.startswith(f + "=")), None)
    if flag is not None:
        offset = token.index(flag) + len(flag) + 1
        span = _value_span(tool, token[offset:], at + offset, at + len(token))
        return (i, *span) if span else None
    prefix = next((p for p in tool.attached if token.startswith(p) and len(token) > len(p)), None)
    if prefix is not None:
        span = _value_span(tool, token[len(prefix) :], at + len(prefix), at + len(token))
        return (i, *span) if span else None
    return None


def _walk(tokens: Sequence[tuple[str, int]]) -> Iterator[tuple[int, int, int]]:
    """(token index, start, end) of every password among ``tokens`` ((text, offset) pairs)."""
    tools: list[_Tool] = []
    words: list[str] = []  # the words of the current command before its first option
    optioned = False
    i = 0
    while i < len(tokens):
        token = tokens[i][0]
        bare = token.strip("'\"")
        base = _base(token)
        if token in _SEPARATORS:
            tools, words, optioned = [], [], False
        elif not bare.startswith("-") and words[:1] != ["az"] and (base in _BY_NAME or base == "az"):
            tools, words, optioned = [t for t in _TOOLS if base in t.names], [base], False
        elif words and not optioned and not bare.startswith("-"):
            words.append(bare)
        else:
            optioned = optioned or bare.startswith("-")
        active = [t for t in tools if not t.after or t.after in words]
        if words[:1] == ["az"] and bare == "-p" and _AZ_PASSWORD_GROUPS & set(words):
            active = [_AZ]
        elif words[:1] == ["az"] and bare.split("=")[0] == "--value" and _AZ_VALUE_GROUPS & set(words):
            active = [_AZ_VALUE]
        for tool in active:
            found = _flag_value(tool, tokens, i)
            if found is not None:
                yield found
                i = found[0]
                break
        i += 1


def flag_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """Spans of passwords given to tools on command lines anywhere in ``text``.

    Only lines that hold an option (`` -x``, ``--x``, ``/p:``) or a special form (``net use``, ``| chpasswd``)
    are read; most output has none, and this keeps the cost off large texts.
    """
    for line_start, line in _candidate_lines(text, hay):
        tokens = [(m.group(), line_start + m.start()) for m in _TOKEN.finditer(line)]
        for _, start, end in _walk(tokens):
            yield start, end
        if '"' in line:  # a command line inside a JSON or shell string: "command": "sqlcmd -P x"
            for string in _STRING.finditer(line):
                body = string.group(1)
                if " " in body and any(n in body.lower() for n in _NEEDLES):
                    decoded, offsets = decode_json_string(body, line_start + string.start(1))
                    inner = [(m.group(), m.start()) for m in _TOKEN.finditer(decoded)]
                    for _, start, end in _walk(inner):
                        yield offsets[start], offsets[end]
        for pattern in _SPECIAL:
            for match in pattern.finditer(line):
                value, start, end = _unquote(match.group("v"), line_start + match.start("v"))
                if _accept(value):
                    yield start, end


def _candidate_lines(text: str, hay: Haystack) -> Iterator[tuple[int, str]]:
    """(offset, line) of each line with an option-like token or a special password form."""
    starts: set[int] = set()
    for literal in (" -", "\t-", "'-", '"-'):
        at = text.find(literal)
        while at != -1:
            after = text[at + len(literal) : at + len(literal) + 1]
            if after.isalpha() or after == "-":
                starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(literal, at + 1)
    for needle in _SPECIAL_NEEDLES:
        if hay.has(needle):
            at = hay.text.find(needle)
            while at != -1:
                starts.add(text.rfind("\n", 0, at) + 1)
                at = hay.text.find(needle, at + 1)
    for start in sorted(starts):
        end = text.find("\n", start)
        yield start, text[start : end if end != -1 else len(text)]


def argv_spans(argv: Sequence[str]) -> Iterator[tuple[int, int, int]]:
    """(element index, start, end) of every password in an argv, by the same table."""
    tokens = [(arg if arg not in _SEPARATORS else f" {arg}", 0) for arg in argv]
    yield from _walk(tokens)
    line = shlex.join(argv)
    for pattern in _SPECIAL:
        for match in pattern.finditer(line):
            value = match.group("v").strip("'\"")
            if not _accept(value):
                continue
            for index, arg in enumerate(argv):
                at = arg.find(value)
                if at != -1 and (arg == value or arg.endswith(value) or arg.startswith(value)):
                    yield index, at, at + len(value)
                    break


_PROPERTY = re.compile(r"-D(?P<name>[A-Za-z_][\w.-]*)=(?P<v>'[^'\r\n]*'|\"[^\"\r\n]*\"|[^\s'\"]+)")


def property_spans(text: str, hay: Haystack) -> Iterator[tuple[int, int]]:
    """Java system properties on a command line: ``-Djavax.net.ssl.keyStorePassword=secret``."""
    if "-D" not in text:
        return
    for match in _PROPERTY.finditer(text):
        if match.start() > 0 and text[match.start() - 1] not in " \t\"'\n":
            continue
        value, start, end = _unquote(match.group("v"), match.start("v"))
        if _label_kind(match.group("name").rsplit(".", 1)[-1], value, secret_cmd=False):
            yield start, end
