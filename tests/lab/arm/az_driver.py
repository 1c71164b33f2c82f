"""Run many real azure-cli commands in one process: ``<azure-cli's python> az_driver.py`` (no netghost import).

Reads one JSON request per line on stdin (``{"argv": [...], "env": {...}, "cwd": "..."}``, the argv without the
leading ``az``; ``env`` is set in ``os.environ`` before the command: the proxy, CA bundle and config dir of the
lab it talks to) and writes one JSON answer per line on stdout (``{"code": int, "stdout": str, "stderr": str}``). Each command is a fresh
``get_default_cli().invoke(argv)``, the way azure-cli's own scenario tests run commands in-process: the
same parser, validators, SDK clients, HTTP pipeline and output formatting as the ``az`` program, without a
new interpreter and the imports per call (~1.5 s each here). ``sys.stdout``/``sys.stderr`` are switched to
per-call buffers through one stream object each, so loggers created on the first call write into the
current call's buffer. A test compares this driver with the ``az`` program on a sample of commands.
"""

import io
import json
import os
import sys


class _Switch(io.TextIOBase):
    """A text stream whose writes go to the current target (loggers keep a reference to this object)."""

    def __init__(self) -> None:
        self.target = io.StringIO()

    def write(self, text: str) -> int:
        return self.target.write(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"


def main() -> int:
    requests = sys.stdin
    answers = sys.stdout
    out, err = _Switch(), _Switch()
    sys.stdout, sys.stderr = out, err
    from azure.cli.core import get_default_cli  # after the streams are switched

    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        argv = request["argv"]
        os.environ.update(request.get("env") or {})
        if request.get("cwd"):
            os.chdir(request["cwd"])
        out.target, err.target = io.StringIO(), io.StringIO()
        try:
            code = get_default_cli().invoke(argv, out_file=out)
        except SystemExit as exc:  # argparse's usage errors exit 2
            code = exc.code if isinstance(exc.code, int) else 1
        answers.write(json.dumps({"code": code, "stdout": out.target.getvalue(),
                                  "stderr": err.target.getvalue()}) + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
