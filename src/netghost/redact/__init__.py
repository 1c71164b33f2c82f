"""netghost.redact: the secret redactor, which replaces every credential in a text by ``[REDACTED:<kind>]``.

The shell runs it over every output and over the command line it shows a human and writes to the audit;
ARCHITECTURE.md makes it a shared piece (the LLM gateway and the forensics narrative use it too), so it
depends on nothing else in netghost and sits at the bottom layer. Inside: ``_rules`` (the rule tables),
``_values`` (value tests), ``_context`` (context finders), ``_encoded`` (base64 judged by its text),
``_json`` (secret-named JSON fields, replaced in place), ``_find`` (which values are secrets),
``_redact`` (replacing them, the public functions). ``_clean`` is its neighbour at the same entrances:
:func:`clean_text` / :func:`clean_json` make outside text safe to keep (no lone surrogate, no NUL, a
bounded length) where it enters, so no strict writer behind them breaks on it.
"""

from netghost.redact._clean import clean_json, clean_text
from netghost.redact._redact import Redaction, redact, redact_argv, redact_command

__all__ = ["Redaction", "clean_json", "clean_text", "redact", "redact_argv", "redact_command"]
