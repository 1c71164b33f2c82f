"""The lab's mutable state on disk: world copy, clock anchor, captures, blobs, injected faults.

Each ``az`` invocation is its own process, so everything that changes (capture sessions, blobs,
fault counters, the clock anchor) lives in one directory, by default ``<audit_dir>/lab`` so that a
``--resume`` of the agent finds the same world mid-capture. Every invocation holds an exclusive
``flock`` on ``.lock`` for its whole run: dual-end captures run two ``az`` processes at once.

Layout::

    world.yaml      the scenario the state was created from (copied, so edits to the shipped
                    file never change a running lab)
    meta.json       {"v": 1, "scenario": name, "created": ts}
    clock.json      LabClock anchor
    captures.json   {"<location>/<name>": capture record}
    storage.json    {account: {container: {blob: {file, created, available_at, etag, size}}}}
    faults.json     cloud faults injected at run time, plus their counters
    blobs/          blob bodies, one file each
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from netghost.errors import LabError
from netghost.lab.clock import SCALE_ENV, LabClock, scale_from_env
from netghost.lab.world import SCENARIO_DIR, CloudFaultSpec, World, load_world, world_from_yaml

__all__ = ["STATE_ENV", "LabState", "default_state_dir", "init_state"]

STATE_ENV = "NETGHOST_LAB_STATE"
_WORLD_FAULTS = ("vm-stopped", "wireserver-blocked")
WIRESERVER_RULE = "DenyWireServerOutbound"
_FORMAT = 1
_WORLD_CACHE: dict[tuple[str, int, int], World] = {}


def default_state_dir(env: Mapping[str, str], audit_dir: str | Path = "./audit") -> Path:
    """``$NETGHOST_LAB_STATE`` if set, else ``<audit_dir>/lab``."""
    explicit = env.get(STATE_ENV)
    return Path(explicit) if explicit else Path(audit_dir) / "lab"


def init_state(directory: str | Path, scenario: str | Path, *, lab_start: float | None = None,
               scale: float = 1.0, force: bool = False) -> LabState:
    """Create (or with ``force`` recreate) a lab state for ``scenario`` in ``directory``.

    Raises:
        LabError: the scenario does not load, or the directory holds a lab and ``force`` is False.
    """
    world = load_world(scenario)
    root = Path(directory)
    if (root / "meta.json").exists() and not force:
        raise LabError(f"{root} already holds a lab state (use reset to start over)", world=str(scenario), path=root)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    state = LabState(root)
    with state.locked():  # an az process running against the old state finishes first
        _write_fresh_state(state, world, scenario, lab_start, scale)
    return state


def _write_fresh_state(state: LabState, world: World, scenario: str | Path, lab_start: float | None,
                       scale: float) -> None:
    root = state.root
    source = Path(scenario)
    text = source.read_text(encoding="utf-8") if source.suffix else _shipped_text(str(scenario))
    for name in ("captures.json", "storage.json", "faults.json"):
        (root / name).unlink(missing_ok=True)
    blobs = root / "blobs"
    if blobs.exists():
        for item in blobs.iterdir():
            item.unlink()
    blobs.mkdir(exist_ok=True)
    (root / "world.yaml").write_text(text, encoding="utf-8")
    start = lab_start
    if start is None and world.spec.clock_start is not None:
        start = world.spec.clock_start.timestamp()
    state.write("clock.json", LabClock.start(start, scale).to_json())
    storage: dict[str, dict[str, dict[str, Any]]] = {}
    removed = {(f.account, f.container) for f in world.spec.cloud_faults if f.kind == "container-missing"}
    for account in world.spec.storage_accounts:
        storage[account.name] = {
            c: {} for c in account.containers
            if (account.name, c) not in removed and (None, c) not in removed
        }
    state.write("storage.json", storage)
    state.write("captures.json", {})
    state.write("faults.json", {"injected": [], "counters": {}})
    state.write("meta.json", {"v": _FORMAT, "scenario": world.name, "created": time.time()})


def _shipped_text(name: str) -> str:
    return (SCENARIO_DIR / f"{name}.yaml").read_text(encoding="utf-8")


class LabState:
    """Read and write one lab state directory (see the module docstring for the layout)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._world: World | None = None

    @property
    def exists(self) -> bool:
        return (self.root / "meta.json").exists()

    def require(self) -> LabState:
        """Raises LabError when the directory holds no lab state."""
        if not self.exists:
            raise LabError(f"no lab state in {self.root}: run `ghost-agent lab reset <scenario>` first", path=self.root)
        return self

    @contextmanager
    def locked(self) -> Iterator[LabState]:
        """Hold the state's exclusive lock (one ``az`` invocation at a time mutates it)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield self
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # ---- json files --------------------------------------------------------------------------
    def read(self, name: str) -> Any:
        try:
            return json.loads((self.root / name).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise LabError(f"lab state {self.root} is missing {name}", path=self.root / name) from exc
        except json.JSONDecodeError as exc:
            raise LabError(f"lab state file {self.root / name} is corrupt: {exc}", path=self.root / name) from exc

    def write(self, name: str, data: Any) -> None:
        """Atomically replace ``name`` (write a temp file, fsync, rename)."""
        path = self.root / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)

    # ---- world, clock, faults ----------------------------------------------------------------
    def world(self) -> World:
        """The state's world; parsed once per process per file version (in-process az calls reuse it)."""
        if self._world is None:
            path = self.root / "world.yaml"
            st = path.stat()
            key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
            cached = _WORLD_CACHE.get(key)
            if cached is None:
                cached = world_from_yaml(path.read_text(encoding="utf-8"), str(path))
                _WORLD_CACHE.clear()  # one lab per process is the norm; keep memory flat
                _WORLD_CACHE[key] = cached
            self._world = cached
        return self._world

    def clock(self, env: Mapping[str, str] | None = None) -> LabClock:
        """The persisted clock, rescaled when ``env`` sets ``NETGHOST_LAB_CLOCK_SCALE``.

        Without the variable the scale chosen at ``lab reset`` stays: a shell that scrubs the
        environment of its children must not slow the lab back to real time.
        """
        clock = LabClock.from_json(self.read("clock.json"))
        if env is not None and env.get(SCALE_ENV, "").strip():
            scale = scale_from_env(env)
            if scale != clock.scale:
                clock.rescale(scale)
                self.save_clock(clock)
        return clock

    def save_clock(self, clock: LabClock) -> None:
        self.write("clock.json", clock.to_json())

    def advance_clock(self, seconds: float) -> None:
        """Move lab time forward by ``seconds`` (no sleeping in tests)."""
        clock = self.clock()
        clock.advance(seconds)
        self.save_clock(clock)

    def cloud_faults(self) -> list[CloudFaultSpec]:
        """The world's declared cloud faults plus those injected at run time."""
        injected = [CloudFaultSpec.model_validate(f) for f in self.read("faults.json")["injected"]]
        return [*self.world().spec.cloud_faults, *injected]

    def inject_fault(self, fault: CloudFaultSpec) -> None:
        """Add a cloud fault for the rest of this lab's life (tests inject per test this way)."""
        with self.locked():
            data = self.read("faults.json")
            data["injected"].append(fault.model_dump(exclude_none=True))
            self.write("faults.json", data)
            if fault.kind == "container-missing":
                storage = self.read("storage.json")
                for account, containers in storage.items():
                    if fault.account in (None, account):
                        containers.pop(fault.container or "captures", None)
                self.write("storage.json", storage)
            elif fault.kind in _WORLD_FAULTS:
                self._apply_world_fault(fault)

    def _apply_world_fault(self, fault: CloudFaultSpec) -> None:
        """vm-stopped / wireserver-blocked change the world copy (so flows, probes and captures all
        see it) and end the sessions running on the VM: their agent can no longer report."""
        if fault.vm is None:
            raise LabError(f"{fault.kind} needs the VM it happens to (vm=...)", path=self.root / "world.yaml")
        vm_name = fault.vm
        if fault.kind == "vm-stopped":
            self.edit_world(lambda data: _set_power_state(data, vm_name, fault.power_state))
        else:
            self.edit_world(lambda data: _deny_wireserver(data, vm_name))
        now = self.clock().now()
        captures = self.captures()
        for rec in captures.values():
            if rec.get("blob_written"):
                continue
            instances = rec.get("instances")
            if instances is not None and vm_name in instances and len(instances) > 1:
                instances.remove(vm_name)  # the other instances go on capturing
            elif rec["vm"].lower() == vm_name.lower() or (instances and vm_name in instances):
                rec["error_at"] = min(float(rec.get("error_at") or now), now)
                rec["error_kind"] = "AgentStopped"
        self.save_captures(captures)

    def edit_world(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Change this lab's copy of its world (caller holds the lock); the shipped file never changes.

        Raises:
            LabError: the changed world no longer validates.
        """
        path = self.root / "world.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        change(data)
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        world_from_yaml(text, str(path))  # validate before anything is written
        path.write_text(text, encoding="utf-8")
        self._world = None

    def bump_counter(self, key: str) -> int:
        """Increment and return a fault counter (caller holds the lock)."""
        data = self.read("faults.json")
        value = int(data["counters"].get(key, 0)) + 1
        data["counters"][key] = value
        self.write("faults.json", data)
        return value

    # ---- storage -----------------------------------------------------------------------------
    def storage(self) -> dict[str, dict[str, dict[str, Any]]]:
        data: dict[str, dict[str, dict[str, Any]]] = self.read("storage.json")
        return data

    def ensure_container(self, account: str, container: str) -> None:
        storage = self.storage()
        storage.setdefault(account, {}).setdefault(container, {})
        self.write("storage.json", storage)

    def put_blob(self, account: str, container: str, name: str, body: bytes, *, created: float,
                 available_at: float) -> None:
        """Store a blob body and its properties (the container must exist)."""
        storage = self.storage()
        blobs = storage.setdefault(account, {}).get(container)
        if blobs is None:
            raise LabError(f"container {account}/{container} does not exist", path=self.root / "storage.json")
        digest = hashlib.sha256(f"{account}/{container}/{name}".encode()).hexdigest()[:32]
        (self.root / "blobs" / digest).write_bytes(body)
        blobs[name] = {
            "file": digest,
            "created": created,
            "available_at": available_at,
            "size": len(body),
            "etag": '"0x8DC' + hashlib.sha256(body).hexdigest()[:12].upper() + '"',
        }
        self.write("storage.json", storage)

    def blob_body(self, meta: Mapping[str, Any]) -> bytes:
        return (self.root / "blobs" / str(meta["file"])).read_bytes()

    def delete_blob(self, account: str, container: str, name: str) -> bool:
        storage = self.storage()
        meta = storage.get(account, {}).get(container, {}).pop(name, None)
        if meta is None:
            return False
        (self.root / "blobs" / str(meta["file"])).unlink(missing_ok=True)
        self.write("storage.json", storage)
        return True

    # ---- captures ----------------------------------------------------------------------------
    def captures(self) -> dict[str, dict[str, Any]]:
        data: dict[str, dict[str, Any]] = self.read("captures.json")
        return data

    def save_captures(self, captures: Mapping[str, Any]) -> None:
        self.write("captures.json", dict(captures))


def _vm_entry(data: dict[str, Any], vm_name: str) -> dict[str, Any]:
    entry = next((v for v in data.get("vms", []) if str(v.get("name", "")).lower() == vm_name.lower()), None)
    if not isinstance(entry, dict):
        raise LabError(f"the lab's world has no VM {vm_name!r}")
    return entry


def _set_power_state(data: dict[str, Any], vm_name: str, power_state: str) -> None:
    _vm_entry(data, vm_name)["power_state"] = power_state


def _deny_wireserver(data: dict[str, Any], vm_name: str) -> None:
    """Add an outbound Deny of 168.63.129.16 to the NSG of the VM's first NIC (else of its subnet)."""
    nic = _vm_entry(data, vm_name)["nics"][0]
    nsg_name = nic.get("nsg")
    if nsg_name is None:
        vnet_name, _, subnet_name = str(nic["subnet"]).partition("/")
        vnet = next(v for v in data.get("vnets", []) if v["name"] == vnet_name)
        nsg_name = next(s for s in vnet["subnets"] if s["name"] == subnet_name).get("nsg")
    nsg = next((n for n in data.get("nsgs", []) if n["name"] == nsg_name), None)
    if nsg is None:
        raise LabError(f"VM {vm_name!r} has no NSG on its NIC or subnet to deny 168.63.129.16 in")
    rules = nsg.setdefault("rules", [])
    taken = {int(r["priority"]) for r in rules if r.get("direction") == "Outbound"}
    priority = next(p for p in range(100, 4097) if p not in taken)
    rules.append({"name": WIRESERVER_RULE, "priority": priority, "direction": "Outbound", "access": "Deny",
                  "protocol": "*", "destination_address_prefix": "168.63.129.16"})
