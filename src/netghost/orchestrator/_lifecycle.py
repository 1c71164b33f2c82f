"""The capture itself: create (APPROVED -> PROVISIONING), download, hash, verify and analyse.

Create is written ahead (``create_issued`` is saved before the command runs), so a restart knows a
capture may exist. An outcome the orchestrator cannot read (the shell could not run az, az failed
with a server error) is settled by asking Azure with ``show`` before deciding: a second capture is
never created. The download goes into the task's workspace, is registered as an evidence artifact
(SHA-256) and its hash is verified again right before the engine reads it; the engine's outputs are
registered too and every hash is returned in ``result``.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from netghost.contracts import StorageAuthMode, TaskRecord, TaskState
from netghost.errors import ArtifactError, PlanViolation
from netghost.governance import open_workspace, register_artifact, validate_artifacts
from netghost.orchestrator import _commands as cmd
from netghost.orchestrator._console import completed_lines, provisioning_lines
from netghost.orchestrator._fleet_summary import add_fleet_section
from netghost.orchestrator._plan import bindings, compare_order, instance_names, split_blob_url
from netghost.orchestrator._preflight import name_az_error
from netghost.orchestrator._runtime import Ran, Runtime, parse_json

__all__ = ["analyse", "download", "instance_files", "provision", "settle_unknown_create"]

_WROTE = re.compile(r"^wrote (?P<path>\S.*)$", re.MULTILINE)
_UNCLEAR = ("InternalServerError", "timed out", "outcome unknown", "GatewayTimeout", "ServiceUnavailable")


def provision(rt: Runtime, record: TaskRecord, *, note: str = "") -> TaskRecord:
    """Run the create (the first HITL prompt); the task ends PROVISIONING, CANCELLED or FAILED."""
    params = record.parameters
    assert params is not None and record.plan is not None
    vmss = record.target_type == "vmss"
    create = next(s for s in record.plan if s[4:5] == ["create"] and ("--target-type" in s) == vmss)
    record = rt.save(record.model_copy(update={"create_issued": True}))
    record, ran = rt.run(record, create, f"{note}Creating packet capture on {record.target} for "
                                         f"{params.duration_seconds} seconds (capture name {record.task_id}).")
    if ran.outcome == "denied":
        rt.say(f"[Cloud Orchestrator] {record.task_id}: create not approved: {ran.decision()}")
        return rt.move(record, TaskState.CANCELLED, create_issued=False, denied_action=ran.action,
                       failure_reason="cancelled", cleanup_status="skipped",
                       error_detail=f"capture creation not approved: {ran.error_text()}")
    if ran.outcome == "ok":
        return _provisioned(rt, record, ran)
    if ran.outcome == "error" or any(k in ran.stderr for k in _UNCLEAR):
        return settle_unknown_create(rt, record, ran.error_text())
    reason = name_az_error(ran.stderr, "create_failed")
    record = rt.move(record, TaskState.PROVISIONING)
    return rt.move(record, TaskState.FAILED, create_issued=False, failure_reason=reason,
                   error_detail=f"Azure provisioning failed: {ran.error_text()}")


def _provisioned(rt: Runtime, record: TaskRecord, ran: Ran) -> TaskRecord:
    doc = parse_json(ran.output)
    location = doc.get("storageLocation", {}) if isinstance(doc, dict) else {}
    path = location.get("storagePath") if isinstance(location, dict) else None
    planned = bindings(record.task_id, None, None, record.storage_container)
    path = path or cmd.blob_url(record.storage_account or "", str(planned["container"]), str(planned["blob"]))
    for line in provisioning_lines(record.task_id):
        rt.say(line)
    return rt.move(record, TaskState.PROVISIONING, azure_operation_id=record.task_id, storage_path=path)


def settle_unknown_create(rt: Runtime, record: TaskRecord, why: str, *, may_recreate: bool = False) -> TaskRecord:
    """The create's outcome is unknown: ask Azure (``show``) and adopt the capture, or fail.

    With ``may_recreate`` (a restart found the task in APPROVED with the create sent, e.g. killed at
    the create's prompt) and ``show`` confirming that no such capture exists, the create is issued
    again: it must still be a member of the task's plan (else :class:`PlanViolation`) and it goes
    through the HITL gate again, so the human approves it a second time; a denial cancels the task.
    Nothing exists yet, so this cannot make a second capture. Without it (the create just ran and
    its answer was unreadable) the task fails rather than risk a capture Azure may still report.
    """
    record, ran = rt.run(record, cmd.capture_show(record.location or "", record.task_id),
                         "The capture's creation outcome is unknown: ask Azure whether it exists before deciding.")
    if ran.outcome == "ok":
        rt.say(f"[Cloud Orchestrator] {record.task_id}: the capture exists on Azure; adopting it")
        fake = Ran("ok", {"output": ran.output})
        if record.state == TaskState.APPROVED:
            return _provisioned(rt, record, fake)
        return record
    gone = ran.outcome == "failed" and ran.exit_code == 3
    if gone and may_recreate and record.state == TaskState.APPROVED:
        rt.say(f"[Cloud Orchestrator] {record.task_id}: Azure has no such capture (the create never reached it); "
               f"asking again before re-issuing it")
        return provision(rt, record, note="Re-issuing the create after a restart: Azure confirms no capture of this "
                                          "name exists (the earlier create never reached Azure). ")
    record = rt.move(record, TaskState.PROVISIONING) if record.state == TaskState.APPROVED else record
    return rt.move(record, TaskState.FAILED, create_issued=not gone, failure_reason="create_failed",
                   error_detail=f"Azure provisioning failed: {why}" + ("" if gone else
                                                                       f"; show also failed: {ran.error_text()}"))


def instance_files(record: TaskRecord) -> list[Path]:
    """A scale-set task's downloaded instance captures (``<stem>_<instanceId>.cap``), by instance id."""
    local = Path(record.local_pcap_path or "")
    found = [f for f in local.parent.glob(f"{local.stem}_*.cap") if f.stem[len(local.stem) + 1:].isdigit()]
    return sorted(found, key=lambda f: int(f.stem[len(local.stem) + 1:]))


def _download_instances(rt: Runtime, record: TaskRecord) -> TaskRecord:
    """A scale-set capture: list ``<stem>_*`` blobs, download each (one prompt per instance), register them."""
    bound = bindings(record.task_id, record.location, record.storage_path, record.storage_container)
    account, auth = record.storage_account or "", record.storage_auth_mode or "login"
    container = str(bound["container"])
    blobs: list[str] = []
    for attempt in (1, 2):
        record, ran = rt.run(record, cmd.blob_list(account, container, str(bound["blob_prefix"]), auth),
                             "List the scale set's per-instance capture blobs.")
        listed = parse_json(ran.output) if ran.outcome == "ok" else None
        blobs = sorted(b for b in listed or [] if isinstance(b, str) and b.endswith(".cap"))
        if blobs:
            break
        if attempt == 1:
            rt.config.sleeper(rt.config.download_retry_delay_s)
    if not blobs:
        return rt.move(record, TaskState.FAILED, failure_reason="download_failed",
                       error_detail="Blob download failed: no per-instance capture blob under "
                                    f"{bound['blob_prefix']} (after retry)")
    for blob in blobs:
        instance = blob.removesuffix(".cap").rpartition("_")[2]
        local = instance_names(str(bound["blob"]), record.local_pcap_path, instance)[1] or ""
        if _registered(record, local):
            continue  # downloaded and registered before a restart
        record, kept = _earlier_download(rt, record, (account, container, blob, auth), local)
        if kept:
            record = _register_download(rt, record, local)
            continue
        record, ran = rt.run(record, cmd.blob_download(account, container, blob, local, auth),
                             f"Downloading scale-set instance {instance}'s capture for analysis.")
        if ran.outcome == "denied":
            rt.say(f"[Cloud Orchestrator] {record.task_id}: download of instance {instance} not approved: "
                   f"{ran.decision()}")
            return rt.move(record, TaskState.CANCELLED, denied_action=ran.action, failure_reason="cancelled",
                           error_detail=f"download not approved: {ran.error_text()}")
        if ran.outcome != "ok" or not Path(local).is_file():
            Path(local).unlink(missing_ok=True)
            return rt.move(record, TaskState.FAILED, failure_reason="download_failed",
                           error_detail=f"Blob download failed: {blob}: {ran.error_text()}")
        record = _register_download(rt, record, local)
    return record


def download(rt: Runtime, record: TaskRecord) -> TaskRecord:
    """DOWNLOADING: fetch the blob (second HITL prompt), one retry after a pause; register it."""
    if record.target_type == "vmss":
        return _download_instances(rt, record)
    if record.local_pcap_path and Path(record.local_pcap_path).is_file() and _registered(record,
                                                                                       record.local_pcap_path):
        return record  # downloaded and registered before a restart: the analysis checks its hash
    parts = split_blob_url(record.storage_path or "")
    bound = bindings(record.task_id, record.location, record.storage_path, record.storage_container)
    account = parts[0] if parts else record.storage_account or ""
    auth = record.storage_auth_mode or "login"
    argv = cmd.blob_download(account, str(bound["container"]), str(bound["blob"]), record.local_pcap_path or "", auth)
    record, kept = _earlier_download(rt, record, (account, str(bound["container"]), str(bound["blob"]), auth),
                                     record.local_pcap_path or "")
    if kept:
        return _register_download(rt, record)
    errors: list[str] = []
    for attempt in (1, 2):
        record, ran = rt.run(record, argv, "Downloading the finished capture for analysis.")
        record = rt.save(record.model_copy(update={"download_attempts": record.download_attempts + 1}))
        if ran.outcome == "denied":
            rt.say(f"[Cloud Orchestrator] {record.task_id}: download not approved: {ran.decision()}")
            return rt.move(record, TaskState.CANCELLED, denied_action=ran.action, failure_reason="cancelled",
                           error_detail=f"download not approved: {ran.error_text()}")
        if ran.outcome == "ok" and Path(record.local_pcap_path or "").is_file():
            return _register_download(rt, record)
        errors.append(f"attempt {attempt}: {ran.error_text()}")
        Path(record.local_pcap_path or "").unlink(missing_ok=True)  # a partial file is not evidence
        if attempt == 1:
            rt.config.sleeper(rt.config.download_retry_delay_s)
    return rt.move(record, TaskState.FAILED, failure_reason="download_failed",
                   error_detail="Blob download failed: " + "; ".join(errors))


def _earlier_download(rt: Runtime, record: TaskRecord, blob: tuple[str, str, str, StorageAuthMode],
                      local: str) -> tuple[TaskRecord, bool]:
    """Keep a capture that a download before a restart left in the task's workspace, if it is the blob.

    The orchestrator can stop after az wrote the file and before the registry recorded it; asking the
    human to approve the same download again (or, on an agent resume, refusing a RISKY step that already
    ran) would lose evidence that is on disk. The file is kept only when its length, and its MD5 when the
    blob carries a Content-MD5, match the blob's properties (a SAFE ``blob show``); anything else, or a
    show that fails, removes the file and the normal download runs.
    """
    path = Path(local)
    if not local or not path.is_file():  # (callers skip a capture already registered)
        return record, False
    account, container, name, auth = blob
    record, ran = rt.run(record, cmd.blob_show(account, container, name, auth),
                         "Check a capture downloaded before the restart against its blob.")
    props = parse_json(ran.output) if ran.outcome == "ok" else None
    size = path.stat().st_size
    matches = isinstance(props, dict) and props.get("length") == size
    md5 = props.get("md5") if isinstance(props, dict) else None
    if matches and isinstance(md5, str) and md5:
        with path.open("rb") as f:  # streamed: a capture can be gigabytes
            digest = hashlib.file_digest(f, lambda: hashlib.md5(usedforsecurity=False)).digest()
        matches = base64.b64encode(digest).decode() == md5
    if not matches:
        path.unlink(missing_ok=True)  # a partial or foreign file is not evidence
        return record, False
    rt.say(f"[Cloud Orchestrator] Kept {local}, downloaded before the restart ({size} bytes match the blob).")
    return record, True


def _registered(record: TaskRecord, local: str) -> bool:
    """Is ``local`` among the task's registered artifacts (keyed by their path in the workspace)?"""
    return Path(local).name in {Path(p).name for p in record.artifact_hashes}


def _register_download(rt: Runtime, record: TaskRecord, local: str | None = None) -> TaskRecord:
    path = local or record.local_pcap_path or ""
    workspace = open_workspace(Path(record.workspace or "").parent, record.task_id)
    artifact = register_artifact(workspace, path, "evidence", now=rt.now(),
                                 description=f"packet capture {record.task_id} from {record.storage_path}")
    size = Path(path).stat().st_size
    rt.say(f"[Cloud Orchestrator] Download complete: {path} ({size / 1e6:.1f} MB)")
    rt.say("")
    hashes = {**record.artifact_hashes, artifact.path: artifact.sha256}
    return rt.save(record.model_copy(update={"artifact_hashes": hashes}))


def analyse(rt: Runtime, record: TaskRecord, partner: TaskRecord | None = None) -> TaskRecord:
    """ANALYZING: verify every artifact's hash, run the engine through the shell, register its outputs."""
    workspace = open_workspace(Path(record.workspace or "").parent, record.task_id)
    try:
        validate_artifacts(workspace)
        if partner is not None and partner.workspace:
            validate_artifacts(open_workspace(Path(partner.workspace).parent, partner.task_id))
    except ArtifactError as exc:
        return rt.move(record, TaskState.FAILED, failure_reason="artifact_hash_mismatch",
                       error_detail=f"evidence failed verification before analysis: {exc}")
    compare = partner.local_pcap_path if partner is not None else None
    captures = [str(f) for f in instance_files(record)] if record.target_type == "vmss" else \
        [record.local_pcap_path or ""]
    order = compare_order(record.plan) if partner is not None else None
    if order is not None and order[1] == record.local_pcap_path:  # the destination runs it: the source is A
        captures, compare = [order[0]], order[1]
    what = "Comparing captures from both ends of the path." if compare else "Analysing the capture with the PCAP engine."
    outputs: list[str] = []
    before = _files(rt.workdir(record))
    # A scale set: the lead instance's own analysis, then one fleet run over every instance (it writes each
    # instance's report under fleet/captures/ and ranks them); each other instance is analysed on its own
    # only when the fleet could not run.
    fleet: list[str] = []
    pending = list(captures)
    while pending:
        capture = pending.pop(0)
        argv = cmd.engine_run(rt.config.engine_command, capture, str(rt.workdir(record)), compare)
        record, ran = rt.run(record, argv, what)
        if ran.outcome != "ok":
            removed = _remove_partial_outputs(rt, rt.workdir(record), before)
            return rt.move(record, TaskState.FAILED, failure_reason="analysis_failed",
                           error_detail=f"PCAP Engine failed: {ran.error_text()}"
                           + (f" (removed {removed} partial output file(s))" if removed else ""))
        outputs.append(ran.output)
        if len(captures) > 1 and len(outputs) == 1:  # optional: a failed fleet never fails the task
            record, fleet = _fleet(rt, record)
            if fleet:
                pending = []
    outputs += fleet
    if fleet:
        summary = next((m["path"].strip() for m in _WROTE.finditer(outputs[0])
                        if m["path"].strip().endswith("_executive_summary.md")), None)
        if summary:  # the lead summary, which the agent reads first, names the fleet's verdict
            add_fleet_section(Path(summary), rt.workdir(record) / "fleet")
    return _register_outputs(rt, record, Ran("ok", {"output": "\n".join(outputs)}), workspace,
                             mode="compare" if compare else record.analysis_mode)


def _fleet(rt: Runtime, record: TaskRecord) -> tuple[TaskRecord, list[str]]:
    """The engine's fleet report over a scale set's instance captures; its outputs, or a note when it
    could not run (denied at the gate, a plan from before this step, an engine failure)."""
    argv = cmd.engine_fleet(rt.config.engine_command, record.local_pcap_path or "", str(rt.workdir(record)))
    try:
        record, ran = rt.run(record, argv, "Analysing the scale set's captures as one fleet: one report ranking "
                                           "the instances and flagging the one unlike the others.")
    except PlanViolation as exc:
        rt.say(f"[Cloud Orchestrator] fleet report skipped: {exc}")
        return record, []
    if ran.outcome != "ok":
        rt.say(f"[Cloud Orchestrator] fleet report skipped: {ran.error_text()}")
        return record, []
    return record, [ran.output]


def _files(directory: Path) -> set[Path]:
    return set(directory.iterdir()) if directory.is_dir() else set()


def _remove_partial_outputs(rt: Runtime, directory: Path, before: set[Path]) -> int:
    """Delete what a failed engine run left in the task's workspace (seed 000: partial local files are
    cleaned up). They are no evidence and were never registered: removed here, like a partial download,
    while the downloaded capture itself goes through the cleanup plan."""
    left = sorted(_files(directory) - before)
    for path in left:
        path.unlink(missing_ok=True)
    if left:
        rt.say(f"[Cloud Orchestrator] removed partial engine output: {', '.join(p.name for p in left)}")
    return len(left)


def _register_outputs(rt: Runtime, record: TaskRecord, ran: Ran, workspace: object, mode: str | None) -> TaskRecord:
    hashes = dict(record.artifact_hashes)
    semantic = report = fleet = None
    for match in _WROTE.finditer(ran.output):
        path = Path(match["path"].strip())
        if not path.is_file():
            continue
        artifact = register_artifact(workspace, path, "evidence", now=rt.now(),  # type: ignore[arg-type]
                                     description=f"forensics engine output for {record.task_id}")
        hashes[artifact.path] = artifact.sha256
        if path.name == "fleet_report.md":  # the engine's fleet report over several targets
            fleet = str(path)
        elif path.name.startswith("fleet_"):
            continue
        elif path.name.endswith("_semantic.json"):
            semantic = semantic or str(path)
        elif path.name.endswith("_forensic_report.md") and report is None:
            report = str(path)
    record = rt.move(record, TaskState.COMPLETED, semantic_json_path=semantic, report_path=report,
                     artifact_hashes=hashes, analysis_mode=mode or "single")
    wall = None if record.duration_seconds is None else record.duration_seconds / max(rt.config.clock_scale, 1e-9)
    for line in completed_lines(record.task_id, semantic, report, wall,
                                sum(not s.executed for s in record.cleanup_plan[:2]), fleet_report=fleet):
        rt.say(line)
    return record
