"""What MCP adds to a governed call, and what the report charts cost as SVG and as PNG.

Prints, per call (median and p95 over N calls, ms): a FORBIDDEN ``run_shell_cmd`` (classified, refused
and audited: the whole gate with no process) and ``list_tasks``, (a) straight on SafeExecShell /
CloudOrchestrator, (b) through the MCP server in memory, (c) over stdio to ``ghost-agent mcp`` in a child
process; the ratio MCP / direct. Then the espn capture's two report charts drawn as inline SVG (what the
report ships) and as PNG at the same size: bytes and render time.

Run: ``.venv/bin/python bench/mcp_bench.py [--calls N]``
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.memory import create_connected_server_and_client_session

from netghost.mcp import McpSettings, build_server
from netghost.orchestrator import CloudOrchestrator
from netghost.shell import HitlDecision, SafeExecShell

FORBIDDEN = {"command": "sudo id", "reasoning": "bench"}
ESPN = Path(__file__).resolve().parents[1] / "tests" / "data" / "pairs" / "chrissanders_ppa2e_http_espn_A.pcap"
CLIENT = types.Implementation(name="bench", version="1")


def _stats(name: str, times: list[float], base: float | None = None) -> float:
    med = statistics.median(times) * 1000
    p95 = sorted(times)[int(len(times) * 0.95) - 1] * 1000
    ratio = f"  ×{med / base:.1f} of direct" if base else ""
    print(f"  {name:<34} median {med:8.3f} ms   p95 {p95:8.3f} ms{ratio}")
    return med


def _direct(n: int, root: Path) -> tuple[float, float]:
    shell = SafeExecShell("bench_direct", lambda _r: HitlDecision.deny(), audit_dir=root / "direct")
    orch = CloudOrchestrator(shell, "bench_direct", task_dir=str(root / "direct"), scan_azure_orphans=False)
    out = []
    for fn in (lambda: shell.execute(FORBIDDEN), lambda: orch.orchestrate({"intent": "list_tasks"})):
        times = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        out.append(times)
    orch.close()
    shell.close()
    print("direct (SafeExecShell / CloudOrchestrator):")
    return _stats("run_shell_cmd FORBIDDEN", out[0]), _stats("list_tasks", out[1])


async def _timed(call: Callable[[], Awaitable[object]], n: int) -> list[float]:
    await call()  # the session's shell and orchestrator are built at its first call
    times = []
    for _ in range(n):
        t = time.perf_counter()
        await call()
        times.append(time.perf_counter() - t)
    return times


async def _calls(session: ClientSession, n: int) -> tuple[list[float], list[float]]:
    forbidden = await _timed(lambda: session.call_tool("run_shell_cmd", FORBIDDEN), n)
    listed = await _timed(lambda: session.call_tool("list_tasks", {}), n)
    return forbidden, listed


def _in_memory(n: int, root: Path) -> tuple[list[float], list[float]]:
    app = build_server(McpSettings(audit_dir=root / "memory", orchestrator={"scan_azure_orphans": False}))

    async def main() -> tuple[list[float], list[float]]:
        async with create_connected_server_and_client_session(app.server, client_info=CLIENT) as s:
            return await _calls(s, n)

    try:
        return anyio.run(main)
    finally:
        app.close()


def _stdio(n: int, root: Path) -> tuple[list[float], list[float]]:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "netghost", "mcp", "--audit-dir", str(root / "stdio")])

    async def main() -> tuple[list[float], list[float]]:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w, client_info=CLIENT) as s:
                await s.initialize()
                return await _calls(s, n)

    return anyio.run(main)


def _charts() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from netghost.forensics.engine import analyze_capture
    from netghost.forensics.report import _charts as charts
    from netghost.forensics.report import build_semantic
    from netghost.forensics.report._html import chart_flow

    an = analyze_capture(ESPN)
    stream, _ = chart_flow(build_semantic(an), an) or (0, True)
    axis = charts.TimeAxis(an.cols.ts)
    print(f"report charts of {ESPN.name} (sequence graph of tcp/{stream}, retransmissions + RTT):")
    figures: list[object] = []
    real_svg = charts._svg
    charts._svg = lambda fig, label: (figures.append(fig), real_svg(fig, label))[1]  # keep the figures to redraw
    try:
        t = time.perf_counter()
        svgs = [charts.sequence_graph_svg(an, stream, "seq", axis), charts.timeline_svg(an, axis, stream)]
        t_svg = time.perf_counter() - t
    finally:
        charts._svg = real_svg
    t = time.perf_counter()
    pngs = []
    for fig in figures:
        buf = io.BytesIO()
        FigureCanvasAgg(fig).print_png(buf)
        pngs.append(buf.getvalue())
    t_png = time.perf_counter() - t
    svg_bytes, png_bytes = sum(len(s.encode()) for s in svgs), sum(len(p) for p in pngs)
    print(f"  SVG (inline, shipped)   {svg_bytes / 1024:7.1f} KiB   drawn+serialised in {t_svg * 1000:6.0f} ms")
    print(f"  PNG (100 dpi, same fig) {png_bytes / 1024:7.1f} KiB   rasterised in {t_png * 1000:6.0f} ms "
          f"(+33 % as base64 in HTML: {png_bytes * 4 / 3 / 1024:.1f} KiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    n = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base_f, base_l = _direct(n, root)
        for name, run in (("in memory (SDK client, same process)", _in_memory), ("stdio (ghost-agent mcp child)", _stdio)):
            forbidden, listed = run(n, root)
            print(f"MCP {name}:")
            _stats("run_shell_cmd FORBIDDEN", forbidden, base_f)
            _stats("list_tasks", listed, base_l)
    _charts()


if __name__ == "__main__":
    main()
