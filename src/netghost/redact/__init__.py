"""netghost.redact: the secret redactor, which replaces every credential in a text by ``[REDACTED:<kind>]``.

The shell runs it over every output and over the command line it shows a human and writes to the audit;
ARCHITECTURE.md makes it a shared piece (the LLM gateway and the forensics narrative use it too), so it
depends on nothing else in netghost and sits at the bottom layer. Inside: ``_rules`` (the rule tables),
``_values`` (value tests), ``_context`` (context finders), ``_encoded`` (base64 judged by its text),
``_json`` (secret-named JSON fields, replaced in place), ``_find`` (which values are secrets),
``_redact`` (replacing them, the public functions), ``_value`` (a JSON-like value, string by string and
as JSON).
"""

from netghost.redact._redact import Redaction, redact, redact_argv, redact_command
from netghost.redact._value import redact_value

__all__ = ["Redaction", "redact", "redact_argv", "redact_command", "redact_value"]
