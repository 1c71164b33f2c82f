"""Outputs of one capture: the semantic JSON (with its published schema), the Markdown forensic
report and executive summary, the HTML report with charts (matplotlib, optional) and the optional
Gemini narrative. matplotlib and google-genai are imported only when those outputs are asked for."""

from netghost.forensics.report._html import write_html_report
from netghost.forensics.report._markdown import MAX_SUMMARY_LINES, render_executive_summary, render_report
from netghost.forensics.report._narrative import generate_narrative, with_narrative
from netghost.forensics.report._semantic import SCHEMA_ID, SEMANTIC_VERSION, build_semantic, load_schema

__all__ = [
    "MAX_SUMMARY_LINES",
    "SCHEMA_ID",
    "SEMANTIC_VERSION",
    "build_semantic",
    "generate_narrative",
    "load_schema",
    "render_executive_summary",
    "render_report",
    "with_narrative",
    "write_html_report",
]
