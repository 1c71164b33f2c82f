"""The lab's clock: lab time runs ``scale`` times faster than wall time, across processes.

Every ``az`` call is a new process, so the clock is an *anchor* persisted in the lab state:
``lab_now = lab_anchor + (wall_now - wall_anchor) * scale``. Setting
``NETGHOST_LAB_CLOCK_SCALE=60`` makes a 60 s capture stop after one wall second; tests can also
:meth:`LabClock.advance` lab time without sleeping. When the scale changes between calls the clock
re-anchors at the current lab time, so lab time never jumps backwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from netghost.errors import LabError

__all__ = ["SCALE_ENV", "LabClock", "format_azure_time", "scale_from_env"]

SCALE_ENV = "NETGHOST_LAB_CLOCK_SCALE"


def scale_from_env(env: Mapping[str, str]) -> float:
    """The clock scale from ``NETGHOST_LAB_CLOCK_SCALE`` (default 1.0).

    Raises:
        LabError: the value is not a positive number.
    """
    raw = env.get(SCALE_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError as exc:
        raise LabError(f"{SCALE_ENV}={raw!r} is not a number") from exc
    if not value > 0 or value > 1e6:
        raise LabError(f"{SCALE_ENV}={raw!r} must be in (0, 1e6]")
    return value


@dataclass
class LabClock:
    """Scaled lab time anchored to wall time; ``wall`` is injectable for tests.

    ``hurried`` is the lab time the scale has added over wall speed up to the anchor (a scale of 60
    adds 59 lab seconds per wall second): :meth:`at_wall_speed` takes it out again. Why keep it: the
    scale fast-forwards *waiting*, but the agent's own steps between two commands take real seconds,
    which the scale would stretch into lab minutes (two captures created twenty seconds apart would
    be twenty lab minutes apart); the capture sessions measure their distance at wall speed.
    """

    lab_anchor: float
    wall_anchor: float
    scale: float = 1.0
    wall: Callable[[], float] = field(default=time.time, repr=False, compare=False)
    hurried: float = 0.0

    @classmethod
    def start(cls, lab_start: float | None = None, scale: float = 1.0,
              wall: Callable[[], float] = time.time) -> LabClock:
        """A clock whose lab time is ``lab_start`` (default: wall now) at this instant."""
        now = wall()
        return cls(lab_start if lab_start is not None else now, now, scale, wall)

    def now(self) -> float:
        """Lab time as POSIX seconds."""
        return self.lab_anchor + (self.wall() - self.wall_anchor) * self.scale

    def now_dt(self) -> datetime:
        return datetime.fromtimestamp(self.now(), tz=UTC)

    def at_wall_speed(self) -> float:
        """Lab time as it would read had the lab always run at wall speed (every :meth:`advance` counted,
        the scale's acceleration not): two readings differ by the real time between them plus any jumps."""
        return self.lab_anchor - self.hurried + (self.wall() - self.wall_anchor)

    def rescale(self, scale: float) -> None:
        """Change the scale from now on without moving lab time."""
        if scale != self.scale:
            wall = self.wall()
            self.hurried += (wall - self.wall_anchor) * (self.scale - 1.0)
            self.lab_anchor += (wall - self.wall_anchor) * self.scale
            self.wall_anchor, self.scale = wall, scale

    def advance(self, seconds: float) -> None:
        """Jump lab time forward (tests use this instead of sleeping)."""
        if seconds < 0:
            raise LabError("the lab clock never goes backwards")
        self.lab_anchor += seconds

    def to_json(self) -> dict[str, float]:
        return {"lab_anchor": self.lab_anchor, "wall_anchor": self.wall_anchor, "scale": self.scale,
                "hurried": self.hurried}

    @classmethod
    def from_json(cls, data: Mapping[str, float], wall: Callable[[], float] = time.time) -> LabClock:
        """A persisted clock (a state written before ``hurried`` existed reads as 0: nothing hurried yet)."""
        return cls(float(data["lab_anchor"]), float(data["wall_anchor"]), float(data["scale"]), wall,
                   float(data.get("hurried", 0.0)))


def format_azure_time(ts: float, fraction_digits: int = 7) -> str:
    """``2026-11-22T05:19:33.0000000Z`` as ARM prints times (7 fractional digits)."""
    dt = datetime.fromtimestamp(ts, tz=UTC)
    frac = f"{dt.microsecond:06d}0"[:fraction_digits]
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if fraction_digits else "") + "Z"
