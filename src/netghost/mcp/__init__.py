"""The MCP server: the agent's tools offered to other MCP clients (not built yet).

It will expose the same tools as the agent (``netghost.contracts`` ``TOOL_NAMES``) through the same
Safe-Exec Shell and human gate, so a client reached over MCP gets no path around classification,
approval or the audit chain. Nothing is exported until it lands.
"""

__all__: list[str] = []
