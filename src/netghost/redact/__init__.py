"""netghost.redact: the secret redactor, which replaces every credential in a text by ``[REDACTED:<kind>]``,
and the credential ontology every tier of the shell asks.

The shell runs it over every output and over the command line it shows a human and writes to the audit;
ARCHITECTURE.md makes it a shared piece (the LLM gateway and the forensics narrative use it too), so it
depends on nothing else in netghost and sits at the bottom layer. Inside: ``_rules`` (the rule tables),
``_values`` (value tests), ``_context`` (context finders), ``_encoded`` (base64 judged by its text),
``_json`` (secret-named JSON fields, replaced in place), ``_find`` (which values are secrets),
``_gear``/``_hashes``/``_wire`` (span rules for device configurations, password hashes and key logs,
decoded captures), ``_flags`` (per-tool password flags), ``_blocks`` (Kubernetes Secrets, cloud-init),
``_command`` (what the printing command says), ``_public`` (public values never replaced), ``_spans``
(finding secrets by their place), ``_redact`` (replacing them, the public functions), ``_value`` (a
JSON-like value, string by string and as JSON). ``_clean`` is their neighbour at the same entrances:
:func:`clean_text` / :func:`clean_json` make outside text safe to keep (no lone surrogate, no NUL, a
bounded length) where it enters, so no strict writer behind them breaks on it. The credential ontology:
``credentials.toml`` (the data), ``_credentials`` (credential files, persistence targets, secret variable
names), ``_globpath`` (every spelling of a path, globs against templates), ``_argv_secrets`` (secret values
in a command line).
"""

from netghost.redact._argv_secrets import ArgvSecret, argv_secrets, mask_argv_secrets
from netghost.redact._clean import clean_json, clean_text
from netghost.redact._credentials import (
    CredentialHit,
    credential_ancestor,
    credential_context,
    credential_path,
    credential_word,
    persistence_path,
    secret_env_name,
)
from netghost.redact._globpath import PathContext
from netghost.redact._redact import Redaction, redact, redact_argv, redact_command
from netghost.redact._value import redact_value

__all__ = [
    "ArgvSecret",
    "CredentialHit",
    "PathContext",
    "Redaction",
    "argv_secrets",
    "clean_json",
    "clean_text",
    "credential_ancestor",
    "credential_context",
    "credential_path",
    "credential_word",
    "mask_argv_secrets",
    "persistence_path",
    "redact",
    "redact_argv",
    "redact_command",
    "redact_value",
    "secret_env_name",
]
