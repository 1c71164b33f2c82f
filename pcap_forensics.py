#!/usr/bin/env python3
"""Shim so the seeds' command template ``python pcap_forensics.py CAPTURE ...`` works from the repo root."""

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))
    from netghost.forensics.__main__ import main

    sys.exit(main())
