"""The playbook reads the wordings engineers use into client, server, port and kind."""

from __future__ import annotations

import pytest

from netghost.agent.brains.playbook import parse_symptom
from netghost.agent.brains.playbook._symptom import settle


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


@pytest.mark.parametrize(("text", "client", "server", "port"), [
    ("build-agent-03 cannot download from artifacts-01 over https (port 443)", "build-agent-03", "artifacts-01", 443),
    ("builds on agent-7 fail to pull images from registry-01 port 443", "agent-7", "registry-01", 443),
    ("since this morning web-vm-01 gets timeouts from redis-primary on port 6379", "web-vm-01", "redis-primary", 6379),
    ("pg-primary-01 unreachable from api-vm-02 (5432)", None, None, 5432),
])
def test_fetch_wordings_put_the_server_after_from(text: str, client: str | None, server: str | None,
                                                  port: int | None) -> None:
    s = parse_symptom(text)
    assert (s.client, s.server, s.port) == (client, server, port)


KNOWN = {"web-vm-01", "redis-primary", "10.1.2.4", "api-vm-02", "10.30.2.5", "pg-primary-01", "app-web-01"}


@pytest.mark.parametrize(("text", "client", "server"), [
    # the grammar misreads these; the inventory (VM names and addresses) settles them
    ("redis-primary on port 6379 times out from web-vm-01", "web-vm-01", "redis-primary"),
    ("api-vm-02 times out connecting to 10.30.2.5 on port 5432", "api-vm-02", "10.30.2.5"),
    ("Is 10.30.2.5:5432 down? api-vm-02 gets timeouts", "api-vm-02", "10.30.2.5"),
    ("timeouts to pg-primary-01 port 5432 seen by api-vm-02", "api-vm-02", "pg-primary-01"),
    ("pg-primary-01 unreachable from api-vm-02 (5432)", "api-vm-02", "pg-primary-01"),
    ("app-web-01 is slow to talk to reports-db.corp.internal on port 5432", "app-web-01", "reports-db.corp.internal"),
    # a word the inventory does not know stays for the fuzzy match (a subnet name, a short name)
    ("VMs in prod-subnet cannot reach Redis on 6379", "prod-subnet", "Redis"),
    ("web-vm-01 cannot reach redis on 6379", "web-vm-01", "redis"),
])
def test_settle_places_the_ends_with_the_inventory(text: str, client: str, server: str) -> None:
    s = settle(parse_symptom(text), lambda w: w.lower() in KNOWN)
    assert (s.client, s.server) == (client, server)


def test_settle_before_the_inventory_places_a_dotted_name_as_the_server() -> None:
    s = settle(parse_symptom("web-vm-01 is slow to talk to redis-primary.prod.internal on port 6379"), lambda w: False)
    assert s.server == "redis-primary.prod.internal" and s.server_is_name
