"""The playbook reads the wordings engineers use into client, server, port and kind."""

from __future__ import annotations

import pytest

from netghost.agent.brains.playbook import parse_symptom


@pytest.mark.parametrize(("text", "kind", "client", "server", "port"), [
    ("web-vm-01 cannot reach redis-primary on port 6379", "unreachable", "web-vm-01", "redis-primary", 6379),
    ("VMs in prod-subnet cannot reach Redis on 6379", "unreachable", "prod-subnet", "Redis", 6379),
    ("app01 can't connect to db01:5432", "unreachable", "app01", "db01", 5432),
    ("Intermittent errors from web-vm-01 to redis-primary on port 6379", "intermittent", "web-vm-01",
     "redis-primary", 6379),
    ("name redis-primary.prod.internal does not resolve from web-vm-01", "dns", "web-vm-01",
     "redis-primary.prod.internal", None),
    ("large responses from redis-primary hang for web-vm-01 on port 6379", "large", "web-vm-01", "redis-primary",
     6379),
    ("web-vm-01 gets connection refused from redis-primary on port 6379", "refused", "web-vm-01", "redis-primary",
     6379),
    ("connections from web-vm-01 to redis-primary on port 6379 are reset after a while", "reset", "web-vm-01",
     "redis-primary", 6379),
    ("web-vm-01 -> 10.1.2.4 port 443 times out", "unreachable", "web-vm-01", "10.1.2.4", 443),
    ("slow responses between api-1 and cache-1", "slow", "api-1", "cache-1", None),
])
def test_wordings(text: str, kind: str, client: str | None, server: str | None, port: int | None) -> None:
    s = parse_symptom(text)
    assert (s.kind, s.client, s.server, s.port) == (kind, client, server, port)


def test_unknown_wording_still_gets_a_generic_plan() -> None:
    s = parse_symptom("something is off with the network today")
    assert s.kind == "generic" and s.client is None and s.server is None
