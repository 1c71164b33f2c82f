"""netghost.mcp (see ARCHITECTURE.md)."""
