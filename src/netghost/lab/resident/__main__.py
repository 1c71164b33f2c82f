"""``python -m netghost.lab.resident --state DIR``: the resident lab process (started by ``start_resident``)."""

from netghost.lab.resident._process import main

raise SystemExit(main())
