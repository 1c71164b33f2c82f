"""``python -m netghost`` runs the ``ghost-agent`` command line."""

from netghost.agent import main

raise SystemExit(main())
