"""NIKA-style scores: resource matching at the answers' level, F1 over sets, healthy controls."""

from __future__ import annotations

from netghost.agent._scoring import f1, resource_matches, score_diagnosis

RULE = ("/subscriptions/0/resourceGroups/prod-rg/providers/Microsoft.Network/networkSecurityGroups/nsg-data/"
        "securityRules/DenyAllFromWebSubnet")
ANSWER = {"fault_type": "nsg-deny", "resource_id": RULE}


def test_resource_ids_match_in_full_or_by_name() -> None:
    assert resource_matches(RULE.upper() + "/", RULE)
    assert resource_matches("DenyAllFromWebSubnet", RULE)
    assert not resource_matches("nsg-data", RULE)  # the NSG is not the rule
    assert not resource_matches("/x/DenyAllFromWebSubnet", RULE)  # a different full id
    assert not resource_matches("", RULE)


def test_f1_of_sets() -> None:
    assert f1([], []) == 1.0 and f1(["a"], []) == 0.0 and f1([], ["a"]) == 0.0
    assert f1(["a", "b"], ["a"]) == 2 * 0.5 * 1 / 1.5


def test_scores() -> None:
    right = {"is_anomaly": True, "faults": [{"resource_id": "DenyAllFromWebSubnet", "fault_type": "nsg-deny"}]}
    s = score_diagnosis(right, ANSWER)
    assert (s.detection, s.rca_f1, s.localization_f1, s.fault_type_f1) == (True, 1.0, 1.0, 1.0)
    wrong_type = {"is_anomaly": True, "faults": [{"resource_id": RULE, "fault_type": "udr-dead-appliance"}]}
    s = score_diagnosis(wrong_type, ANSWER)
    assert (s.rca_f1, s.localization_f1, s.fault_type_f1) == (0.0, 1.0, 0.0)
    healthy = score_diagnosis({"is_anomaly": False, "faults": []}, {"fault_type": None})
    assert healthy.detection and healthy.rca_f1 == 1.0
    false_alarm = score_diagnosis(right, {"fault_type": None})
    assert not false_alarm.detection and false_alarm.rca_f1 == 0.0
    assert not score_diagnosis(None, ANSWER).detection


def test_a_world_with_two_faults_is_scored_on_both() -> None:
    """An answer's ``faults`` list is the truth: naming one of two faults is half the recall."""
    zone = "/subscriptions/0/resourceGroups/dns-rg/providers/Microsoft.Network/privateDnsZones/svc.internal"
    answer = {"fault_type": "dns-nxdomain", "resource_id": zone,
              "faults": [{"fault_type": "dns-nxdomain", "resource_id": zone},
                         {"fault_type": "nsg-deny", "resource_id": RULE}]}
    both = {"is_anomaly": True, "faults": [{"resource_id": "svc.internal", "fault_type": "dns-nxdomain"},
                                           {"resource_id": RULE, "fault_type": "nsg-deny"}]}
    assert score_diagnosis(both, answer).rca_f1 == 1.0
    one = score_diagnosis({"is_anomaly": True, "faults": [{"resource_id": zone, "fault_type": "dns-nxdomain"}]}, answer)
    assert one.detection and one.rca_f1 == 2 * 1.0 * 0.5 / 1.5
