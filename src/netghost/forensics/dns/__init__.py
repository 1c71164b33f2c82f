"""DNS: messages parsed from UDP/TCP payloads (compiled in ``_compiled.pyx``, numpy fallback), then
query/response matching, latency and the failures the findings need."""

from netghost.forensics.dns._parse import (
    DNS_PORTS,
    QTYPES,
    RCODE_NAMES,
    DnsMessages,
    analyze_dns,
    parse_dns,
    qnames,
)

__all__ = ["DNS_PORTS", "QTYPES", "RCODE_NAMES", "DnsMessages", "analyze_dns", "parse_dns", "qnames"]
