"""``python -m netghost.lab.resident --state DIR``: the resident lab process (started by ``start_resident``).

When the server returns it has already removed its socket and info file, closed lab ARM and released its
lock; the interpreter's own teardown (~0.1 s for a process that loaded the simulator) is skipped, because the
session that stops the lab waits for this process to end.
"""

import logging
import os
import sys

from netghost.lab.resident._process import main

code = main()
logging.shutdown()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
