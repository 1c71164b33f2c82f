"""TCP analysis: conversations, tshark 4.0's sequence-analysis rules, and one row per ``tcp.stream``.

The rules are written once for a reader in ``_rules.py`` (also the pure path); ``_compiled.pyx`` is
their C port fused with the conversation table and the stream aggregates (the product path when
built). :func:`analyze_tcp` runs whichever is available; both give identical outputs.
"""

from netghost.forensics.tcp._flags import FLAG_BITS, FLAG_NAMES
from netghost.forensics.tcp._rules import analyze_tcp_sequences, compiled_tcp, run_rules
from netghost.forensics.tcp._streams import (
    CONN_STATES,
    TcpAnalysis,
    TcpStreams,
    analyze_tcp,
    build_streams,
    conversation_keys,
    group_conversations,
    mix_hash,
)

__all__ = [
    "CONN_STATES",
    "FLAG_BITS",
    "FLAG_NAMES",
    "TcpAnalysis",
    "TcpStreams",
    "analyze_tcp",
    "analyze_tcp_sequences",
    "build_streams",
    "compiled_tcp",
    "conversation_keys",
    "group_conversations",
    "mix_hash",
    "run_rules",
]
