"""netghost.forensics (see ARCHITECTURE.md)."""
