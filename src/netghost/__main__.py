"""``python -m netghost`` runs the ``ghost-agent`` command line."""

from netghost.agent.cli import main

raise SystemExit(main())
