"""netghost.shell (see ARCHITECTURE.md)."""

from netghost.shell.redact import Redaction, redact

__all__ = ["Redaction", "redact"]
