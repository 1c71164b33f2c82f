"""The lab ARM endpoint of one lab state, and the environment that sends the real azure-cli to it.

:func:`start_lab_arm` (which the resident lab process calls on its first ``arm`` request) makes the
lab's certificates, starts the loopback proxy on an ephemeral port and answers its settings. The
real az reaches it with no code path changed, through its standard settings only (:func:`az_environment`):
``HTTPS_PROXY``/``HTTP_PROXY`` (both spellings; ``NO_PROXY`` empty, so nothing bypasses the lab),
``REQUESTS_CA_BUNDLE`` (the lab's CA alone), and an ``AZURE_CONFIG_DIR`` inside the lab state
(``<state>/arm/azure``: its login, command index and settings never touch the user's ``~/.azure``).
:func:`az_login` signs that config dir in with ``az login --identity``, once per lab state.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from netghost.errors import LabError
from netghost.lab.arm._certs import ensure_certificates
from netghost.lab.arm._http import HttpRequest, HttpResponse, LabHttpServer
from netghost.lab.arm._router import ArmRouter

__all__ = ["ARM_DIR", "LabArm", "az_environment", "az_login", "start_lab_arm"]

ARM_DIR = "arm"
_CONFIG = """[core]
collect_telemetry = no
no_color = true
first_run = no
survey_message = no
[output]
show_survey_link = no
"""


class LabArm:
    """A running lab ARM endpoint (see the module docstring)."""

    def __init__(self, state_dir: Path, port: int = 0, on_request: Callable[[], None] | None = None) -> None:
        self.arm_dir = state_dir / ARM_DIR
        certs = ensure_certificates(self.arm_dir)
        self.config_dir = self.arm_dir / "azure"
        self.config_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        config = self.config_dir / "config"
        if not config.exists():
            config.write_text(_CONFIG, encoding="utf-8")
        access = logging.getLogger(f"netghost.lab.arm.access.{id(self)}")
        access.propagate = False
        access.setLevel(logging.INFO)
        handler = logging.FileHandler(self.arm_dir / "access.log", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        access.addHandler(handler)
        self._access = access
        router = ArmRouter(state_dir, self.arm_dir)

        def routed(request: HttpRequest) -> HttpResponse:
            if on_request is not None:
                on_request()  # lab ARM's calls keep the resident lab alive, as the shims' do
            return router(request)

        self._server = LabHttpServer(routed, certs, router.known_host, access, port)
        self._server.start()
        self._settings = {"port": self._server.port, "proxy": f"http://127.0.0.1:{self._server.port}",
                          "ca_bundle": str(certs.ca), "config_dir": str(self.config_dir), "arm_dir": str(self.arm_dir)}

    def settings(self) -> dict[str, Any]:
        """Where the endpoint listens and what a client needs (proxy URL, CA bundle, config dir)."""
        return dict(self._settings)

    def close(self) -> None:
        self._server.close()
        for handler in list(self._access.handlers):
            handler.close()
            self._access.removeHandler(handler)


def start_lab_arm(state_dir: Path, on_request: Callable[[], None] | None = None) -> LabArm:
    """Start the lab ARM endpoint of ``state_dir`` (the resident lab process calls this; ``on_request`` is
    called on every request it serves).

    Raises:
        LabError: the certificates or the listener cannot be made.
    """
    try:
        return LabArm(Path(state_dir), on_request=on_request)
    except OSError as exc:
        raise LabError(f"lab ARM cannot start: {exc}", path=Path(state_dir)) from exc


def az_environment(settings: Mapping[str, Any], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: nothing) plus what sends the real az to lab ARM and keeps it there."""
    proxy = str(settings["proxy"])
    env = dict(base or {})
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        env[name] = proxy
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(name, None)
    env.update({"NO_PROXY": "", "no_proxy": "", "REQUESTS_CA_BUNDLE": str(settings["ca_bundle"]),
                "AZURE_CONFIG_DIR": str(settings["config_dir"]), "AZURE_CORE_COLLECT_TELEMETRY": "false",
                "AZURE_CORE_NO_COLOR": "true"})
    for name in ("CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "AZURE_CLI_DISABLE_CONNECTION_VERIFICATION"):
        env.pop(name, None)
    return env


_PROFILE_FILES = ("azureProfile.json", "commandIndex.json", "versionCheck.json")


def az_login(az: str, env: Mapping[str, str], subscription: str, timeout_s: float = 120.0,
             template: Path | None = None) -> None:
    """``az login --identity`` into ``env``'s config dir, unless it is already signed in to ``subscription``.

    A managed identity's login leaves only its profile on disk (az asks the token endpoint for a token on
    every call), so a profile made by one real login can sign in other lab config dirs of the same
    subscription: ``template`` is where that profile is kept (copied from, or saved to after a login).

    Raises:
        LabError: the login failed (its stderr says why).
    """
    config = Path(env["AZURE_CONFIG_DIR"])
    if _signed_in(config, subscription):
        return
    if template is not None and _signed_in(template, subscription):
        for name in _PROFILE_FILES:
            if (template / name).exists():
                shutil.copyfile(template / name, config / name)
        return
    try:
        proc = subprocess.run([az, "login", "--identity", "-o", "none"], env={**os.environ, **env}, capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabError(f"az login --identity against lab ARM failed: {exc}") from exc
    if proc.returncode != 0:
        raise LabError(f"az login --identity against lab ARM failed (exit {proc.returncode}): {proc.stderr.strip()}")
    if template is not None:
        template.mkdir(parents=True, exist_ok=True)
        for name in _PROFILE_FILES:
            if (config / name).exists():
                shutil.copyfile(config / name, template / name)


def _signed_in(config: Path, subscription: str) -> bool:
    try:
        data = json.loads((config / "azureProfile.json").read_text(encoding="utf-8-sig"))
    except (OSError, json.JSONDecodeError):
        return False
    return any(s.get("id") == subscription for s in data.get("subscriptions", []))
