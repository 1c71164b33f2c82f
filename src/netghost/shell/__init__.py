"""netghost.shell (see ARCHITECTURE.md)."""
