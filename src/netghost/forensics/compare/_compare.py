"""Two-point comparison, the entry points: match two capture points' packets, then build the comparison.

Matching (``_match.py``) and the comparison's statistics and categories (``_stats.py``) are separate
modules because they change for different reasons; this one only chains them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from netghost.forensics.compare._match import pair_sides, side_of
from netghost.forensics.compare._stats import build_comparison
from netghost.forensics.engine import Analysis, analyze_capture

__all__ = ["compare_analyses", "compare_captures"]


def compare_captures(path_a: str | Path, path_b: str | Path) -> dict[str, Any]:
    """Compare two capture points of one path; returns the ``comparison`` object of the semantic JSON.

    Args:
        path_a: the capture taken at point A (e.g. the source VM).
        path_b: the capture taken at point B (e.g. the destination VM).

    Raises:
        CaptureFormatError: either file is missing or not a readable capture.
    """
    return compare_analyses(analyze_capture(path_a), analyze_capture(path_b))


def compare_analyses(an_a: Analysis, an_b: Analysis, series: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """Compare two already-analysed captures (see :func:`compare_captures`).

    Args:
        an_a: analysis of point A's capture.
        an_b: analysis of point B's capture.
        series: when given, filled with per-matched-packet arrays for charts (never put in the JSON):
            ``t`` (A's timestamp), ``delay_ms`` (offset-corrected one-way delay), ``a_to_b`` (bool).
    """
    return build_comparison(pair_sides(side_of(an_a), side_of(an_b)), series)
