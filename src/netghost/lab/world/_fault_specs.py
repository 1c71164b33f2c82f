"""The two kinds of fault a scenario declares, and which kinds exist.

* :class:`NetworkFault` is a fault the world's *network* suffers (a deny rule, a dead appliance, a lossy
  path ...): the world's answers and the synthesized packets show it. A world has one, or several that
  break different flows for different reasons.
* :class:`CloudFaultSpec` is a failure of the *Azure API* itself (a missing extension, a quota,
  a late blob): the ``az`` simulator acts it out (see :mod:`netghost.lab.az`'s cloud faults).
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from netghost.contracts import FaultType
from netghost.lab.world._fields import LabModel

__all__ = ["CLOUD_FAULT_KINDS", "NETWORK_FAULT_TYPES", "CloudFaultSpec", "NetworkFault"]

# One list for the lab and the diagnoses it is scored against: contracts' FaultType.
NetworkFaultType = FaultType
# The tuple (argparse choices, membership checks) is derived so the two lists cannot drift apart.
NETWORK_FAULT_TYPES: tuple[str, ...] = get_args(NetworkFaultType)

CloudFaultKind = Literal[
    "extension-missing",
    "no-network-watcher",
    "container-missing",
    "storage-auth-failure",
    "capture-error",
    "poll-transient",
    "blob-late",
    "download-failure",
    "capture-name-conflict",
    "capture-quota",
    "extension-failed",
    "vm-stopped",
    "wireserver-blocked",
    "capture-early-stop",
    "create-unknown-outcome",
    "capture-no-traffic",
]
CLOUD_FAULT_KINDS: tuple[str, ...] = get_args(CloudFaultKind)


class NetworkFault(LabModel):
    """The one injected network fault; ``flow`` names the traffic it breaks.

    ``params`` carry data-plane parameters config cannot show: ``path_mtu`` and ``at`` (pmtu-blackhole: a black
    hole only where the server's NSGs deny the ICMP fragmentation-needed from ``at``, else PMTUD works; with
    ``frag_needed: never`` the hop never sends it, whatever the NSGs allow); ``loss_rate``, ``between`` and ``at``
    (path-packet-loss); ``injector_ip``, ``idle_timeout_s`` or ``after_bytes``, ``injector_ttl`` and ``rst_to``
    (``both`` or ``client``) (middlebox-rst); ``fail_rate`` (snat-port-exhaustion: the share of new connections
    that get no SNAT port); ``tunnel_mtu`` (vpn-mtu-mss: the largest packet the tunnel carries, larger ones die
    silently because no MSS clamping shrinks the segments). A world may declare several faults (``faults``),
    each with its own flows.
    """

    type: NetworkFaultType
    flow: str
    also: list[str] = Field(default_factory=list, description=(
        "other flows the same fault breaks (a dead appliance or a deny rule rarely hurts one flow alone); "
        "``flow`` is the one the complaint is about"))
    params: dict[str, float | int | str | list[str]] = Field(default_factory=dict)

    @property
    def flows(self) -> tuple[str, ...]:
        """Every flow the fault breaks, the complained-of one first."""
        return (self.flow, *self.also)


class CloudFaultSpec(LabModel):
    """A failure of the cloud API itself (not of the network), acted out by the ``az`` simulator."""

    kind: CloudFaultKind
    vm: str | None = None
    region: str | None = None
    count: int = Field(default=1, ge=1, description="poll-transient / download-failure: failures before success")
    delay_s: float = Field(default=20.0, ge=0, description="blob-late: lab seconds after Stop before the blob shows")
    limit: int = Field(default=1, ge=0, description="capture-quota: concurrent captures allowed per region")
    error: str | None = Field(default=None, description="capture-error: packetCaptureError value")
    account: str | None = Field(default=None, description="storage faults: the account (default: all)")
    container: str | None = Field(default=None, description="container-missing: the container removed")
    message: str | None = Field(default=None, description="override the lab's default error text")
    auth_mode: Literal["login", "key"] = Field(
        default="login", description="storage-auth-failure: the --auth-mode refused (key: shared key disabled)")
    writes_only: bool = Field(
        default=False, description="storage-auth-failure: reads pass, writes are refused (a reader role)")
    power_state: Literal["stopped", "deallocated"] = Field(
        default="deallocated", description="vm-stopped: the power state the VM is put in")
    stop_reason: str = Field(
        default="BytesExceeded", description="capture-early-stop: the stopReason reported after delay_s")
