"""The playbook's NSG evaluation for packets an appliance forwards (test-ip-flow cannot answer for them)."""

from __future__ import annotations

from netghost.agent.brains.playbook._nsg_eval import deciding_rule

RULES = [
    {"name": "AllowSpokeWeb", "priority": 100, "direction": "Inbound", "access": "Allow", "protocol": "Tcp",
     "src": "10.90.0.0/16", "dst": "*", "port": None, "ports": ["80", "443"]},
    {"name": "AllowBackupRange", "priority": 150, "direction": "Inbound", "access": "Allow", "protocol": "*",
     "src": None, "srcs": ["10.90.7.0/24", "10.90.8.0/24"], "dst": "VirtualNetwork", "port": "9000-9100"},
    {"name": "DenySpokeToData", "priority": 400, "direction": "Inbound", "access": "Deny", "protocol": "*",
     "src": "10.90.0.0/16", "dst": "*", "port": "*"},
    {"name": "DenyInternetOut", "priority": 300, "direction": "Outbound", "access": "Deny", "protocol": "*",
     "src": "*", "dst": "Internet", "port": "*"},
]


def _decide(direction: str, src: str, dst: str, port: int | None, protocol: str = "Tcp") -> str | None:
    rule = deciding_rule(RULES, direction, protocol=protocol, src=src, dst=dst, port=port)
    return None if rule is None else str(rule["name"])


def test_the_lowest_priority_number_among_matching_rules_decides() -> None:
    assert _decide("Inbound", "10.90.1.5", "10.90.2.8", 443) == "AllowSpokeWeb"
    assert _decide("Inbound", "10.90.1.5", "10.90.2.8", 5432) == "DenySpokeToData"
    assert _decide("Inbound", "10.90.7.9", "10.90.2.8", 9050) == "AllowBackupRange"  # a range, a prefix list
    assert _decide("Inbound", "10.90.7.9", "10.90.2.8", 9101) == "DenySpokeToData"


def test_rules_of_another_direction_protocol_or_source_do_not_match() -> None:
    assert _decide("Inbound", "10.50.1.5", "10.90.2.8", 5432) is None  # a default rule decides
    assert _decide("Outbound", "10.90.1.5", "10.90.2.8", 5432) is None
    assert _decide("Outbound", "10.90.1.5", "93.184.216.34", 443) == "DenyInternetOut"
    assert _decide("Inbound", "10.90.1.5", "10.90.2.8", 443, protocol="Udp") == "DenySpokeToData"  # web rule is Tcp
    assert _decide("Inbound", "10.90.7.9", "93.184.216.34", 9050) == "DenySpokeToData"  # not VirtualNetwork
