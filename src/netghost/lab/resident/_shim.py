"""The lab's ``az`` and probe shims: a tiny client of the resident lab, with the old path as fallback.

``bin/az`` (and ``bin/ping`` ...) run ``python -I -S <this file> TOOL MODULE ARGS...``: no site, no
package import, only ``_socket``, so a call costs one small interpreter start (~15 ms here) plus the
server's work, instead of a process that imports the simulator and loads the world (~0.5 s). The
request carries what the simulated program may depend on: its arguments, the ``NETGHOST_*`` and
``AZURE_*`` variables, the working directory and umask (``storage blob download --file`` writes where
and how the real az would), and stdin when it is a file or already-written pipe data (never waiting
on a terminal or an open pipe). The answer is the exit code and the exact stdout and stderr bytes.

When no resident lab answers (none started, the server is gone) the shim
``exec``s ``python -m MODULE ARGS...``: the per-process simulator, same answers, slower. A server
that dies *during* a call is not retried (the call may have changed the lab): the shim says so and
exits 1.

This file is also the one definition of the wire format (:func:`encode`, :func:`decode_fields`), which
the server imports; so it imports nothing from ``netghost``. Frames: ``NGL1``, a 4-byte big-endian
length, then fields (a 1-byte tag, a 4-byte length, the bytes).
"""

import _socket
import os
import sys
from _collections_abc import Mapping

MAGIC = b"NGL1"
SOCKET_NAME = ".resident.sock"
MAX_FRAME = 1 << 30
"""Largest frame either side accepts (a blob downloaded to stdout travels in one)."""
FORWARDED_PREFIXES = ("NETGHOST_", "AZURE_")
"""The environment the simulated programs read (the lab's settings; az's storage account, auth mode ...)."""
_UNIX_PATH_MAX = 107


def encode(fields: list[tuple[bytes, bytes]]) -> bytes:
    """One frame from ``[(tag, bytes), ...]``."""
    body = b"".join(tag + len(data).to_bytes(4, "big") + data for tag, data in fields)
    return MAGIC + len(body).to_bytes(4, "big") + body


def decode_fields(body: bytes) -> list[tuple[bytes, bytes]]:
    """``[(tag, bytes), ...]`` from a frame's body; ValueError when it is malformed."""
    fields: list[tuple[bytes, bytes]] = []
    pos = 0
    while pos < len(body):
        if pos + 5 > len(body):
            raise ValueError("truncated field header")
        tag = body[pos:pos + 1]
        size = int.from_bytes(body[pos + 1:pos + 5], "big")
        pos += 5
        if pos + size > len(body):
            raise ValueError("truncated field")
        fields.append((tag, body[pos:pos + size]))
        pos += size
    return fields


def read_frame(sock: _socket.socket) -> bytes:
    """The body of one frame from ``sock``; ValueError on a bad magic, size or early end."""
    head = _read_exact(sock, 8)
    if head[:4] != MAGIC:
        raise ValueError("not a lab frame")
    size = int.from_bytes(head[4:], "big")
    if size > MAX_FRAME:
        raise ValueError("frame too large")
    return _read_exact(sock, size)


def _read_exact(sock: _socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ValueError("connection closed mid-frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def socket_path(state_dir: str) -> str:
    """Where the resident lab of ``state_dir`` listens."""
    return os.path.join(state_dir, SOCKET_NAME)


def _stdin_bytes() -> bytes:
    """stdin when it is a file, or pipe data already written and closed; never waits."""
    try:
        st = os.fstat(0)
    except OSError:
        return b""
    mode = st.st_mode & 0o170000
    if mode == 0o100000:  # a regular file
        return _drain(blocking=True)
    if mode == 0o010000:  # a pipe: take what is there now, never wait for a writer
        return _drain(blocking=False)
    return b""


def _drain(blocking: bool) -> bytes:
    chunks: list[bytes] = []
    try:
        if not blocking:
            os.set_blocking(0, False)
        while True:
            chunk = os.read(0, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except (BlockingIOError, OSError):
        pass
    finally:
        if not blocking:
            try:  # noqa: SIM105  contextlib would cost every call an import
                os.set_blocking(0, True)
            except OSError:
                pass
    return b"".join(chunks)


def request_fields(tool: str, args: list[str], environ: Mapping[str, str], *, cwd: str, umask: int,
                   stdin: bytes) -> list[tuple[bytes, bytes]]:
    """The request for one call of ``tool`` (bytes fields, in a fixed order)."""
    fields = [(b"t", tool.encode())]
    fields += [(b"a", arg.encode("utf-8", "surrogateescape")) for arg in args]
    for name, value in sorted(environ.items()):
        if name.startswith(FORWARDED_PREFIXES):
            fields.append((b"e", (name + "=" + value).encode("utf-8", "surrogateescape")))
    fields += [(b"c", cwd.encode("utf-8", "surrogateescape")), (b"u", str(umask).encode()), (b"i", stdin)]
    return fields


def unix_address(path: str) -> tuple[str, int]:
    """``(address, fd)`` to bind or connect ``path`` by: the path itself when it fits an AF_UNIX address
    (107 bytes), else ``/proc/self/fd/N/NAME`` through an ``O_PATH`` descriptor of its directory, which
    the caller closes once bound or connected (``fd`` -1 when there is none). A lab kept under a deep
    folder (a CI temp dir, a long home) still gets its resident lab on Linux.

    Raises:
        OSError: the path is too long and this system has no ``O_PATH`` (the per-process path remains).
    """
    if len(os.fsencode(path)) <= _UNIX_PATH_MAX:
        return path, -1
    o_path = getattr(os, "O_PATH", 0)
    if not o_path:
        raise OSError("socket path too long")
    head, name = os.path.split(path)
    fd = os.open(head or ".", o_path | os.O_DIRECTORY)
    return "/proc/self/fd/" + str(fd) + "/" + name, fd


def connect(path: str, timeout: float | None = None) -> _socket.socket:
    """A connection to the resident lab at ``path``.

    Raises:
        OSError: no server there (nothing was sent): the caller may take the per-process path.
    """
    address, fd = unix_address(path)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(address)
    except OSError:
        sock.close()
        raise
    finally:
        if fd >= 0:
            os.close(fd)
    return sock


def exchange(sock: _socket.socket, fields: list[tuple[bytes, bytes]]) -> tuple[int, bytes, bytes]:
    """Send one request on a connected socket and read ``(exit code, stdout, stderr)``; closes it.

    Raises:
        ValueError: the server went away or answered garbage after the request was sent.
    """
    try:
        sock.sendall(encode(fields))
        body = read_frame(sock)
    except OSError as exc:
        raise ValueError(str(exc) or type(exc).__name__) from exc
    finally:
        sock.close()
    code, out, err = 1, b"", b""
    for tag, data in decode_fields(body):
        if tag == b"x":
            code = int(data)
        elif tag == b"o":
            out = data
        elif tag == b"r":
            err = data
    return code, out, err


def _write(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def main(argv: list[str]) -> int:
    """``<this file> TOOL MODULE ARGS...``: answer through the resident lab, else exec the module."""
    tool, module, args = argv[1], argv[2], argv[3:]
    try:
        sock = connect(socket_path(os.environ.get("NETGHOST_LAB_STATE", "")))
    except OSError:
        os.execv(sys.executable, [sys.executable, "-m", module, *args])
    umask = os.umask(0o022)
    os.umask(umask)
    try:
        cwd = os.getcwd()
    except OSError:  # a deleted working directory: relative paths cannot be resolved anyway
        cwd = ""
    try:
        code, out, err = exchange(sock, request_fields(tool, args, os.environ, cwd=cwd, umask=umask,
                                                       stdin=_stdin_bytes()))
    except ValueError as exc:
        _write(2, ("ERROR: lab: the resident lab stopped during the call (" + str(exc) + ")\n").encode())
        return 1
    _write(1, out)
    _write(2, err)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
