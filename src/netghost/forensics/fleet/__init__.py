"""Fleet analysis: many captures (a scale set, a tier, hours of rolling captures), one report, on Dask.

Each capture is analysed by the engine on a Dask worker (a LocalCluster of worker processes, or any
scheduler address), read from local files or straight from Blob Storage (fsspec + ``adlfs``). The
fleet report ranks the captures by trouble, flags the ones that differ from their peers (median/MAD),
lists the failed ones, and compares capture points that saw the same flows with the two-point
comparison, ordered along the path by TTL and timing. dask is imported only when a fleet runs.
"""

from netghost.forensics.fleet._cluster import dask_client
from netghost.forensics.fleet._html import render_fleet_html
from netghost.forensics.fleet._paths import PointPair, match_points, path_orders
from netghost.forensics.fleet._report import (
    FLEET_SCHEMA_ID,
    FLEET_VERSION,
    build_fleet_semantic,
    load_fleet_schema,
    render_fleet_markdown,
)
from netghost.forensics.fleet._run import FleetResult, run_fleet, run_fleet_cli
from netghost.forensics.fleet._sources import Source, expand_sources
from netghost.forensics.fleet._stats import (
    METRICS,
    TROUBLE,
    capture_metrics,
    rank_captures,
    robust_outliers,
    trouble_parts,
)
from netghost.forensics.fleet._task import CaptureResult, FlowSeen, PairResult, analyse_source, compare_pair

__all__ = [
    "FLEET_SCHEMA_ID",
    "FLEET_VERSION",
    "METRICS",
    "TROUBLE",
    "CaptureResult",
    "FleetResult",
    "FlowSeen",
    "PairResult",
    "PointPair",
    "Source",
    "analyse_source",
    "build_fleet_semantic",
    "capture_metrics",
    "compare_pair",
    "dask_client",
    "expand_sources",
    "load_fleet_schema",
    "match_points",
    "path_orders",
    "rank_captures",
    "render_fleet_html",
    "render_fleet_markdown",
    "robust_outliers",
    "run_fleet",
    "run_fleet_cli",
    "trouble_parts",
]
