"""The model and credential settings, read in one place for the agent and the forensics narrative."""

from __future__ import annotations

import pytest

from netghost.llm import DEFAULT_MODEL, MODEL_ENV, backend, has_credentials, model_default


def test_model_default() -> None:
    assert DEFAULT_MODEL == "gemini-2.5-flash" and MODEL_ENV == "GHOST_MODEL"
    assert model_default({}) == "gemini-2.5-flash"
    assert model_default({"GHOST_MODEL": "gemini-2.5-pro"}) == "gemini-2.5-pro"
    assert model_default({"GHOST_MODEL": "  "}) == "gemini-2.5-flash"


def test_model_default_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert model_default() == DEFAULT_MODEL
    monkeypatch.setenv("GHOST_MODEL", "m")
    assert model_default() == "m"


@pytest.mark.parametrize(("env", "expected"), [
    ({}, None),
    ({"GEMINI_API_KEY": "k"}, "gemini"),
    ({"GOOGLE_API_KEY": "k"}, "gemini"),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"}, "vertex"),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_API_KEY": "k"}, "vertex"),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "true"}, None),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GEMINI_API_KEY": "k"}, None),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "false", "GEMINI_API_KEY": "k"}, "gemini"),
])
def test_backend_and_credentials(env: dict[str, str], expected: str | None) -> None:
    assert backend(env) == expected
    assert has_credentials(env) is (expected is not None)


def test_has_credentials_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert has_credentials() is False  # the test environment is scrubbed
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert has_credentials() is True
