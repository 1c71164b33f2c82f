"""``python -m netghost.lab.probes <tool> ARGS...``: run one probe shim."""

import sys

from netghost.lab.probes._tools import main

sys.exit(main())
