"""Shared building blocks of every wire model: the base config and the string types.

Every contract forbids unknown fields, because a typo in a field name on the wire should fail loudly at
the boundary instead of being dropped silently (the seeds' field names are the API). Fields whose wire
name is not a Python identifier (``_checksum``, ``_meta``) use an alias; models accept both names on
input and always write the wire name.

Timestamps stay ISO-8601 *strings* (validated, never reformatted): task records and audit records are
hashed into a chain and the session file carries a checksum, so re-serialising ``+00:00`` as ``Z`` or
dropping ``.000000`` would change a digest that was computed on the original text.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = [
    "IsoTimestamp",
    "Sha256Tag",
    "WireModel",
    "format_timestamp",
]

_FRACTION = re.compile(r"\.(\d{1,9})(?=Z|[+-]\d{2}:\d{2}$)")
_ISO_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$"


def _check_iso_timestamp(value: str) -> str:
    """Reject strings that match the pattern but are not real instants (month 13, Feb 30)."""
    match = _FRACTION.search(value)
    text = value
    if match:  # fromisoformat takes at most 6 fractional digits; nanoseconds are legal on the wire
        text = value[: match.start()] + "." + match.group(1)[:6].ljust(6, "0") + value[match.end() :]
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    datetime.fromisoformat(text)
    return value


IsoTimestamp = Annotated[
    str,
    Field(pattern=_ISO_PATTERN, examples=["2025-01-15T14:32:00Z"]),
    AfterValidator(_check_iso_timestamp),
]
"""An ISO-8601 instant with an explicit offset (``Z`` or ``±hh:mm``), kept as the exact wire text."""

Sha256Tag = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
"""A SHA-256 digest tagged with its algorithm, as every hash in the WAL is stored."""


def format_timestamp(moment: datetime, *, timespec: str = "seconds") -> str:
    """Render an aware datetime the way the seeds write instants: UTC with a ``Z`` suffix.

    Args:
        moment: An aware datetime (naive datetimes are ambiguous and refused).
        timespec: Passed to :meth:`datetime.isoformat` (``"seconds"`` as in the seeds' examples,
            ``"microseconds"`` as in WAL ``ts`` fields).

    Raises:
        ValueError: If ``moment`` is naive.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("format_timestamp needs an aware datetime; naive times are ambiguous")
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec=timespec) + "Z"


class WireModel(BaseModel):
    """Base of every contract: unknown fields are errors; aliases are accepted and always written."""

    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        use_enum_values=False,
        # validators are built on a model's first use, not at import: every `az`/probe shim of the lab and
        # every CLI start imports all contracts but uses a handful (~0.25 s of each process start)
        defer_build=True,
    )
