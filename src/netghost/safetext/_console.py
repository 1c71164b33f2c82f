"""A rich console that cannot be made to emit a terminal control sequence it did not mean to.

Why a render hook: the agent's console is shared (the investigation's lines, the approval box, the
orchestrator's task blocks and progress line), and each part prints text that came from a model or a
tool. Every part escapes what it prints (:func:`~netghost.safetext.visible`); the hook is the one
place nothing can bypass: every renderable printed on the console is rendered, and each text segment
has its hidden characters shown (:func:`~netghost.safetext.show_hidden`, which leaves already escaped
text as it is) and any hyperlink dropped (an OSC 8 link in a terminal hides where it goes; the
product never prints one). Rich's own control segments (cursor moves of a live display) pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderableType, RenderHook, RenderResult
from rich.control import Control
from rich.measure import Measurement
from rich.segment import Segment

from netghost.safetext._terminal import show_hidden

__all__ = ["VisibleHook", "guard_console"]


class _Shown:
    """A renderable whose text segments are shown with their hidden characters escaped, links dropped."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for seg in console.render(self.inner, options):
            yield _shown(seg)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.inner)


def _shown(seg: Segment) -> Segment:
    if seg.control:
        return seg
    style = seg.style
    if style is not None and style.link:
        style = style.update_link(None)
    return Segment(show_hidden(seg.text), style, seg.control)


class VisibleHook(RenderHook):
    """The console hook: every renderable but rich's own :class:`~rich.control.Control` is wrapped."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        """Wrap each renderable so its text segments are shown (called by rich on every print)."""
        return [r if isinstance(r, Control) else _Shown(r) for r in renderables]


def guard_console(console: Console) -> Console:
    """Install :class:`VisibleHook` on ``console`` once; return it.

    Install it before any live display starts (a live display pushes its own hook and pops the last
    one when it stops).
    """
    hooks: Sequence[RenderHook] = getattr(console, "_render_hooks", ())
    if not any(isinstance(h, VisibleHook) for h in hooks):
        console.push_render_hook(VisibleHook())
    return console
