"""The playbook reads the wordings engineers use into client, server, port and kind."""

from __future__ import annotations

import pytest

from netghost.agent.brains.playbook import parse_symptom
from netghost.agent.brains.playbook._symptom import complaints, settle


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


_HOSTS = {"web-kr-01", "api-7", "db-2", "cache-2", "10.4.1.9", "etl-3", "app-1", "ledger-1", "10.42.2.10", "pay-api-01"}


def _known(word: str) -> bool:
    return word.lower() in _HOSTS


@pytest.mark.parametrize(("text", "flows"), [
    ("after last night's release web-kr-01 logs two errors: the orders API name no longer resolves, and cache calls "
     "to 10.55.3.6:6380 time out", [("web-kr-01", None, None, ("orders", "API")), ("web-kr-01", "10.55.3.6", 6380, ())]),
    ("api-7 cannot reach db-2 on 5432; cache-2 on 6379 times out from it too",
     [("api-7", "db-2", 5432, ()), ("api-7", "cache-2", 6379, ())]),
    ("etl-3 times out connecting to 10.4.1.9:1433. The billing service name does not resolve either",
     [("etl-3", "10.4.1.9", 1433, ()), ("etl-3", None, None, ("billing", "service"))]),
    ("web-kr-01: cache-2 on 6380 times out; also orders-api.svc.kr.internal does not resolve",
     [("web-kr-01", "cache-2", 6380, ()), ("web-kr-01", "orders-api.svc.kr.internal", None, ())]),
    ("Two problems since the release: web-kr-01 cannot resolve orders-api.svc.kr.internal, and web-kr-01 times out "
     "connecting to cache-2 on 6380.",
     [("web-kr-01", "orders-api.svc.kr.internal", None, ()), ("web-kr-01", "cache-2", 6380, ())]),
])
def test_a_statement_with_several_failing_flows_is_read_as_several_complaints(
        text: str, flows: list[tuple[str | None, str | None, int | None, tuple[str, ...]]]) -> None:
    whole = settle(parse_symptom(text), _known)
    parts = complaints(whole, _known)
    assert [(p.client, p.server, p.port, p.name_words) for p in parts] == flows


@pytest.mark.parametrize("text", [
    "the payments API (pay-api-01) gets login timeouts from the ledger SQL server 10.42.2.10, HTTPS calls to the "
    "same host are fine",  # a clause that says something works is no complaint
    "app-1 cannot reach ledger-1 on port 443; the VPN shows Connected",  # context, no server
    "app-1: every call to ledger-1 (10.42.2.10:8443) times out; the API VMs look healthy",
    "app-1 cannot reach ledger-1 on 5432, and ledger-1 on 5432 times out from app-1 as well",  # one flow said twice
    "web-kr-01 cannot reach db-2 on port 6379",
])
def test_one_failing_flow_stays_one_complaint(text: str) -> None:
    whole = settle(parse_symptom(text), _known)
    assert complaints(whole, _known) == [whole]


@pytest.mark.parametrize(("text", "client", "server"), [
    ("redis-primary stopped answering on port 6379 this morning", None, "redis-primary"),
    ("db-2 is down since noon", None, "db-2"),
    ("api-7 is not responding on 8443 to calls from etl-3", "etl-3", "api-7"),
])
def test_the_one_host_that_stopped_answering_is_the_server(text: str, client: str | None, server: str) -> None:
    known = {"redis-primary", "db-2", "api-7", "etl-3"}.__contains__
    s = settle(parse_symptom(text), known)
    assert (s.client, s.server) == (client, server)


def test_a_full_stop_after_the_port_is_not_part_of_it() -> None:
    s = parse_symptom("web-vm-01 cannot reach redis-primary on port 6379.")
    assert (s.client, s.server, s.port) == ("web-vm-01", "redis-primary", 6379)
