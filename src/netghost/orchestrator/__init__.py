"""netghost.orchestrator (see ARCHITECTURE.md)."""
