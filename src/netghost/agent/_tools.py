"""The six function declarations the Brain sees (seed 001 §1): kept in ``netghost.contracts``.

The MCP server offers the same tools, so the declarations moved down to the contracts; this module keeps
the agent's names for them.
"""

from __future__ import annotations

from netghost.contracts import HYPOTHESIS_ARGS, TOOL_DECLARATIONS, tool_declaration

__all__ = ["HYPOTHESIS_ARGS", "TOOL_DECLARATIONS", "declaration"]

declaration = tool_declaration
