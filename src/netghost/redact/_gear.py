"""Span rules for router, firewall and VPN configurations: where a device keeps its secrets.

Each rule follows the vendor's own configuration grammar, so the value is found by its *place* (the token
after ``enable secret 5``, after ``snmp-server community``, after ``set psksecret``) rather than by its
look, and short or word-like passwords go too. Sources: Cisco IOS/IOS-XE/NX-OS/IOS-XR/ASA command
references (``username``, ``enable``, ``snmp-server``, ``tacacs server``, ``crypto isakmp key``,
``key chain``), Junos ``show configuration`` (``$9$`` values, ``## SECRET-DATA`` markers), FortiOS
``show full-configuration`` (``set ... ENC``), PAN-OS (``-AQ==`` encrypted values, ``phash``),
strongSwan ``ipsec.secrets(5)`` and libreswan, Huawei VRP (``cipher``), net-snmp ``snmpd.conf(5)``.
"""

from __future__ import annotations

import re

from netghost.redact._span_rule import SpanRule, val

__all__ = ["GEAR_RULES"]

V = val()
V2 = val("v2")
_TYPES = r"(?:0|4|5|6|7|8|9|10)"
_NOT_VALUES = frozenset(
    {"encrypted", "nopassword", "address", "hostname", "local", "remote", "version", "informs", "traps",
     "community", "md5", "sha", "text", "key-chain", "key-string", "cipher", "simple", "key", "vrf", "view",
     "ro", "rw", "auth", "priv", "level", "0", "4", "5", "6", "7", "8", "9", "10"}
)  # fmt: skip


def _value_ok(match: re.Match[str]) -> bool:
    value = match.group("v")
    return value.lower() not in _NOT_VALUES


def _typed(match: re.Match[str]) -> bool:
    """A type-7 value is hex; the other types hold a hash or a clear-text word."""
    if match.group("t") == "7" and re.fullmatch(r"[0-9A-Fa-f]{4,}", match.group("v")) is None:
        return False
    return _value_ok(match)


def _not_number(match: re.Match[str]) -> bool:
    return not match.group("v").isdigit() and _value_ok(match)


def _not_address(match: re.Match[str]) -> bool:
    value = match.group("v")
    return re.fullmatch(r"[\d.:/]+|[0-9a-fA-F:]+:[0-9a-fA-F:]*", value) is None and _value_ok(match)


def _community(match: re.Match[str]) -> bool:
    """``community: 65001:100`` is a BGP community (public), not an SNMP one."""
    value = match.group("v")
    if re.fullmatch(r"\d+:\d+|no-export|no-advertise|internet|local-as", value, re.IGNORECASE):
        return False
    return _value_ok(match)


def _parent(text: str, pos: int) -> str:
    """The first line above ``pos`` that is not indented: the Cisco mode a sub-command belongs to."""
    at = text.rfind("\n", 0, pos)
    while at > 0:
        start = text.rfind("\n", 0, at) + 1
        line = text[start:at]
        if line and not line[0].isspace():
            return line
        at = start - 1
    return ""


def _in_aaa_server(match: re.Match[str]) -> bool:
    head = _parent(match.string, match.start())
    return re.match(r"(?i)(?:tacacs|radius)[ -]server\b|aaa-server\b|aaa group server\b", head) is not None


def _block(text: str, pos: int) -> str:
    """The name of the innermost unclosed ``name {`` block before ``pos`` (Junos brace form)."""
    depth = 0
    for at in range(pos - 1, max(-1, pos - 20_000), -1):
        ch = text[at]
        if ch == "}":
            depth += 1
        elif ch == "{":
            if depth == 0:
                start = text.rfind("\n", 0, at) + 1
                return text[start:at].strip()
            depth -= 1
    return ""


def _in_snmp_block(match: re.Match[str]) -> bool:
    text, pos = match.string, match.start()
    return _block(text, pos) == "snmp" or _block(text, text.rfind("\n", 0, pos)).startswith("snmp")


def _forti_section(match: re.Match[str]) -> bool:
    """FortiOS ``set name "x"`` is a secret only under ``config system snmp community``."""
    text = match.string
    at = text.rfind("config ", 0, match.start())
    return at != -1 and text.startswith("config system snmp community", at)


_FORTI_SECRET = re.compile(
    r"(?i)(?:password|passwd|secret|psksecret|psk|key|auth-pwd|priv-pwd|[\w-]*-password|[\w-]*-passwd|"
    r"[\w-]*-pwd|[\w-]*-secret|[\w-]*-psk|[\w-]*-psksecret)"
)


def _forti_set(match: re.Match[str]) -> bool:
    return _FORTI_SECRET.fullmatch(match.group("name")) is not None and _value_ok(match)


def _r(regex: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(regex, flags)


GEAR_RULES: tuple[SpanRule, ...] = (
    # --- Cisco and Cisco-like: passwords, secrets and keys with an encryption type ---------------------
    SpanRule(
        "device_password",
        _r(
            r"(?i)(?<![\w-])(?:password|secret|key-string|key|authentication-key|passwd|md5|area-password|"
            r"domain-password)[ \t]+(?P<t>" + _TYPES + r")[ \t]+" + V
        ),
        "Cisco 'password|secret|key ... TYPE VALUE': type 0 clear, 7 reversible, 5/8/9 crackable hashes, 6 AES",
        ("password", "secret", "key", "passwd", "md5"),
        check=_typed,
    ),
    SpanRule(
        "device_password",
        _r(r"(?im)^[ \t]*enable[ \t]+(?:secret|password)(?:[ \t]+level[ \t]+\d+)?(?:[ \t]+[045789])?[ \t]+" + V),
        "'enable secret|password [level N] [TYPE] VALUE' (IOS) and 'enable password X encrypted' (ASA)",
        ("enable",),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(
            r"(?im)^[ \t]*username[ \t]+\S+(?:[ \t]+(?!(?:password|secret)\b)\S+)*?[ \t]+(?:password|secret)"
            r"(?:[ \t]+" + _TYPES + r")?(?:[ \t]+(?:sha512|sha256|md5|scrypt|pbkdf2))?[ \t]+" + V
        ),
        "'username NAME [privilege N|algorithm-type X|role R ...] password|secret [TYPE] VALUE' (IOS, NX-OS, ASA)",
        ("username",),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(r"(?m)^[ \t]*(?:password|passwd)(?:[ \t]+[05789])?[ \t]+(?P<v>\S+)(?:[ \t]+encrypted)?[ \t]*\r?$"),
        "a line-mode 'password VALUE' (line vty/con) and the ASA 'passwd VALUE encrypted'",
        ("password", "passwd"),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(
            r"(?i)\b(?:neighbor[ \t]+\S+|vtp|ppp[ \t]+chap|pap[ \t]+sent-username[ \t]+\S+|isis|area|domain)"
            r"[ \t]+password(?:[ \t]+[07])?[ \t]+" + V
        ),
        "BGP neighbor, VTP, PPP CHAP/PAP and IS-IS passwords",
        ("neighbor", "vtp", "chap", "pap", "isis", "password"),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\b(?:area|domain)-password(?:[ \t]+[07])?[ \t]+" + V),
        "IS-IS area and domain passwords",
        ("area-password", "domain-password"),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(
            r"(?i)\b(?:password|pre-shared-key|key|authentication-key|local-user[ \t]+\S+[ \t]+password)[ \t]+"
            r"(?:cipher|irreversible-cipher|simple|hash)[ \t]+(?P<v>\S+)"
        ),
        "Huawei VRP and H3C Comware 'password|pre-shared-key cipher|irreversible-cipher|simple|hash VALUE'",
        ("cipher", "simple", "hash"),
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\bwpa-psk[ \t]+(?:ascii|hex)(?:[ \t]+[07])?[ \t]+" + V),
        "Cisco wireless 'wpa-psk ascii|hex [TYPE] VALUE'",
        ("wpa-psk",),
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\b(?:standby|vrrp)[ \t]+\d+[ \t]+authentication[ \t]+(?:text[ \t]+)?(?P<v>\S+)"),
        "HSRP/VRRP clear-text authentication strings ('md5 key-string' is the key-string rule)",
        ("standby", "vrrp"),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\bkey-string(?:[ \t]+[07])?[ \t]+" + V),
        "key chain 'key-string [TYPE] VALUE' (OSPF, EIGRP, RIP, HSRP md5)",
        ("key-string",),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\bmessage-digest-key[ \t]+\d+[ \t]+md5(?:[ \t]+[07])?[ \t]+" + V),
        "OSPF 'message-digest-key N md5 [TYPE] VALUE'",
        ("message-digest-key",),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\bauthentication-key(?:[ \t]+[07])?[ \t]+" + V),
        "OSPF/BGP/Junos 'authentication-key [TYPE] VALUE'",
        ("authentication-key",),
        check=_not_number,
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\bkey[ \t]+config-key[ \t]+password-encrypt(?:[ \t]+" + V + ")?"),
        "IOS 'key config-key password-encrypt MASTERKEY': the key that type-6 passwords are encrypted with",
        ("config-key",),
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\bntp[ \t]+authentication-key[ \t]+\d+[ \t]+md5[ \t]+(?P<v>\S+)"),
        "'ntp authentication-key N md5 VALUE [TYPE]'",
        ("ntp",),
    ),
    # --- SNMP ---------------------------------------------------------------------------------------
    SpanRule(
        "snmp_community",
        _r(r"(?i)\bsnmp-server[ \t]+community[ \t]+" + V),
        "'snmp-server community VALUE [ro|rw] [acl]' (IOS, NX-OS, ASA, Arista)",
        ("snmp-server",),
        check=_value_ok,
    ),
    SpanRule(
        "snmp_community",
        _r(
            r"(?i)\bsnmp-server[ \t]+host[ \t]+\S+(?:[ \t]+(?:informs|traps))?(?:[ \t]+version[ \t]+(?:1|2c))?"
            r"[ \t]+" + V
        ),
        "'snmp-server host ADDR [informs|traps] [version 1|2c] COMMUNITY'",
        ("snmp-server",),
        check=_not_address,
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?i)\bsnmp-server[ \t]+host\b[^\r\n]*?[ \t]community[ \t]+" + V),
        "ASA 'snmp-server host IF ADDR community VALUE'",
        ("snmp-server",),
        check=_value_ok,
    ),
    SpanRule(
        "snmp_community",
        _r(
            r"(?i)\bsnmp-server[ \t]+user[ \t]+\S+[ \t]+\S+(?:[ \t]+remote[ \t]+\S+)?(?:[ \t]+v3)?"
            r"(?:[ \t]+encrypted)?[ \t]+auth[ \t]+\S+[ \t]+" + V + r"(?:[ \t]+priv[ \t]+"
            r"(?:(?:des|3des|aes|aes-128|aes-192|aes-256)(?:[ \t]+(?:128|192|256))?[ \t]+)?" + V2 + ")?"
        ),
        "SNMPv3 'snmp-server user U G [v3] auth ALG AUTHPASS [priv [ALG] PRIVPASS]' (IOS, NX-OS)",
        ("snmp-server",),
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?i)\bset[ \t]+snmp[ \t]+community[ \t]+" + V),
        "Junos 'set snmp community VALUE'",
        ("snmp",),
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?m)^[ \t]*community[ \t]+(?P<vq>\")?(?P<v>[^\s{;\"]+)\"?[ \t]*\{"),
        "Junos brace form 'community VALUE {' inside 'snmp {'",
        ("community",),
        check=_in_snmp_block,
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?m)^[ \t]*set[ \t]+name[ \t]+" + V),
        "FortiOS 'config system snmp community' / 'set name VALUE'",
        ("snmp community",),
        line=False,
        check=_forti_section,
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?m)^[ \t]*(?:rocommunity6?|rwcommunity6?|trapcommunity)[ \t]+" + V),
        "net-snmp snmpd.conf 'rocommunity|rwcommunity|trapcommunity VALUE'",
        ("community",),
        check=_value_ok,
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?m)^[ \t]*com2sec6?[ \t]+(?:-Cn[ \t]+\S+[ \t]+)?\S+[ \t]+\S+[ \t]+" + V),
        "net-snmp 'com2sec NAME SOURCE COMMUNITY'",
        ("com2sec",),
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?m)^[ \t]*(?:trap2sink|trapsink|informsink)[ \t]+\S+[ \t]+" + V),
        "net-snmp 'trap2sink HOST COMMUNITY'",
        ("sink",),
    ),
    SpanRule(
        "snmp_community",
        _r(r"(?m)^[ \t]*createUser[ \t]+\S+[ \t]+(?:MD5|SHA\S*)[ \t]+" + V + r"(?:[ \t]+(?:DES|AES\S*)[ \t]+" + V2 + ")?"),
        "net-snmp 'createUser USER SHA AUTHPASS AES PRIVPASS'",
        ("createuser",),
    ),
    # --- AAA servers --------------------------------------------------------------------------------
    SpanRule(
        "aaa_key",
        _r(r"(?i)\b(?:tacacs-server|radius-server|server-private)\b[^\r\n]*?[ \t]key(?:[ \t]+[067])?[ \t]+" + V),
        "TACACS+/RADIUS shared keys: 'tacacs-server [host X] key [TYPE] VALUE', 'server-private X key VALUE'",
        ("tacacs-server", "radius-server", "server-private"),
        check=_value_ok,
    ),
    SpanRule(
        "aaa_key",
        _r(r"(?m)^[ \t]+(?:pac[ \t]+)?key(?:[ \t]+[067])?[ \t]+" + V + r"[ \t]*\r?$"),
        "' key [TYPE] VALUE' under 'tacacs server X', 'radius server X' or 'aaa-server X host Y'",
        ("key",),
        check=_in_aaa_server,
    ),
    SpanRule(
        "aaa_key",
        _r(r"(?i)\b(?:radius-server|tacplus-server)[ \t]+\S+[^\r\n]*?[ \t]secret[ \t]+" + V),
        "Junos 'set system radius-server|tacplus-server ADDR secret VALUE'",
        ("radius-server", "tacplus-server"),
    ),
    # --- IPsec pre-shared keys ------------------------------------------------------------------------
    SpanRule(
        "preshared_key",
        _r(
            r"(?i)(?:\bpre-shared-key|\bpre-shared-secret|\bshared-secret|\bisakmp[ \t]+key)(?:[ \t]+(?:local|remote))?"
            r"(?:[ \t]+(?:address[ \t]+\S+(?:[ \t]+\d{1,3}(?:\.\d{1,3}){3})?|hostname[ \t]+\S+)[ \t]+key)?"
            r"(?:[ \t]+(?:[067]|ascii-text|hexadecimal|key))?[ \t]+" + V
        ),
        "IKE pre-shared keys: Cisco 'pre-shared-key [local|remote] [0|6|7] KEY', keyring 'pre-shared-key "
        "address IP key KEY', 'crypto isakmp key KEY address IP', Juniper 'pre-shared-key ascii-text \"KEY\"', "
        "PAN-OS 'pre-shared-key key KEY'; 'authentication pre-shared-key' lines carry no key",
        ("pre-shared-key", "pre-shared-secret", "shared-secret", "isakmp"),
        check=_value_ok,
    ),
    SpanRule(
        "preshared_key",
        _r(r"(?m)^(?:[^\r\n#]*?[ \t])?:[ \t]*(?:PSK|XAUTH|EAP|NTLM)[ \t]+" + V),
        "strongSwan/libreswan ipsec.secrets 'SELECTORS : PSK|XAUTH|EAP \"SECRET\"' (RSA/ECDSA lines name files)",
        ("psk", "xauth", "eap", "ntlm"),
    ),
    SpanRule(
        "preshared_key",
        _r(r"(?<![\w+/=-])(?P<v>-AQ==[A-Za-z0-9+/=]{8,})"),
        "PAN-OS encrypted values ('-AQ==...': pre-shared keys, secrets, passwords)",
        ("-aq==",),
    ),
    SpanRule(
        "password_hash",
        _r(r"(?i)(?:\bphash[ \t]+|<phash>)(?P<v>[^\s<\"']+)"),
        "PAN-OS administrator password hashes ('phash', <phash>)",
        ("phash",),
    ),
    # --- Junos --------------------------------------------------------------------------------------
    SpanRule(
        "device_password",
        _r(r"(?<![\w$])(?P<v>\$9\$[A-Za-z0-9./$-]{4,})"),
        "Junos '$9$' reversible secrets (and Cisco type 9 scrypt hashes)",
        ("$9$",),
    ),
    SpanRule(
        "device_password",
        _r(
            r"(?i)\b(?:encrypted-password|plain-text-password-value|plaintext-password|authentication-password|privacy-password|"
            r"simple-password|hello-authentication-key)[ \t]+" + V
        ),
        "Junos password statements",
        ("password", "authentication-key"),
        check=_value_ok,
    ),
    SpanRule(
        "device_password",
        _r(r"(?i)\bsecret[ \t]+\"(?P<v>[^\"\r\n]+)\""),
        "Junos 'secret \"VALUE\"' (RADIUS, TACACS+, BGP, VRRP)",
        ("secret",),
    ),
    SpanRule(
        "device_password",
        _r(r"\"(?P<v>[^\"\r\n]+)\"[ \t]*;?[ \t]*##[ \t]*SECRET-DATA"),
        "Junos marks every secret value with '## SECRET-DATA'",
        ("secret-data",),
    ),
    # --- FortiOS ------------------------------------------------------------------------------------
    SpanRule(
        "device_password",
        _r(r"(?<![\w-])ENC[ \t]+(?P<v>[A-Za-z0-9+/=]{8,})"),
        "FortiOS 'set password|passwd|psksecret|secret|key ENC VALUE': reversibly encrypted with a known key",
        ("enc ", "enc\t"),
    ),
    SpanRule(
        "device_password",
        _r(r"(?m)^[ \t]*set[ \t]+(?P<name>[\w-]+)[ \t]+(?!ENC\b)" + V + r"[ \t]*\r?$"),
        "FortiOS clear-text 'set password|passwd|psksecret|secret|*-password VALUE'",
        ("set ",),
        check=_forti_set,
    ),
)
