"""Findings: the ranked diagnoses of one capture (SYN failures, resets, retransmissions, PMTU black
holes, DNS and ICMP trouble, scans, zero windows, capture quality), each citing its frames."""

from netghost.forensics.findings._build import build_findings
from netghost.forensics.findings._context import MAX_FRAMES, SEVERITIES, Ctx, Finding, finding, flow_id

__all__ = ["MAX_FRAMES", "SEVERITIES", "Ctx", "Finding", "build_findings", "finding", "flow_id"]
