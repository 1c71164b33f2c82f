"""netghost.lab (see ARCHITECTURE.md)."""
