"""netghost.contracts (see ARCHITECTURE.md)."""
