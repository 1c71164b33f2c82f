"""``python -m netghost.lab.fake_gemini --script FILE.json``: serve a script so a person can run the CLI against it."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netghost.lab.fake_gemini._server import FakeGemini

__all__ = ["load_script", "main"]


def load_script(path: str | Path) -> list[dict[str, Any]]:
    """The turns of a JSON script: a list of turn dicts, or ``{"turns": [...]}``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    turns = data.get("turns") if isinstance(data, dict) else data
    if not isinstance(turns, list):
        raise ValueError(f"{path}: a script is a JSON list of turns or {{'turns': [...]}}")
    return turns


def main(argv: Sequence[str] | None = None, *, stop: threading.Event | None = None) -> int:
    """Serve the script until Ctrl-C (or ``stop`` is set); print the URL and the variable to export first."""
    parser = argparse.ArgumentParser(prog="python -m netghost.lab.fake_gemini",
                                     description="A local fake Gemini API answering from a script of turns.")
    parser.add_argument("--script", required=True,
                        help="JSON file: a list of turns ({'text'}, {'calls'}, {'error'}) or raw replies ({'raw': {...}})")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    parser.add_argument("--api-version", default="v1", help="API version served (default v1, as google-genai 3.x)")
    args = parser.parse_args(argv)
    try:
        turns = load_script(args.script)
        fake = FakeGemini(turns, api_version=args.api_version, port=args.port)
    except (OSError, ValueError) as exc:
        print(f"fake-gemini: {exc}", file=sys.stderr)
        return 2
    print(fake.base_url, flush=True)
    print(f"export GOOGLE_GEMINI_BASE_URL={fake.base_url} GEMINI_API_KEY=fake  # {len(turns)} scripted turns",
          file=sys.stderr, flush=True)
    try:
        (stop or threading.Event()).wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.close()
        for failure in fake.failures:
            print(f"fake-gemini: {failure}", file=sys.stderr)
    return 1 if fake.failures else 0
