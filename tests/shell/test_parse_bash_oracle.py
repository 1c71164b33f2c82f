"""bash itself is the oracle: whatever parse_command accepts as one plain command must give the
argv bash would give. If the parser ever accepted an expansion, bash's argv would differ.

Flagged words (unquoted glob, brace, tilde, backslash) are compared too, with globbing and brace
expansion off and HOME="~" so tilde expansion is the identity: the argv that runs after a human
approves must still be the one bash would build. bash runs with PATH pointing nowhere and an empty
temporary cwd, so even a parser bug could only reach shell builtins inside that directory.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netghost.shell.classify._parse import ParsedCommand, parse_command

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

_TEXT = st.text(alphabet=st.sampled_from(list("ab -_.:/=@%,+$`\\\"'*?[]{}~#;&|<>()!^")), max_size=8)
_SEGMENT = st.one_of(
    st.text(alphabet=st.sampled_from(list("abcXYZ019-_./:=@%,+")), min_size=1, max_size=6),
    _TEXT.map(lambda t: "'" + t.replace("'", "") + "'"),
    _TEXT.map(lambda t: '"' + t + '"'),
    st.sampled_from(list("ab$`\"'\\ #")).map(lambda c: "\\" + c),
    st.sampled_from([" ", "  "]),
    _TEXT,  # raw, unquoted metacharacters: mostly refused, compared when accepted
)


def _bash_argv(text: str, cwd: Path) -> tuple[str, ...] | None:
    assert BASH is not None
    proc = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", "set -f +B\nprintf '%s\\0' " + text],
        capture_output=True, env={"PATH": "/nonexistent", "HOME": "~"}, cwd=cwd, timeout=5, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return None
    return tuple(proc.stdout.decode("utf-8", "replace").split("\0")[:-1])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.lists(_SEGMENT, min_size=1, max_size=8))
def test_accepted_commands_have_the_argv_bash_gives(tmp_path_factory: pytest.TempPathFactory, segments: list[str]) -> None:
    text = "ping " + "".join(segments)
    parsed = parse_command(text)
    if not isinstance(parsed, ParsedCommand):
        return  # refused: never runs, nothing to compare
    cwd = tmp_path_factory.mktemp("oracle")
    want = _bash_argv(text, cwd)
    assert want is not None, text
    assert parsed.argv == want, text
    assert list(cwd.iterdir()) == []
