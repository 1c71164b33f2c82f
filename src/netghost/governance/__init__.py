"""netghost.governance (see ARCHITECTURE.md)."""
