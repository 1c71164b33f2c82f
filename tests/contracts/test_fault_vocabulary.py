"""The diagnosis vocabulary the model is given is exactly the lab's network fault types."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from netghost.contracts import FAULT_TYPES, CompleteInvestigationArgs, tool_declaration
from netghost.lab.world._fault_specs import NETWORK_FAULT_TYPES


def test_the_vocabulary_is_the_labs_fault_types() -> None:
    assert FAULT_TYPES == NETWORK_FAULT_TYPES and len(FAULT_TYPES) == 10
    schema = tool_declaration("complete_investigation")["parameters_json_schema"]["properties"]["diagnosis"]
    assert schema["properties"]["faults"]["items"]["properties"]["fault_type"]["enum"] == list(FAULT_TYPES)


def test_a_diagnosis_is_optional_and_checked() -> None:
    args = CompleteInvestigationArgs.model_validate({
        "confidence": "high", "root_cause_summary": "x",
        "diagnosis": {"is_anomaly": True, "faults": [{"resource_id": "nsg-data/DenyAll", "fault_type": "nsg-deny"}]}})
    assert args.diagnosis is not None and args.diagnosis.faults[0].fault_type == "nsg-deny"
    assert CompleteInvestigationArgs.model_validate({"confidence": "low", "root_cause_summary": "x"}).diagnosis is None
    with pytest.raises(ValidationError):
        CompleteInvestigationArgs.model_validate({"confidence": "low", "root_cause_summary": "x",
                                                  "diagnosis": {"faults": []}})
