"""netghost.agent (see ARCHITECTURE.md)."""
