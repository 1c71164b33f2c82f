"""``python -m netghost.lab.fake_gemini --script FILE.json``."""

import sys

from netghost.lab.fake_gemini._cli import main

sys.exit(main())
