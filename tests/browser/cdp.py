"""Headless Chromium driven over the DevTools protocol (a websocket; no driver binary, nothing downloaded).

Why not Selenium or Playwright: Selenium needs a chromedriver matching the browser and Playwright wants
to download its own browser build, which CI cannot; Debian's ``chromium`` speaks the DevTools protocol
itself, and ``websockets`` (already a dependency of google-genai) is all the client needs.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--remote-debugging-port=0")


def find_chromium() -> str | None:
    """Debian's ``chromium`` (or another Chromium on PATH)."""
    return next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)


class Browser:
    """One headless Chromium with a fresh profile, and one page driven over the DevTools protocol."""

    def __init__(self, binary: str, profile: Path, width: int = 1200, height: int = 1500) -> None:
        self.proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                                      "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        self._stack = contextlib.ExitStack()
        try:  # whatever fails from here on, the browser process must not outlive this object
            self._attach(profile, width, height)
        except BaseException:
            self.close()
            raise

    def _attach(self, profile: Path, width: int, height: int) -> None:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or len(port_file.read_text().split()) < 2:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port, path = port_file.read_text().split()[:2]
        with connect(f"ws://127.0.0.1:{port}{path}", max_size=None) as browser:
            target = self._call(browser, "Target.createTarget", url="about:blank")["targetId"]
        self.ws: ClientConnection = self._stack.enter_context(
            connect(f"ws://127.0.0.1:{port}/devtools/page/{target}", max_size=None))
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _call(self, ws: ClientConnection, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self._ids)
        ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(ws.recv(timeout=60))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result") or {})
            self.events.append(msg)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command on the page; events that arrive meanwhile are kept in ``events``."""
        return self._call(self.ws, method, **params)

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 60
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            self.events.append(json.loads(self.ws.recv(timeout=60)))

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page."""
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen since the last :meth:`open`."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append(str(p.get("exceptionDetails", {}).get("text")))
            elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(str(p["entry"].get("text")))
        return out

    def screenshot(self, path: Path, region: tuple[float, float] | None = None) -> bytes:
        """A PNG of the viewport (the top of the page: what a reader sees first), or of ``region``.

        ``region`` is (top, height) in CSS pixels of the page, full width: a part below the fold (a
        report's charts) is captured without scrolling, the layout staying the one that was checked.
        """
        params: dict[str, Any] = {"format": "png"}
        if region is not None:
            width = self.evaluate("innerWidth")
            params |= {"captureBeyondViewport": True,
                       "clip": {"x": 0, "y": region[0], "width": width, "height": region[1], "scale": 1}}
        data = base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])
        path.write_bytes(data)
        return data

    def close(self) -> None:
        """Close the page and end the browser."""
        self._stack.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
