"""Task ids from capture targets: bounded, filesystem- and Azure-safe, distinct for distinct targets;
and a full ARM resource id as a target read as the VM (or scale set) it names.

Why: the task id is a directory name (the workspace), a file name (``{task_id}.cap``), a blob name and
the packet capture's Azure resource name (1-80 characters of ``[A-Za-z0-9_.-]``, starting with a letter
or digit, AZURE.md §2). The target comes from the model: a VM name, but just as well a 150-character ARM
id, a 10 kB string or text with slashes, spaces and control characters. A plain VM name keeps the
readable id it always had (``ghost_web-vm-01_20250115T143200``); anything else becomes a readable
prefix (the id's last segment, cut to :data:`READABLE_CHARS`) plus 8 hex digits of the target's SHA-256,
so two long targets that share a prefix never share an id.
"""

from __future__ import annotations

import hashlib
import re

from netghost.contracts import CaptureTrafficRequest

__all__ = ["MAX_TASK_ID", "READABLE_CHARS", "resolve_target", "task_id_base"]

MAX_TASK_ID = 80
"""Azure's limit for a packet capture name (and far below any file-name limit)."""
READABLE_CHARS = 32
_PREFIX_CHARS = 16
_SUFFIX_ROOM = 6
"""Room left for the ``-N`` the orchestrator appends when two tasks would share an id."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_LEADING = re.compile(r"^[^A-Za-z0-9]+")
_ARM = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.Compute/"
    r"(?:virtualMachines|virtualMachineScaleSets)/(?P<name>[^/]+)/?$",
    re.IGNORECASE,
)


def _safe(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-.")


def task_id_base(prefix: str, target: str, stamp: str) -> str:
    """``{prefix}_{target}_{stamp}`` when that is safe and short, else ``{prefix}_{readable}-{hash8}_{stamp}``.

    Args:
        prefix: the configured capture name prefix (cut to 16 safe characters).
        target: the capture target as the model gave it.
        stamp: the creation time, ``YYYYmmddTHHMMSS``.

    Returns:
        At most ``MAX_TASK_ID - 6`` characters of ``[A-Za-z0-9_.-]``, starting with a letter or digit.
    """
    head = _LEADING.sub("", _safe(prefix))[:_PREFIX_CHARS] or "ghost"  # Azure: a name starts with a letter or digit
    plain = f"{head}_{target}_{stamp}"
    if _safe(target) == target and target and len(plain) <= MAX_TASK_ID - _SUFFIX_ROOM:
        return plain
    last = target.rstrip("/").rsplit("/", 1)[-1]
    readable = (_safe(last) or _safe(target) or "target")[:READABLE_CHARS].strip("-.")
    digest = hashlib.sha256(target.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{head}_{readable or 'target'}-{digest}_{stamp}"


def resolve_target(req: CaptureTrafficRequest, target: str) -> tuple[CaptureTrafficRequest, str]:
    """A full ARM id of a VM or scale set read as its name, in the resource group the id names.

    The id is the more precise of the two: its resource group wins over the request's, so the task
    resolves the machine the id points at. Anything else is returned unchanged (detection then finds the
    target, or fails with a named reason).
    """
    found = _ARM.match(target.strip())
    if found is None:
        return req, target
    params = req.parameters.model_copy(update={"resource_group": found["rg"]})
    return req.model_copy(update={"parameters": params}), found["name"]
