"""netghost.forensics: a fast, Wireshark-faithful capture analyser (the ``pcap-forensics`` program).

Pipeline, one subpackage a stage: ``read`` (pcap/pcapng records in bounded chunks) → ``decode``
(one numpy column per header field) → ``tcp`` (tshark 4.0's sequence analysis, conversations and
streams), ``dns``, ``icmp`` → :func:`analyze_capture` (``engine``: the whole analysis, kept as
columns in an :class:`Analysis` so compare mode and charts never decode again) → ``findings`` →
``report`` (semantic JSON, Markdown, HTML, narrative); ``compare`` matches two capture points.

This face is lazy (PEP 562): importing ``netghost.forensics`` loads nothing heavy, each name below
loads its module on first use. That keeps ``python -m netghost.forensics`` able to settle process
settings (see ``__main__``) before numpy is imported, and costs importers only what they use.

This package imports only ``netghost.errors`` (and may use ``netghost.contracts``) from netghost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netghost._lazy import lazy_face

if TYPE_CHECKING:
    from netghost.forensics.decode import Packets, format_addr
    from netghost.forensics.engine import Analysis, analyze_capture
    from netghost.forensics.findings import build_findings
    from netghost.forensics.report import (
        SEMANTIC_VERSION,
        build_semantic,
        load_schema,
        render_executive_summary,
        render_report,
    )
    from netghost.forensics.tcp import FLAG_BITS, FLAG_NAMES

__all__ = [
    "FLAG_BITS",
    "FLAG_NAMES",
    "SEMANTIC_VERSION",
    "Analysis",
    "Packets",
    "analyze_capture",
    "build_findings",
    "build_semantic",
    "format_addr",
    "load_schema",
    "render_executive_summary",
    "render_report",
]

# where each public name lives (the subpackage face or root module that exports it)
_HOMES = {
    "FLAG_BITS": "tcp",
    "FLAG_NAMES": "tcp",
    "SEMANTIC_VERSION": "report",
    "Analysis": "engine",
    "Packets": "decode",
    "analyze_capture": "engine",
    "build_findings": "findings",
    "build_semantic": "report",
    "format_addr": "decode",
    "load_schema": "report",
    "render_executive_summary": "report",
    "render_report": "report",
}

__getattr__, __dir__ = lazy_face(__name__, _HOMES, __all__)
