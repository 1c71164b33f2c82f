"""The investigator and the ``ghost-agent`` command line.

``ghost-agent`` (:func:`main`) dispatches to subcommands that live with their component and are
imported only when used; ``demo`` runs an investigation against the offline lab with a fixed
playbook standing in for the Gemini brain, every command going through the Safe-Exec Shell.
``python -m netghost`` and the ``ghost-agent`` console script both run :func:`main`.
"""

from netghost.agent.cli import main

__all__ = ["main"]
