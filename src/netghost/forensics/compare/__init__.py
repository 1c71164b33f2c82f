"""Two-point comparison: the same path captured at two points, matched packet by packet, shows where
packets were lost, blocked, injected or modified, and the one-way delay between the points."""

from netghost.forensics.compare._compare import compare_analyses, compare_captures
from netghost.forensics.compare._findings import compare_findings
from netghost.forensics.compare._match import COMPARE_VERSION
from netghost.forensics.compare._report import (
    build_compare_semantic,
    load_compare_schema,
    run_compare,
    write_compare_outputs,
)

__all__ = [
    "COMPARE_VERSION",
    "build_compare_semantic",
    "compare_analyses",
    "compare_captures",
    "compare_findings",
    "load_compare_schema",
    "run_compare",
    "write_compare_outputs",
]
