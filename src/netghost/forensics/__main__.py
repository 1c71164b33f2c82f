"""``python -m netghost.forensics`` runs the pcap-forensics CLI.

``OPENBLAS_NUM_THREADS=1`` is set by ``decode.py``, the first module the package imports (this file
runs after the package ``__init__``, too late for numpy's import).
"""

import sys

from netghost.forensics.cli import main

sys.exit(main())
