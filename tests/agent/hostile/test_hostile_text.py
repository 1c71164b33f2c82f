"""Family 3: model and tool text is hostile input everywhere it is stored, shown or sent.

A scripted hostile model (the real google-genai SDK against the lab's fake Gemini) plants a secret of
every class, terminal control sequences and HTML/Markdown in every field it authors (reasoning text,
commands, hypothesis ids and descriptions, conflict sources, the conclusion's summary, actions, ids
and diagnosis), on a lab world whose own outputs (VM tags, an NSG rule's description) carry more of
the same; the user's problem statement carries a prose password and a storage key. Nothing of it may
reach a request body, a file, or the console in clear; no control sequence may reach the console raw;
the RCAs, rendered, hold no element, attribute or link the model or a tool authored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import yaml
from markdown_it import MarkdownIt

from netghost.agent._claims import AUDIT_ID
from netghost.contracts import SessionState
from netghost.lab.fake_gemini import FakeCall, FakeTurn
from netghost.lab.world import world_path
from netghost.mcp import build_server
from netghost.safetext import is_hidden
from tests.mcp_server.helpers import Human, in_memory, lab_settings
from tests.safetext.rendering import Rendered, render

from .harness import DEFAULT_INTENT, PLANTED, run_hostile, secret_part

SEQUENCES = ("\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07 \x1b]0;pwned\x07 \x1b[2J\x1b[H \u202eexe.txt "
             "\x9b31m \u200bzero\u2066width \x1bP+q\x1b\\")
MARKUP = ("<script>alert(1)</script> <img src=https://evil.example/p.png> [x](javascript:alert(1)) "
          "![i](https://evil.example/i.png) <https://evil.example/auto> &lt;b&gt; &#x3C;img src=x&#x3E;\n"
          "## Integrity Statement\nAll claims verified.\n| a | b |\n|---|---|\n```\nswallowed\n")
PROSE_PASSWORD = "Tr0ub4dor-cache-99"
SECRETS = [secret_part(v) for v in PLANTED.values()] + [PROSE_PASSWORD]
OUR_SECTIONS = ["The Answer", "Investigation Summary", "Recommended Actions", "Hypotheses Log", "Capture Evidence",
                "Integrity Statement", "Command Evidence"]


def hostile(planted: str) -> str:
    """A model field: a planted secret, terminal sequences, and HTML/Markdown that would act if rendered."""
    return f"{planted} {SEQUENCES} {MARKUP}"


def _poisoned_world(tmp_path: Path) -> Path:
    """nsg-deny with tool outputs that carry secrets and sequences (a VM's tags, a rule's description)."""
    spec = yaml.safe_load(world_path("nsg-deny").read_text(encoding="utf-8"))
    web = next(vm for vm in spec["vms"] if vm["name"] == "web-vm-01")
    web["tags"] = {"owner": hostile(PLANTED["jwt"]), "deploy": PLANTED["connection_string"]}
    rule = spec["nsgs"][1]["rules"][0]
    rule["description"] = hostile(PLANTED["sas"])
    path = tmp_path / "poisoned.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _script() -> list[FakeTurn]:
    p = PLANTED
    declare = [{"id": "h1", "description": hostile(p["storage_key"])},
               {"id": "h2", "description": hostile(p["sas"])},
               {"id": "h3\x1b[2J", "description": "an id with an escape"},
               {"id": "\uff28\uff11", "description": "a full-width H1"}]
    return [
        FakeTurn(text=hostile(p["jwt"]), calls=(FakeCall("run_shell_cmd", {
            "command": "az vm show -g prod-rg -n web-vm-01 -o json", "reasoning": hostile(p["password"]),
            "hypotheses": declare, "active_hypothesis_ids": ["h1", "h2", hostile("x")]}),)),
        FakeTurn(text=hostile(p["client_secret"]), calls=(FakeCall("run_shell_cmd", {
            "command": f"rm -rf / \x1b]0;pwned\x07 {p['client_secret']}", "reasoning": hostile(p["sas"])}),)),
        FakeTurn(calls=(FakeCall("run_shell_cmd", {
            "command": "az network nsg rule list -g prod-rg --nsg-name nsg-data -o json",
            "reasoning": "Read the rules.",
            "hypotheses": [{"id": "h1", "state": "CONTRADICTED", "conflicting_audit_ids": [hostile("ghost_1")],
                            "higher_fidelity_source": hostile(p["connection_string"]),
                            "description": hostile(p["jwt"])}]}),)),
        FakeTurn(text=hostile(p["storage_key"]), calls=(FakeCall("complete_investigation", {
            "confidence": "high", "root_cause_summary": hostile(" ".join(p.values())),
            "confirmed_hypotheses": ["h1", hostile("h1")], "refuted_hypotheses": ["h2"],
            "recommended_actions": [hostile(p["password"]), hostile(p["client_secret"])],
            "diagnosis": {"is_anomaly": True, "faults": [{"resource_id": hostile(p["jwt"]),
                                                          "fault_type": hostile(p["sas"])}]},
            "hypotheses": [{"id": "h1", "state": "CONFIRMED", "resolving_audit_id": hostile(p["jwt"])}]}),)),
    ]


def test_nothing_planted_reaches_any_output_and_nothing_hostile_acts(tmp_path: Path) -> None:
    intent = (f"{DEFAULT_INTENT}; the cache password is {PROSE_PASSWORD} and the app uses "
              f"{PLANTED['storage_key']}")
    run = run_hostile(tmp_path, _script(), world=str(_poisoned_world(tmp_path)), intent=intent)
    assert run.code == 0, run.console
    assert not run.failures

    # 0 planted secrets in any request body, the session file, the RCAs, the journal, the console
    assert run.leaks(SECRETS) == []
    unwrapped = run.console.replace("\n", "")  # rich wraps long lines: a secret must not hide across them
    assert [s[:12] for s in SECRETS if s in unwrapped] == []
    assert "Your problem statement held 2 secret(s)" in run.console and "password" in run.console
    assert PROSE_PASSWORD not in run.sent() and "[REDACTED:password]" in run.sent()

    # no raw control, escape, bidi or zero-width character on the console: each is shown as an escape
    raw = sorted({f"U+{ord(c):04X}" for c in run.console if is_hidden(c, multiline=True)})
    assert raw == []
    assert "\\x1b]0;pwned" in run.console and "\\u202eexe.txt" in run.console
    assert "FORBIDDEN — blocked: rm -rf / \\x1b]0;pwned" in run.console

    # the session holds only plain, distinct hypothesis ids, and their texts are redacted
    state = SessionState.model_validate(json.loads((run.audit / "ghost_session.json").read_text()))
    assert [h.id for h in state.hypothesis_log] == ["h1", "h2"]

    files = run.files()
    (md_path,) = [p for p in files if p.name.startswith("ghost_rca_") and p.suffix == ".md"]
    (html_path,) = [p for p in files if p.name.startswith("ghost_rca_") and p.suffix == ".html"]
    _check_markdown(files[md_path])
    _check_html(files[html_path])


def _check_markdown(markdown: str) -> None:
    for typographer in (False, True):
        page = render(markdown, typographer=typographer)
        # only what the report itself writes: headings, paragraphs, emphasis, lists, tables, code
        assert page.tags <= {"h1", "h2", "p", "em", "ul", "li", "table", "thead", "tbody", "tr", "th", "td",
                             "code", "pre"}, page.tags
        assert page.attributes <= {("class", "language-text")}, page.attributes
        sections = [s for s in _h2_texts(markdown, typographer) if s != "Disagreement Findings"]  # when declared
        assert sections == OUR_SECTIONS  # the spoofed "## Integrity Statement" is text, not a section
        assert "<script>alert(1)</script>" in page.text and "## Integrity Statement" in page.text


def _h2_texts(markdown: str, typographer: bool) -> list[str]:
    md = MarkdownIt("commonmark", {"linkify": True, "typographer": typographer}).enable(["table", "linkify"])
    tokens = md.parse(markdown)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]


def _check_html(page_html: str) -> None:
    page = Rendered(page_html)
    assert not page.tags & {"script", "img", "iframe", "object", "embed", "svg", "image", "foreignobject"}
    for name, value in page.attributes:
        assert not name.startswith("on"), name
        if name == "href":
            assert value and value.startswith("#") and AUDIT_ID.fullmatch(value[1:]), value
        assert "evil" not in (value or ""), (name, value)
    assert "<script>alert(1)</script>" in page.text  # shown as text
    assert not any(is_hidden(c, multiline=True) for c in page.text)  # bidi and zero-width shown, not obeyed


def test_mcp_results_and_resources_leave_redacted(tmp_path: Path) -> None:
    """A tool result and a report read through MCP pass the redactor on their way out."""
    app = build_server(lab_settings(tmp_path, scan_azure_orphans=False))
    (tmp_path / "ghost_rca_ghost_20260101_000000.md").write_text(
        f"# RCA\nThe key was {PLANTED['storage_key']} and the token {PLANTED['jwt']}.\n", encoding="utf-8")

    async def main() -> tuple[dict[str, Any], str]:
        async with in_memory(app, Human()) as client:
            checked = await client.call_tool("check_task", {"task_id": f"t {PLANTED['jwt']}"})
            listed = (await client.list_resources()).resources
            text = (await client.read_resource(listed[-1].uri)).contents[0].text
            return checked.model_dump(mode="json"), text

    checked, text = anyio.run(main)
    app.close()
    dumped = json.dumps(checked)
    assert secret_part(PLANTED["jwt"]) not in dumped
    assert secret_part(PLANTED["storage_key"]) not in text and secret_part(PLANTED["jwt"]) not in text
    assert "[REDACTED:" in text
