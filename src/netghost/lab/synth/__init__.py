"""The lab's packet captures: the libpcap bytes a Network Watcher capture on a VM would hold.

The ``az`` simulator calls :func:`synthesize_capture` when a capture session stops; the bytes are
computed from the :class:`~netghost.lab.world.World` (its traffic, shaped by its one network
fault, plus background noise), deterministic for a world, VM and window, so the forensics engine
and its tests read the same capture every time.
"""

from netghost.lab.synth._capture import MAX_SYNTH_S, capture_packets, synthesize_capture

__all__ = ["MAX_SYNTH_S", "capture_packets", "synthesize_capture"]
