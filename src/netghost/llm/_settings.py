"""Which model, which backend, which client: read once here for the agent and the forensics narrative.

Credentials and endpoints are google-genai's own settings, never ours: ``GEMINI_API_KEY`` or
``GOOGLE_API_KEY``; Vertex AI with ``GOOGLE_GENAI_USE_VERTEXAI=true`` plus ``GOOGLE_CLOUD_PROJECT`` /
``GOOGLE_CLOUD_LOCATION`` (or an API key: Vertex express mode); ``GOOGLE_GEMINI_BASE_URL`` /
``GOOGLE_VERTEX_BASE_URL`` redirect the SDK (the tests' fake server). The model is ``GHOST_MODEL``.

:func:`model_environment` adds the model's variables from a ``.env`` file in the working directory (the
setup message has always promised it): only the credentials and the model choice, never an endpoint
(a ``.env`` in a directory someone else controls must not redirect the conversation), never over a
variable the environment already sets, and only from a file the user owns that nobody else can write.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from google.genai import Client
    from google.genai.types import HttpOptions

__all__ = ["DEFAULT_MODEL", "DOTENV_VARIABLES", "MODEL_ENV", "ClientFactory", "backend", "default_client_factory",
           "has_credentials", "model_default", "model_environment"]

DEFAULT_MODEL = "gemini-2.5-flash"
MODEL_ENV = "GHOST_MODEL"
_TRUE = {"1", "true", "yes", "on"}
DOTENV_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT",
                    "GOOGLE_CLOUD_LOCATION", MODEL_ENV)
"""What a ``.env`` file may set: the model's credentials and the model choice (no base URL, nothing else)."""


def _to_stderr(text: str) -> None:
    print(f"ghost-agent: {text}", file=sys.stderr)


def model_environment(environ: Mapping[str, str] | None = None, *, directory: str | os.PathLike[str] | None = None,
                      warn: Callable[[str], None] = _to_stderr) -> Mapping[str, str]:
    """``environ`` (default: the process environment) plus :data:`DOTENV_VARIABLES` from ``directory/.env``.

    The environment wins over the file. The file is read with python-dotenv (its quoting, ``export``
    prefixes and comments) and only when it is a regular file owned by this user and not writable by group
    or others; otherwise it is ignored and ``warn`` says why. Without a usable file (the common case) ``environ``
    itself is returned, so the SDK keeps reading the process environment on its own.
    """
    env = os.environ if environ is None else environ
    path = Path(directory if directory is not None else os.getcwd()) / ".env"
    try:
        info = path.stat()
    except OSError:
        return env
    if not stat.S_ISREG(info.st_mode):
        return env
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        warn(f"{path} ignored: it must belong to you and be writable by you alone (chmod 600 {path})")
        return env
    from dotenv import dotenv_values  # noqa: PLC0415  only when a .env exists

    found = {name: value for name, value in dotenv_values(path).items()
             if name in DOTENV_VARIABLES and value and not env.get(name)}
    return {**env, **found} if found else env

ClientFactory = Callable[["HttpOptions"], "Client"]
"""Builds the SDK client from the gateway's HTTP options (timeout and the request hook it needs to hash
the exact bytes sent); a factory that sets its own base URL should ``model_copy`` the options it gets."""


def model_default(environ: Mapping[str, str] | None = None) -> str:
    """The model to use when none is given: ``GHOST_MODEL``, else ``gemini-2.5-flash``."""
    env = os.environ if environ is None else environ
    return env.get(MODEL_ENV, "").strip() or DEFAULT_MODEL


def backend(environ: Mapping[str, str] | None = None) -> Literal["gemini", "vertex"] | None:
    """``"vertex"`` or ``"gemini"`` as google-genai would choose from the environment, ``None`` without credentials."""
    env = os.environ if environ is None else environ
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in _TRUE:
        return "vertex" if env.get("GOOGLE_CLOUD_PROJECT") or env.get("GOOGLE_API_KEY") else None
    return "gemini" if env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY") else None


def has_credentials(environ: Mapping[str, str] | None = None) -> bool:
    """True when the environment names a Gemini API key or a Vertex AI project (or express-mode key).

    Vertex with a project still needs Application Default Credentials at call time; those are the SDK's
    business and fail as an :class:`~netghost.errors.LlmError` on the first call.
    """
    return backend(environ) is not None


def default_client_factory(environ: Mapping[str, str] | None = None) -> ClientFactory:
    """A factory building ``google.genai.Client`` from ``environ`` (default: the process environment).

    With the process environment the SDK reads every setting itself (keys, Vertex switch, project,
    location, base URLs), so nothing is overridden. With an explicit mapping the same settings are read
    from it and passed to the SDK as arguments.
    """

    def build(options: HttpOptions) -> Client:
        from google import genai  # noqa: PLC0415  the SDK loads only when a call is made

        if environ is None or environ is os.environ:
            return genai.Client(http_options=options)
        kwargs: dict[str, Any] = {}
        if backend(environ) == "vertex":
            base = environ.get("GOOGLE_VERTEX_BASE_URL")
            if environ.get("GOOGLE_CLOUD_PROJECT"):
                kwargs = {"project": environ["GOOGLE_CLOUD_PROJECT"],
                          "location": environ.get("GOOGLE_CLOUD_LOCATION") or "us-central1"}
            else:  # Vertex express mode: an API key, no project
                kwargs = {"api_key": environ.get("GOOGLE_API_KEY")}
            kwargs["vertexai"] = True
        else:
            base = environ.get("GOOGLE_GEMINI_BASE_URL")
            kwargs = {"api_key": environ.get("GEMINI_API_KEY") or environ.get("GOOGLE_API_KEY"), "vertexai": False}
        if base:
            options = options.model_copy(update={"base_url": base})
        return genai.Client(http_options=options, **kwargs)

    return build
