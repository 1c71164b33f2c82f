"""``python -m netghost.lab.az ARGS``: what the lab's ``bin/az`` launcher runs."""

from netghost.lab.az._run import main

raise SystemExit(main())
