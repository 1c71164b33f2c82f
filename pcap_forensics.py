#!/usr/bin/env python3
"""Shim so the seeds' command template ``python pcap_forensics.py CAPTURE ...`` works from the repo root."""

import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads: halves its import cost
sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))

from netghost.forensics.cli import main

if __name__ == "__main__":
    sys.exit(main())
