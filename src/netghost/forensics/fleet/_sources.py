"""The fleet's SOURCE arguments, expanded into one :class:`Source` per capture.

A SOURCE is a capture file, a folder (its capture files, recursively), a glob (``caps/vm*.pcap``), an
``az://container/prefix`` (every capture blob under the prefix, through fsspec and ``adlfs``) or a Blob
URL ``https://ACCOUNT.blob.core.windows.net/container/prefix``. Credentials never come from the command
line: ``adlfs`` reads ``AZURE_STORAGE_CONNECTION_STRING`` / ``AZURE_STORAGE_ACCOUNT_NAME`` with
``AZURE_STORAGE_ACCOUNT_KEY`` or ``AZURE_STORAGE_SAS_TOKEN``, else ``DefaultAzureCredential`` (``az
login``, a managed identity), as the Azure tools do. A URL carrying a SAS (``sig=``) is refused, so
a secret never lands in a shell history, an audit record or a report.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from netghost.errors import CaptureFormatError
from netghost.forensics.outputs import CAPTURE_EXTS

__all__ = ["Source", "expand_sources", "open_filesystem"]

_BLOB_HOST = re.compile(r"^(?P<account>[a-z0-9]{3,24})\.blob\.core\.windows\.net$")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Source:
    """One capture of the fleet.

    Attributes:
        id: unique, file-name-safe name of the capture in the fleet (its outputs' folder).
        uri: a local path, or ``az://container/blob``.
        name: the capture's file name (what its own report shows).
        account: the storage account of a Blob URL (None: from the environment, or a local file).
    """

    id: str
    uri: str
    name: str
    account: str | None = None

    @property
    def remote(self) -> bool:
        """True for a blob (read through fsspec on the worker)."""
        return self.uri.startswith("az://")


def _is_capture(name: str) -> bool:
    low = name.lower()
    return any(low.endswith(ext) for ext in CAPTURE_EXTS if ext != ".gz") or any(
        low.endswith(ext + ".gz") for ext in CAPTURE_EXTS if ext != ".gz")


def open_filesystem(account: str | None = None) -> Any:
    """An ``adlfs`` file system authenticated from the environment (see the module docstring)."""
    import fsspec  # noqa: PLC0415  only a fleet with blob sources pays for it

    kw: dict[str, Any] = {}
    if account is not None:
        kw["account_name"] = account
    return fsspec.filesystem("az", **kw)


def _blob_sources(spec: str) -> tuple[str | None, str]:
    """(account, ``container/prefix``) of an ``az://`` or ``https://ACCOUNT.blob.core.windows.net`` SOURCE.

    Raises:
        CaptureFormatError: a URL with a SAS or an unknown host.
    """
    parts = urlsplit(spec)
    if "sig=" in parts.query:
        raise CaptureFormatError(f"{parts.scheme}://{parts.netloc}{parts.path}: a SAS on the command line is refused; "
                                 "put it in AZURE_STORAGE_SAS_TOKEN (or use az login)", path=parts.path)
    if parts.scheme in ("az", "abfs"):
        return None, f"{parts.netloc}{parts.path}".strip("/")
    m = _BLOB_HOST.match(parts.netloc)
    if m is None:
        raise CaptureFormatError(f"{spec}: not a Blob Storage URL (https://ACCOUNT.blob.core.windows.net/container/...)",
                                 path=spec)
    return m.group("account"), parts.path.strip("/")


def _expand_blob(spec: str) -> list[tuple[str, str, str | None]]:
    account, root = _blob_sources(spec)
    fs = open_filesystem(account)
    if "/" in root and _is_capture(root) and fs.isfile(root):
        return [(f"az://{root}", Path(root).name, account)]
    found = sorted(p for p in fs.find(root) if _is_capture(p))
    prefix = root.rstrip("/") + "/"
    return [(f"az://{p}", p[len(prefix):] if p.startswith(prefix) else Path(p).name, account) for p in found]


NEXT_STEP = "give capture files, folders of captures, a glob in quotes ('caps/*.pcap') or az://container/prefix"


def _expand_local(spec: str) -> list[tuple[str, str, str | None]]:
    """Why a missing path is an error here, not a failed capture: a folder or file that does not exist
    is a typo in the command, like a folder with no capture in it, and a report of "1 failed" for it
    would hide that nothing was analysed at all."""
    p = Path(spec)
    if p.is_dir():
        return [(str(f), str(f.relative_to(p)), None) for f in sorted(p.rglob("*")) if f.is_file() and _is_capture(f.name)]
    if p.exists():
        return [(str(p), p.name, None)]  # a file that is not a capture is reported by its analysis
    if not glob.has_magic(spec):
        raise CaptureFormatError(f"{spec}: no such file or folder; {NEXT_STEP}", path=spec)
    return [(m, Path(m).name, None) for m in sorted(glob.glob(spec, recursive=True)) if Path(m).is_file()]


def expand_sources(specs: list[str]) -> list[Source]:
    """One :class:`Source` per capture named by ``specs``, in order, each capture once.

    Raises:
        CaptureFormatError: a SOURCE does not exist or matches nothing, or is a Blob URL with a SAS or an
            unknown host (the message ends with what to give instead).
    """
    out: list[Source] = []
    seen_uri: set[str] = set()
    used: set[str] = set()
    for spec in specs:
        remote = spec.startswith(("az://", "abfs://", "https://", "http://"))
        found = _expand_blob(spec) if remote else _expand_local(spec)
        if not found:
            raise CaptureFormatError(f"{spec}: no capture files found there (.pcap, .pcapng, .cap, .dmp, optionally "
                                     f".gz); {NEXT_STEP}", path=spec)
        for uri, rel, account in found:
            if uri in seen_uri:
                continue
            seen_uri.add(uri)
            base = _SAFE.sub("_", rel.replace("/", "__")).strip("._") or "capture"
            cid, k = base, 2
            while cid in used:
                cid, k = f"{base}-{k}", k + 1
            used.add(cid)
            out.append(Source(id=cid, uri=uri, name=Path(uri).name, account=account))
    return out
