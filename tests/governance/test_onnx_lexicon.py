"""The command risk model's lexicon features fire at word boundaries (issue 28): "script" inside
"subscriptions" or ".azure" inside "management.azure.com" is not the word, so an ARM read is not made to
look like a script or a token-cache path."""

from __future__ import annotations

import pytest

from netghost.governance.onnx import command_tokens
from netghost.governance.onnx._features import lexicon_words


@pytest.mark.parametrize(
    ("text", "absent"),
    [("https://management.azure.com/subscriptions?api-version=2022-12-01", {"script", ".azure"}),
     ("--resource-group rg-monkey --description turnkey", {"key"}), ("az vm list --query [].storageprofile", {"file"}),
     ("--metric throughput", {"output"}), ("--kubeconfig x", {"config"})],
)  # fmt: skip
def test_words_inside_other_words_do_not_fire(text: str, absent: set[str]) -> None:
    assert not absent & set(lexicon_words(text))


@pytest.mark.parametrize(
    ("text", "present"),
    [("cat /home/u/.azure/config", {".azure", "config"}), ("--scripts @x.sh", {"script"}), ("--password=x", {"passw"}),
     ("/proc/1/environ", {"proc"}), ("sig=abc", {"sig"}), ("-h 'x-api-key: 1'", {"key"}), ("id_rsa", {"id_rsa"})],
)  # fmt: skip
def test_words_at_a_boundary_fire(text: str, present: set[str]) -> None:
    assert present <= set(lexicon_words(text))


def test_an_arm_read_carries_no_credential_words() -> None:
    tokens = command_tokens(["az", "rest", "--url", "https://management.azure.com/subscriptions?api-version=2022-12-01"])
    assert not [t for t in tokens if t.startswith("l:")]
