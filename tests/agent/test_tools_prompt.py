"""The six declarations, the system prompt, and the Gemini brain's translation of turns."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from google.genai import errors as genai_errors
from google.genai import types

from netghost.agent._prompt import SEED_BLOCKS, system_prompt
from netghost.agent._tools import HYPOTHESIS_ARGS, TOOL_DECLARATIONS
from netghost.agent.brains import BrainError, GeminiBrain, Message, build_config
from netghost.contracts import (
    TOOL_NAMES,
    CancelTaskArgs,
    CaptureTrafficArgs,
    CheckTaskArgs,
    CleanupTaskArgs,
    CompleteInvestigationArgs,
    RunShellCmdArgs,
)
from tests.conftest import REPO_ROOT

SEED = (REPO_ROOT.parent / "shared" / "seeds" / "001_96f30a5e2aead297.txt")
MODELS = {"run_shell_cmd": RunShellCmdArgs, "capture_traffic": CaptureTrafficArgs, "check_task": CheckTaskArgs,
          "cancel_task": CancelTaskArgs, "cleanup_task": CleanupTaskArgs,
          "complete_investigation": CompleteInvestigationArgs}


def test_six_declarations_with_the_seeds_names_in_order() -> None:
    assert tuple(d["name"] for d in TOOL_DECLARATIONS) == TOOL_NAMES


@pytest.mark.parametrize("decl", TOOL_DECLARATIONS, ids=lambda d: d["name"])
def test_parameters_match_the_contract_and_carry_no_noise(decl: dict[str, Any]) -> None:
    schema = decl["parameters_json_schema"]
    model = MODELS[decl["name"]]
    assert set(schema["properties"]) - set(HYPOTHESIS_ARGS) == set(model.model_fields)
    required = {n for n, f in model.model_fields.items() if f.is_required()}
    assert set(schema["required"]) == required
    text = json.dumps(schema)
    assert '"anyOf"' not in text and '"title"' not in text and '"$ref"' not in text


def test_the_sdk_accepts_the_declarations() -> None:
    config = build_config("prompt")
    assert config.automatic_function_calling is not None and config.automatic_function_calling.disable
    assert config.tools is not None
    tool = config.tools[0]
    assert isinstance(tool, types.Tool) and tool.function_declarations is not None
    assert [d.name for d in tool.function_declarations] == list(TOOL_NAMES)


@pytest.mark.skipif(not SEED.exists(), reason="the seeds are not beside the repository")
def test_the_prompt_holds_the_seeds_four_blocks_verbatim() -> None:
    seed = SEED.read_text(encoding="utf-8")
    section = seed[seed.index("## 2. System Prompt Design"):seed.index("## 3. Startup")]
    assert list(SEED_BLOCKS) == re.findall(r"```\n(.*?)```", section, flags=re.S)


def test_the_prompt_points_at_the_audit_dir_and_says_whether_resumed() -> None:
    text = system_prompt("/var/audit", is_resume=True)
    for heading in ("INVESTIGATION FRAMEWORK:", "TOOL DECISION RULES:", "FILE READ RESTRICTION:",
                    "LOCAL PROBE CONTEXT WARNING:", "TARGETED QUERY RULE:", "JMESPATH SAFETY RULES:",
                    "DENIAL RECOVERY RULES:", "EVIDENCE HIERARCHY", "CONFLICT RESOLUTION PROTOCOL:",
                    "RESUME RE-VALIDATION PROTOCOL:", "HYPOTHESIS REPORTING:"):
        assert heading in text
    assert "./audit/" not in text and "/var/audit/" in text and "is_resume = True" in text


def _reply(parts: list[dict[str, Any]]) -> types.GenerateContentResponse:
    return types.GenerateContentResponse.model_validate(
        {"candidates": [{"content": {"role": "model", "parts": parts}, "finish_reason": "STOP"}],
         "usage_metadata": {"prompt_token_count": 12, "candidates_token_count": 9, "total_token_count": 21}})


def test_gemini_brain_translates_history_and_turns() -> None:
    seen: list[tuple[str, list[types.Content], types.GenerateContentConfig]] = []

    def generate(model: str, contents: list[types.Content], config: types.GenerateContentConfig) -> Any:
        seen.append((model, contents, config))
        return _reply([{"text": "Checking."},
                       {"function_call": {"name": "run_shell_cmd", "args": {"command": "dig x", "reasoning": "r"}},
                        "thought_signature": b"sig"}])

    brain = GeminiBrain("gemini-2.5-flash", generate)
    turn = brain.next_turn([Message.user_text("help")], system_prompt="SP")
    assert turn.text == "Checking." and turn.calls[0].args == {"command": "dig x", "reasoning": "r"}
    assert turn.usage == {"prompt_tokens": 12, "output_tokens": 9, "total_tokens": 21}
    again = Message.from_json(json.loads(json.dumps(turn.message().to_json())))
    brain.next_turn([Message.user_text("help"), again], system_prompt="SP")
    sent = seen[1][1][1].parts
    assert sent is not None and sent[1].thought_signature == b"sig"
    assert seen[0][2].system_instruction == "SP"


def test_gemini_errors_become_brain_errors() -> None:
    def generate(model: str, contents: Any, config: Any) -> Any:
        raise genai_errors.ClientError(429, {"error": {"code": 429, "message": "slow down",
                                                       "status": "RESOURCE_EXHAUSTED"}})

    with pytest.raises(BrainError) as info:
        GeminiBrain("m", generate).next_turn([Message.user_text("x")], system_prompt="SP")
    assert info.value.code == 429 and info.value.status == "RESOURCE_EXHAUSTED"


def test_an_empty_answer_is_a_brain_error() -> None:
    with pytest.raises(BrainError, match="no candidate"):
        GeminiBrain("m", lambda *a: types.GenerateContentResponse()).next_turn([], system_prompt="SP")
