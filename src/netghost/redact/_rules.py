"""The redactor's rule tables: which text is a secret, and why we think so.

Rules are data so that each one carries its justification and can be tested on its own. Two families:

* **Shape rules** recognise a secret by what it looks like on its own (a JWT, a PEM block, an 88-character
  base64 storage key, ``ghp_...``). Their regexes follow gitleaks ``cmd/generate/config/rules/*.go`` and
  detect-secrets ``plugins/*.py``; the value to remove is the named group ``v`` (or the whole match).
* **Label rules** recognise a secret by the name in front of it (``Password=``, ``"primaryKey":``,
  ``Authorization: Bearer``, ``sig=``). A bare password like ``Winter24?maple8`` has no shape; only its label
  (or the command that printed it) gives it away.

Every rule only *finds* values; :mod:`netghost.redact` decides how to replace them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from netghost.redact._credentials import unconditional_names

__all__ = [
    "B64_RUN",
    "HASH_CONTEXT",
    "JSON_FIELD_RULES",
    "JSON_SECRET_KEY",
    "KEY_EXCLUDED_SUFFIX",
    "LINE_ASSIGNMENT",
    "PLACEHOLDER",
    "PROSE_RULES",
    "SECRET_COMMAND_WORDS",
    "SECRET_SETTING_NAME",
    "SHAPE_RULES",
    "STRONG_KEY_NAME",
    "UNCONDITIONAL_KEY_NAME",
    "WEAK_KEY_NAME",
    "XML_ELEMENT",
    "FieldRule",
    "Rule",
]


@dataclass(frozen=True)
class Rule:
    """One pattern, the kind it reports and why it exists.

    ``pattern`` must define a named group ``v`` holding the secret (the text that gets replaced);
    ``check`` names an extra test in :mod:`netghost.redact` (``entropy``, ``not_hash``,
    ``private_pem``) that rejects look-alikes the regex alone would take.
    """

    kind: str
    pattern: re.Pattern[str]
    why: str
    check: str | None = None
    needles: tuple[str, ...] = ()
    """Lower-case substrings of which at least one must occur for the rule to match at all (a cheap
    pre-filter); ``B64_RUN`` stands for "a base64 run of 38+ characters". Empty means always run."""
    gate: re.Pattern[str] | None = None
    """A cheap pattern (starting with a literal) that must occur in the view first, for rules whose own
    pattern is anchored at line starts and so cannot skip ahead quickly."""


B64_RUN = "<base64-run>"


def _r(regex: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(regex, flags)


# What an earlier redaction (ours or someone else's) left behind: never a secret, never touched again.
PLACEHOLDER = _r(
    r"^(?:\[REDACTED(?::[A-Za-z0-9_]+)?\]|<redacted>|\*{3,}|x{6,}|X{6,}|\.{3,}|null|none|true|false|"
    r"<[A-Za-z0-9_ -]{1,40}>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{[^}]*\}\}|\{[A-Za-z_][A-Za-z0-9_ -]{0,40}\}|"
    r"%\([a-z_]+\)s|"
    r"(?:your|example|sample|dummy|fake|placeholder|changeme|insert)[-_a-z0-9]*|"
    r"\((?:sensitive|known|hidden|redacted|masked|none|encrypted)[\w ]*\)?|"
    r"(?-i:(?:[A-Z0-9]+_)*(?:KEY|SECRET|PASSWORD|PASSWD|TOKEN|PWD|HERE|VALUE)(?:_[A-Z0-9]+)*))$",
    re.IGNORECASE,
)

_B64 = r"A-Za-z0-9+/"
_NB = r"(?<![A-Za-z0-9+/_-])"  # not preceded by a base64/url-safe character
_NA = r"(?![A-Za-z0-9+/=_-])"  # not followed by one

SHAPE_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        _r(
            r"(?P<v>-----BEGIN (?P<label>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
            r"(?:[A-Za-z0-9+/=\s:,.\-]|\\[nr])*?(?:-----END (?P=label)-----|(?=[^A-Za-z0-9+/=\s:,.\-\\])|\Z))"
        ),
        "PEM private keys (RSA, EC, OPENSSH, PKCS#8, encrypted, PGP); a truncated block is removed to its end",
        needles=("-----begin",),
    ),
    Rule(
        "private_key",
        _r(r"(?P<v>LS0tLS1CRUdJT[A-Za-z0-9+/]{8,}={0,2})"),
        "a PEM block wrapped in base64 (kubeconfig client-key-data, Key Vault exports); decoded to check "
        "that it holds a PRIVATE KEY, not a certificate",
        check="private_pem",
        needles=("ls0tls1crudjt",),
    ),
    Rule(
        "jwt",
        _r(r"(?P<v>\bey[A-Za-z0-9_-]{15,}\.ey[A-Za-z0-9_-]{15,}\.[A-Za-z0-9_\-+/]*={0,2})"),
        "JSON Web Tokens (gitleaks jwt.go): Azure access tokens, IMDS tokens, id tokens",
        needles=(".ey",),
    ),
    Rule(
        "client_secret",
        _r(
            r"(?:^|(?<=[\\'\"`\s>=:(,)]))(?P<v>[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])"
        ),
        "Entra ID client secrets, 'xxx8Q~...' (gitleaks azure.go azure-ad-client-secret)",
        check="entropy",
        needles=("q~",),
    ),
    Rule(
        "aws_access_key",
        _r(r"\b(?P<v>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b"),
        "AWS access key ids (gitleaks aws.go)",
        needles=("a3t", "akia", "asia", "abia", "acca"),
    ),
    Rule(
        "github_token",
        _r(r"\b(?P<v>(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b"),
        "GitHub classic and fine-grained tokens (gitleaks github.go)",
        needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule(
        "gitlab_token",
        _r(r"\b(?P<v>gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,})"),
        "GitLab tokens",
        needles=("gl",),
    ),
    Rule(
        "slack_token",
        _r(r"\b(?P<v>xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})"),
        "Slack bot/user/app tokens",
        needles=("xox", "xapp-"),
    ),
    Rule(
        "slack_webhook",
        _r(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9+/_-]{20,})"),
        "Slack incoming webhooks: the path is the credential",
        needles=("hooks.slack.com",),
    ),
    Rule(
        "google_api_key",
        _r(r"\b(?P<v>AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])"),
        "Google/Gemini API keys",
        needles=("aiza",),
    ),
    Rule("stripe_key", _r(r"\b(?P<v>[sr]k_live_[0-9A-Za-z]{20,})"), "Stripe live keys", needles=("k_live_",)),
    Rule("npm_token", _r(r"\b(?P<v>npm_[A-Za-z0-9]{36})\b"), "npm access tokens", needles=("npm_",)),
    Rule(
        "api_token",
        _r(
            r"\b(?P<v>SG\.[\w-]{22}\.[\w-]{43}|dapi[0-9a-f]{32}(?:-\d)?|hv[sbr]\.[A-Za-z0-9_-]{24,}|"
            r"sk-(?:proj-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_-]{32,}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|"
            r"pypi-AgE[A-Za-z0-9_-]{50,}|dop_v1_[a-f0-9]{64})(?![A-Za-z0-9_-])"
        ),
        "vendor tokens with fixed prefixes (SendGrid, Databricks, Vault, OpenAI/Anthropic, Shopify, PyPI, "
        "DigitalOcean; gitleaks rules)",
        needles=("sg.", "dapi", "hvs.", "hvb.", "hvr.", "sk-", "shp", "pypi-", "dop_v1_"),
    ),
    Rule(
        "google_oauth_token",
        _r(r"\b(?P<v>ya29\.[0-9A-Za-z_-]{20,})"),
        "Google OAuth 2.0 access tokens ('ya29.' prefix; gitleaks gcp-api-key/ detect-secrets)",
        needles=("ya29.",),
    ),
    Rule(
        "docker_token",
        _r(r"\b(?P<v>dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,})"),
        "Docker Hub personal/organisation access tokens (gitleaks docker.go)",
        needles=("dckr_",),
    ),
    Rule(
        "aws_secret_key",
        _r(
            r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}[\t\r\n ,;:|\"']{1,6}"
            r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        "the 40-character AWS secret key printed right after its access key id (tsv/csv credential dumps)",
        needles=("a3t", "akia", "asia", "abia", "acca"),
    ),
    Rule(
        "azure_devops_pat",
        _r(r"(?<![A-Za-z0-9_.-])(?P<v>[a-z2-7]{52})(?![A-Za-z0-9_.-])"),
        "Azure DevOps personal access tokens: 52 characters of lower-case base32",
        check="ado_pat",
        needles=(),
    ),
    Rule(
        "acr_password",
        _r(_NB + r"(?P<v>[A-Za-z0-9+/]{42}\+ACR[A-Za-z0-9+/]{6})" + _NA),
        "Azure Container Registry admin passwords carry a '+ACR' marker at a fixed offset",
        needles=("+acr",),
    ),
    Rule(
        "azure_key",
        _r(
            _NB + r"(?P<v>[A-Za-z0-9+/_-]{30,}(?:\+ASb|\+AEh|\+ARm|\+AStA|ACDb|AzFu|AzSe|AZEG|APIM|AzCa|AIoT)"
            r"[A-Za-z0-9+/_-]{3,}={0,2}|[A-Za-z0-9]{52}JQQJ9[A-Za-z0-9]{27})" + _NA
        ),
        "Microsoft 'identifiable' keys carry a service signature at a fixed place (+ASb Service Bus, +AEh "
        "Event Hubs, +AStA Storage, ACDb Cosmos, AzFu Functions, AzSe Search, JQQJ9...ACOG Cognitive)",
        needles=(
            "+asb",
            "+aeh",
            "+arm",
            "+asta",
            "acdb",
            "azfu",
            "azse",
            "azeg",
            "apim",
            "azca",
            "aiot",
            "jqqj9",
        ),
    ),
    Rule(
        "private_key",
        _r(
            r"(?P<v>-----BEGIN (?P<label>OpenVPN [A-Za-z0-9 -]{1,40}?)-----"
            r"(?:[A-Za-z0-9+/=\s]|\\[nr])*?(?:-----END (?P=label)-----|(?=[^A-Za-z0-9+/=\s\\])|\Z))",
            re.IGNORECASE,
        ),
        "OpenVPN static keys (tls-auth, secret, tls-crypt: hex lines) and tls-crypt-v2 keys (base64)",
        needles=("-----begin openvpn",),
    ),
    Rule(
        "password",
        _r(
            r"(?m)(?:m(?<![^\s\"'`]m)achine[ \t\r\n]+\S+|d(?<![^\s\"'`]d)efault)"
            r"(?:[ \t\r\n]+(?:login|account|port)[ \t\r\n]+\S+)*[ \t\r\n]+password[ \t\r\n]+"
            r"(?P<q>[\"']?)(?P<v>(?(q)[^\"'\r\n]+|[^\s\"']+))"
        ),
        ".netrc entries: 'machine HOST login USER password SECRET' on one or several lines, and the "
        "'default' entry; macdef bodies are not entries",
        needles=("machine", "default"),
        gate=_r(r"password[ \t\r\n]+\S"),
    ),
    Rule(
        "password",
        _r(
            r"(?m)^[ \t]*(?:[A-Za-z0-9_.\-\[\]]+|\*):(?:\d{1,5}|\*):(?:[^:\s\\]|\\.)+:(?:[^:\s\\]|\\.)+:"
            r"(?P<v>(?:[^\s\\:]|\\.)+?)[ \t]*\r?$"
        ),
        ".pgpass lines 'host:port:database:user:password' (port digits or '*'; ':' and '\\' escaped)",
        needles=(":",),
        gate=_r(r":(?:\d{1,5}|\*):(?:[^:\s\\]|\\.)+:(?:[^:\s\\]|\\.)+:"),
    ),
    Rule(
        "private_key",
        _r(r"(?s)(?P<v>PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:\s*[0-9a-fA-F]+|\Z))"),
        "PuTTY private key files (.ppk)",
        needles=("putty-user-key-file",),
    ),
    Rule(
        "azure_storage_key",
        _r(_NB + r"(?P<v>[" + _B64 + r"]{86}==)" + _NA),
        "88-character base64 keys: storage, Cosmos DB, Batch, Communication (detect-secrets azure_storage_key)",
        needles=(B64_RUN,),
    ),
    Rule(
        "azure_key",
        _r(_NB + r"(?P<v>[" + _B64 + r"]{38,84}={1,2})" + _NA),
        "padded base64 keys of 40+ characters (Service Bus/Event Hubs/Redis/Event Grid SAS keys, function "
        "keys); skipped when a hash or digest label precedes them",
        check="not_hash",
        needles=(B64_RUN,),
    ),
    Rule(
        "azure_key",
        _r(_NB + r"(?P<v>[A-Za-z0-9_-]*[_-][A-Za-z0-9_-]*={1,2})" + _NA),
        "padded URL-safe base64 keys (Azure Functions function/host keys, 56 characters ending '==')",
        check="urlsafe_key",
        needles=("=",),
    ),
    Rule(
        "base64_blob",
        _r(_NB + r"(?P<v>[" + _B64 + r"]{200,}={0,2})" + _NA),
        "long base64 runs (PFX/PKCS#12 bundles, encrypted blobs); SSH public-key blobs (AAAA...) are kept",
        check="not_public_key",
        needles=(B64_RUN,),
    ),
    Rule(
        "sas_signature",
        _r(r"(?i)(?:[?&;]|&amp;|\\u0026|\b)sig=(?P<v>[^&\s\"'<>\\;,]+)"),
        "the sig= of a shared access signature is the credential; the rest of the URL is kept",
        needles=("sig=",),
    ),
    Rule(
        "function_key",
        _r(r"(?i)[?&]code=(?P<v>[^&\s\"'<>\\]{16,})"),
        "Azure Functions keys travel as ?code= in invoke URLs",
        needles=("code=",),
    ),
    Rule(
        "basic_auth",
        _r(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^/\s:@\"'<>]{0,128}:(?P<v>[^@\s/\"'<>]{1,256})@[\w.\[\]-]"),
        "credentials embedded in URLs (https://user:pass@host, postgresql://, redis://, ...)",
        needles=("://",),
    ),
    Rule(
        "authorization",
        _r(
            r"(?im)\b(?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|sharedkey|sharedkeylite|"
            r"sharedaccesssignature|token|digest|negotiate|ntlm|hmac-sha256|aws4-hmac-sha256)\s+)?"
            r"(?P<v>[^\s\"'\\,;]+)"
        ),
        "HTTP Authorization headers (curl -v, Azure REST traces, x-ms-copy-source-authorization)",
        needles=("authorization",),
    ),
    Rule(
        "bearer_token",
        _r(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)"),
        "bearer tokens outside a header (logs, error messages); a WWW-Authenticate challenge's parameter name "
        "('Bearer authorization_uri=\"...\"') is not one",
        check="not_parameter",
        needles=("bearer",),
    ),
    Rule(
        "encryption_key",
        _r(r"(?im)\bx-ms-encryption-key\s*:\s*(?P<v>[^\s\"'\\]+)"),
        "customer-provided encryption keys (not x-ms-encryption-key-sha256, which is a hash)",
        needles=("x-ms-encryption-key",),
    ),
    Rule(
        "cookie",
        _r(r"(?im)\b(?:set-)?cookie\s*:\s*[^=;\s]+=(?P<v>[^;\s\"'\\]{8,})"),
        "session cookies in Set-Cookie/Cookie headers",
        needles=("cookie",),
    ),
)

# A secret told in a sentence: "the cache password is Tr0ub4dor&3", "the API key for prod was 'x9...'",
# "password for admin: hunter22". Label rules need name=value; people write prose. The value must not
# read as a word ("the password is incorrect"), which the ``prose_secret`` check decides.
_PROSE_FOR = r"[ \t]+(?:for|of|on|to|in)(?:[ \t]+[\w.@:/-]{1,64}){1,3}?"
_PROSE_TAIL = (  # "<name> [for X] is|was [now|set to] VALUE" or "<name> for X: VALUE" (name=value is a label rule's)
    r"(?:(?:" + _PROSE_FOR + r")?[ \t]+(?:is|was|are|were|reads)(?:[ \t]+(?:now|still|set[ \t]+to|changed[ \t]+to))?"
    r"[ \t]+|" + _PROSE_FOR + r"[ \t]*[:=][ \t]*)"
    r"(?P<q>[\"'`\u201c\u2018])?(?P<v>(?(q)[^\"'`\u201d\u2019\r\n]{1,256}|[^\s\"'`]{1,256}))"
)
PROSE_RULES: tuple[Rule, ...] = (
    Rule(
        "password",
        _r(r"(?i)\b(?:password|passwd|passphrase|pass[ \t]+phrase|pwd)" + _PROSE_TAIL),
        "passwords told in a sentence ('the cache password is X', 'the password for admin was \"X\"')",
        check="prose_secret",
        needles=("pass", "pwd"),
    ),
    Rule(
        "secret",
        _r(
            r"(?i)\b(?:secret|(?:api|access|account|storage|shared|primary|secondary|auth|secret|sas)[ \t_-]?key|"
            r"(?:access|auth|bearer|sas|api|refresh)[ \t_-]?token|client[ \t_-]?secret)" + _PROSE_TAIL
        ),
        "keys, tokens and client secrets told in a sentence ('the storage key is X')",
        check="prose_secret",
        needles=("secret", "key", "token"),
    ),
)

# Context before a base64 value that makes it a digest rather than a key.
HASH_CONTEXT = _r(
    r"(?i)(?:sha-?(?:1|224|256|384|512)|md5|crc-?(?:32|64)|hash|digest|fingerprint|checksum|thumbprint|etag)"
    r"\\?[\"']?\s*[:=]?\s*\\?[\"']?\s*$"
)

# Key names (JSON keys, env vars, YAML keys, connection-string fields) whose value is a secret whatever it
# looks like.
STRONG_KEY_NAME = _r(
    r"(?i)(?:password|passwd|passphrase|\bpwd|userpwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"accountkey|account[_-]?key|master[_-]?key|shared[_-]?key|sharedaccesskey|sharedaccesssignature|"
    r"private[_-]?key|client[_-]?key|signing[_-]?key|encryption[_-]?key|conn(?:ection)?[_-]?str(?:ing)?|"
    r"sas[_-]?(?:token|url|uri)?$|credentials?$|auth[_-]?key|session[_-]?key|cookie|^auth$|^_?auth$|"
    r"dockerconfigjson$|identitytoken$|(?:^|[_.-])pat(?:[_.-]|$)|pwd|(?:^|[_.-])pass(?:[_.-]|$)|(?:^|[_.-])auth$|"
    r"(?:^|[_.-])psk|psksecret|community$|secure[_-]?value|storepass|keypass|requirepass|masterauth|phash$)"
)
# Key names whose value is a secret though their suffix would make them metadata (IDENTITY_HEADER is the
# App Service managed-identity secret, not a header name).
# The names come from the credential ontology (credentials.toml [environment] unconditional), spelled with
# any separator: IDENTITY_HEADER, identity-header, x-identity-header, identityheader.
UNCONDITIONAL_KEY_NAME = _r(
    "(?i)(?:^|[_.-])(?:"
    + "|".join("[_-]?".join(re.escape(w) for w in n.lower().split("_")) for n in sorted(unconditional_names()))
    + ")$"
)
# Key names that hold a secret only when the value also looks random (key1, primaryKey, primary).
WEAK_KEY_NAME = _r(r"(?i)(?:key\d*|keys|primary|secondary|value|signature|sig|hmac)$")
# Suffixes that turn a secret-sounding name into metadata: keyName, tokenType, passwordExpiry, secretId...
KEY_EXCLUDED_SUFFIX = _r(
    r"(?i)(?:id|ids|name|names|type|types|path|file|url|uri|date|time|expiry|expires|expiration|expireson|"
    r"expiresin|expires_in|expires_on|(?:[_.-]|created|updated|expires|issued|rotated|modified|changed|deleted|"
    r"last|valid|not)(?:at|on)|version|count|length|policy|policies|enabled|authentication|"
    r"hint|endpoint|format|sha256|hash|permissions|source|kind|required|set|reset|profile|vault|store|"
    r"uris|urls|provider|header|algorithm|validity|lifetime|ttl|rotation|status|state|level|prefix|audience|"
    r"issuer|scope|scopes|authority|mode|method|methods|scheme|"
    r"public[_-]?key|publickey|publickeys|keydata|data_public)$"
)

# One `name = value` / `name: value` / `export NAME="value"` / `name=value;` assignment inside a line.
LINE_ASSIGNMENT = _r(
    r"(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{1,80})[\"']?[ \t]*(?P<op>:=|=>|[:=])[ \t]*(?P<q>[\"'])?"
    r"(?P<v>(?(q)[^\"'\r\n]+|(?:\{[^}\r\n]{1,256}\}|[^\s;,&\"'\\]+)))"
)
# <password>value</password> in XML output (publishing profiles, app configs).
XML_ELEMENT = _r(r"<(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{1,80})>(?P<v>[^<>\r\n]{1,512})</(?P=name)>")
JSON_SECRET_KEY = _r(r"\"(?P<name>[A-Za-z0-9_.\-@$]{1,80})\"\s*:\s*\"(?P<v>(?:[^\"\\]|\\.)*)\"")

# Words in an az/cli command that mark its output as secret-bearing (bare tsv values have no label).
SECRET_COMMAND_WORDS = _r(
    r"(?i)(?:get-access-token|keys?|list-keys?|secrets?|credentials?|passwords?|tokens?|generate-sas|sas|"
    r"connection-strings?|show-connection-string|list-publishing-(?:profiles|credentials)|admin-key|"
    r"query-key|api-key|appsettings|create-for-rbac|printenv|env|shared-key|private-key|preshared-keys?|"
    r"genkey|genpsk)"
)


# --- JSON fields --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldRule:
    """A JSON field whose value is a secret by its name alone, whatever the value looks like.

    ``names`` is matched (case-insensitively, whole name) against the field name as written; an ``_`` in
    it stands for an optional separator (``_``, ``-``, ``.`` or nothing), so ``shared_key`` matches
    ``sharedKey``, ``SHARED_KEY`` and ``shared-key``. A string or number value is replaced; an object or
    array value has every string in it replaced except those under metadata names (``name``, ``type``,
    ``id``, ``username``, ``address`` ...), which is how ``functionKeys: {"default": ...}``,
    ``passwords: [{"name": "password", "value": ...}]`` and ARM outputs ``{"type": ..., "value": ...}``
    come out.
    """

    kind: str
    names: str
    why: str


JSON_FIELD_RULES: tuple[FieldRule, ...] = (
    FieldRule("shared_key", r"shared_key", "VPN connection shared keys (az network vpn-connection show)"),
    FieldRule(
        "authorization_key",
        r"authorization_key",
        "ExpressRoute circuit authorizations and connections: a GUID that lets anyone link the circuit",
    ),
    FieldRule("user_data", r"user_data", "VM/VMSS user data, base64 scripts that often embed credentials"),
    FieldRule("custom_data", r"custom_data", "VM custom data (cloud-init), same as user data"),
    FieldRule(
        "connection_string",
        r"(?:[a-z]+_)??(?:primary_|secondary_)?(?:read_?only_|read_?write_)?(?:master_)?connection_strings?",
        "connectionString / primaryConnectionString / connectionStrings[] (Service Bus, Event Hubs, IoT Hub, "
        "Cosmos DB, web app connection strings): the account key travels inside",
    ),
    FieldRule(
        "access_key",
        r"(?:primary|secondary)_(?:read_?only_|read_?write_)?(?:master_|access_|shared_)?key",
        "primaryKey/secondaryKey/primaryMasterKey: account and authorization-rule keys, including "
        "GUID-shaped and hex ones",
    ),
    FieldRule(
        "password",
        r"(?:[a-z]+_)??(?:password|passwd)s?",
        "passwords (ACR credential show 'passwords[].value', admin and login passwords, IoT edge "
        "registryCredentials.*.password)",
    ),
    FieldRule(
        "password", r"registry_credentials", "IoT edge deployments: registry credentials (address kept)"
    ),
    FieldRule(
        "secret",
        r"secure_value|protected_settings|protected_parameters",
        "container secure environment values (ACI secureValue), VM extension protectedSettings and run-command "
        "protectedParameters: secret by design whatever they hold",
    ),
    FieldRule(
        "host_key",
        r"master_key|function_keys|system_keys|host_keys",
        "Azure Functions host keys (az functionapp keys list): masterKey, functionKeys{}, systemKeys{}",
    ),
)

# The ``name`` of a ``{"name": ..., "value": ...}`` pair (app settings, service connector
# list-configuration, container environment variables) whose value is a secret: *_KEY, *_PASSWORD,
# *_CONNECTION_STRING, *_SECRET, *_TOKEN, a trailing digit allowed (password2).
SECRET_SETTING_NAME = _r(
    r"(?i)^(?:[A-Za-z0-9]+[_.-]+)*(?:[A-Za-z]*(?:key|password|passwd|pwd|secret|token|passphrase)|pat|pass|auth|"
    r"psk|community|identity_header|connection_?string|connstr|sas|azurewebjobsstorage)\d*$"
)
