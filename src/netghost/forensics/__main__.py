"""``python -m netghost.forensics`` runs the pcap-forensics CLI."""

import sys

from netghost.forensics.cli import main

sys.exit(main())
