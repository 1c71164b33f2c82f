"""Timestamps and hash tags are kept as exact wire text, because chains and checksums hash that text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from netghost.contracts import IsoTimestamp, Sha256Tag, TaskTimestamps, format_timestamp

_ISO: TypeAdapter[str] = TypeAdapter(IsoTimestamp)


@pytest.mark.parametrize(
    "text",
    [
        "2025-01-15T14:32:00Z",
        "2026-11-22T06:15:02.123456Z",
        "2026-11-22T06:15:02.000000Z",
        "2025-01-15T14:32:00.5Z",
        "2025-01-15T14:32:00.123456789+05:30",
        "2024-02-29T23:59:59-08:00",
    ],
)
def test_valid_timestamps_are_kept_byte_for_byte(text: str) -> None:
    assert _ISO.validate_python(text) == text
    stamps = TaskTimestamps(created=text)
    assert stamps.model_dump(mode="json", exclude_unset=True) == {"created": text}


@pytest.mark.parametrize(
    "text",
    [
        "2025-02-29T00:00:00Z",
        "2025-01-15T24:00:00Z",
        "2025-01-15T14:32:00.Z",
        "2025-01-15T14:32:00",
        "2025-01-15T14:32Z",
        "15/01/2025 14:32",
        "2025-01-15T14:32:00+0530",
    ],
)
def test_invalid_timestamps_are_rejected(text: str) -> None:
    with pytest.raises(ValidationError):
        _ISO.validate_python(text)


def test_sha256_tag_requires_algorithm_and_lowercase_hex() -> None:
    adapter: TypeAdapter[str] = TypeAdapter(Sha256Tag)
    good = "sha256:" + "0123456789abcdef" * 4
    assert adapter.validate_python(good) == good
    for bad in (good.upper(), good[7:], good[:-1], "md5:" + good[7:]):
        with pytest.raises(ValidationError):
            adapter.validate_python(bad)


def test_format_timestamp_writes_utc_z_and_refuses_naive_times() -> None:
    moment = datetime(2025, 1, 15, 15, 32, 0, 250000, tzinfo=timezone(timedelta(hours=1)))
    assert format_timestamp(moment) == "2025-01-15T14:32:00Z"
    assert format_timestamp(moment, timespec="microseconds") == "2025-01-15T14:32:00.250000Z"
    with pytest.raises(ValueError, match="aware"):
        format_timestamp(datetime(2025, 1, 15, 14, 32))


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)))
def test_formatted_timestamps_always_validate_and_parse_back(moment: datetime) -> None:
    text = format_timestamp(moment, timespec="microseconds")
    assert _ISO.validate_python(text) == text
    assert datetime.fromisoformat(text.replace("Z", "+00:00")) == moment
