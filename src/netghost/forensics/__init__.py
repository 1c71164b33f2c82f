"""netghost.forensics: a fast, Wireshark-faithful capture analyser (the ``pcap-forensics`` program).

Pipeline: :func:`~netghost.forensics.reader.iter_batches` (chunked raw records) →
:func:`~netghost.forensics.decode.decode_batch` (numpy columns) →
:func:`~netghost.forensics.tcp.analyze_tcp_sequences` (tshark 4.0 rules) →
:func:`~netghost.forensics.flows.build_streams` → DNS/ICMP summaries → findings → semantic JSON →
Markdown reports. :func:`analyze_capture` runs the whole analysis and keeps the decoded columns in
the returned :class:`Analysis` so other consumers (compare mode, charts) can reuse them.

This package imports only ``netghost.errors`` (and may use ``netghost.contracts``) from netghost.
"""

import gc as _gc

# Why the collector is paused while the package (and numpy) load: the imports create objects that
# all live as long as the process, so every cyclic collection they trigger is wasted work (measured
# with gc.callbacks: ~12 ms in 49 collections of a ~0.2 s import). It is restored at once: no lasting
# effect on the importer.
_gc_was_enabled = _gc.isenabled()
_gc.disable()
try:
    from netghost.forensics.decode import Packets, format_addr
    from netghost.forensics.engine import Analysis, analyze_capture
    from netghost.forensics.findings import build_findings
    from netghost.forensics.report import render_executive_summary, render_report
    from netghost.forensics.semantic import SEMANTIC_VERSION, build_semantic, load_schema
    from netghost.forensics.tcp import FLAG_BITS, FLAG_NAMES
finally:
    if _gc_was_enabled:
        _gc.enable()

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
