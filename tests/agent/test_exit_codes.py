"""One exit-code table: distinct values, every code explained in --help and in the agent README, and the
gateway's failure classes mapped to the right one."""

from __future__ import annotations

import re
from pathlib import Path

import netghost.agent
from netghost.agent._exit_codes import MEANINGS, ExitCode, describe_exit_codes, exit_code_for
from netghost.agent.cli import build_parser
from netghost.errors import BrainError
from netghost.llm import FAILURES, REPLY_FAILURES

README = Path(netghost.agent.__file__).parent / "README.md"


def test_codes_are_distinct_and_each_has_a_meaning() -> None:
    assert len({c.value for c in ExitCode}) == len(ExitCode)
    assert set(MEANINGS) == set(ExitCode)


def test_help_and_readme_show_the_same_table() -> None:
    help_text = build_parser().format_help()
    assert describe_exit_codes() in help_text
    rows = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", README.read_text(encoding="utf-8"), re.MULTILINE))
    assert {int(k): v.replace("`", "") for k, v in rows.items()} == {c.value: m for c, m in MEANINGS.items()}


def test_a_reply_that_came_but_cannot_be_used_is_4_and_an_api_failure_3() -> None:
    for failure in FAILURES:
        code = exit_code_for(BrainError("x", failure=failure))
        assert code == (ExitCode.MODEL_REPLY if failure in REPLY_FAILURES else ExitCode.MODEL_API), failure
    assert exit_code_for(BrainError("no class")) == ExitCode.MODEL_API
