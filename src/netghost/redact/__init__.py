"""netghost.redact: the secret redactor, which replaces every credential in a text by ``[REDACTED:<kind>]``,
and the credential ontology every tier of the shell asks.

The shell runs it over every output and over the command line it shows a human and writes to the audit;
ARCHITECTURE.md makes it a shared piece (the LLM gateway and the forensics narrative use it too), so it
depends on nothing else in netghost and sits at the bottom layer. Inside: ``_rules`` (the rule tables),
``_values`` (value tests), ``_context`` (context finders), ``_encoded`` (base64 judged by its text),
``_json`` (secret-named JSON fields, replaced in place), ``_find`` (which values are secrets),
``_redact`` (replacing them, the public functions); the ontology: ``credentials.toml`` (the data),
``_credentials`` (credential files, persistence targets, secret variable names), ``_globpath`` (every
spelling of a path, globs against templates), ``_argv_secrets`` (secret values in a command line).
"""

from netghost.redact._argv_secrets import ArgvSecret, argv_secrets, mask_argv_secrets
from netghost.redact._credentials import (
    CredentialHit,
    credential_ancestor,
    credential_context,
    credential_path,
    persistence_path,
    secret_env_name,
)
from netghost.redact._globpath import PathContext
from netghost.redact._redact import Redaction, redact, redact_argv, redact_command

__all__ = [
    "ArgvSecret",
    "CredentialHit",
    "PathContext",
    "Redaction",
    "argv_secrets",
    "credential_ancestor",
    "credential_context",
    "credential_path",
    "mask_argv_secrets",
    "persistence_path",
    "redact",
    "redact_argv",
    "redact_command",
    "secret_env_name",
]
