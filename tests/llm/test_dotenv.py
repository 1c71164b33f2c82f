"""``.env``: the setup message says "Set GEMINI_API_KEY environment variable or add to .env file", so a ``.env``
in the working directory is read, for the model's variables only, never over the environment, and only
from a file that is the user's alone (issue 24)."""

from __future__ import annotations

from pathlib import Path

from netghost.lab import FakeGemini, FakeTurn
from netghost.llm import DOTENV_VARIABLES, LlmGateway, has_credentials, model_default, model_environment


def _dotenv(directory: Path, text: str, mode: int = 0o600) -> Path:
    path = directory / ".env"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_model_variables_come_from_dotenv_and_nothing_else(tmp_path: Path) -> None:
    _dotenv(tmp_path, 'export GEMINI_API_KEY="AIzaSy-from-dotenv"\nGHOST_MODEL=gemini-2.5-pro  # chosen\n'
                      "GOOGLE_GEMINI_BASE_URL=https://attacker.example/\nAZURE_CLIENT_SECRET=nope\nPATH=/tmp/evil\n")
    env = model_environment({"PATH": "/usr/bin"}, directory=tmp_path)
    assert env["GEMINI_API_KEY"] == "AIzaSy-from-dotenv" and model_default(env) == "gemini-2.5-pro"
    assert has_credentials(env)
    assert "GOOGLE_GEMINI_BASE_URL" not in env and "AZURE_CLIENT_SECRET" not in env and env["PATH"] == "/usr/bin"
    assert set(DOTENV_VARIABLES) >= {"GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"}


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    _dotenv(tmp_path, "GEMINI_API_KEY=from-file\nGOOGLE_CLOUD_PROJECT=p-file\n")
    env = model_environment({"GEMINI_API_KEY": "from-env"}, directory=tmp_path)
    assert env["GEMINI_API_KEY"] == "from-env" and env["GOOGLE_CLOUD_PROJECT"] == "p-file"


def test_no_file_returns_the_environment_itself(tmp_path: Path) -> None:
    env = {"A": "1"}
    assert model_environment(env, directory=tmp_path) is env
    (tmp_path / ".env").mkdir()
    assert model_environment(env, directory=tmp_path) is env


def test_a_file_others_can_write_is_ignored_and_said(tmp_path: Path) -> None:
    _dotenv(tmp_path, "GEMINI_API_KEY=planted\n", mode=0o664)
    said: list[str] = []
    env = model_environment({}, directory=tmp_path, warn=said.append)
    assert "GEMINI_API_KEY" not in env and len(said) == 1 and "chmod 600" in said[0]


def test_the_gateway_sends_the_key_from_dotenv(tmp_path: Path) -> None:
    """The real SDK against the fake server: the request carries the key the file gave."""
    fake = FakeGemini([FakeTurn.say("ok")])
    try:
        _dotenv(tmp_path, "GEMINI_API_KEY=AIzaSy-dotenv-key\n")
        env = model_environment({"GOOGLE_GEMINI_BASE_URL": fake.base_url}, directory=tmp_path)
        gateway = LlmGateway(audit=tmp_path / "llm.jsonl", environ=env, sleeper=lambda _s: None)
        try:
            gateway.generate("gemini-2.5-flash", "hello", None, purpose="test")
        finally:
            gateway.close()
        assert fake.headers and {k.lower(): v for k, v in fake.headers[0].items()}["x-goog-api-key"] == \
            "AIzaSy-dotenv-key"
    finally:
        fake.close()
