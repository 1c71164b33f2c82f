# The orchestrator's capture limits, enforced at preflight (CabinCrew §6) on a capture task's plan.
#
# Loaded on top of governance's default policy (which only adds reasons), so a plan that breaks a
# limit is denied before anything is created. Facts: netghost.governance.capture_plan_facts plus
# capture_limit_bytes and the limits, pre-computed in Python (no number sorting in Rego: regopy bugs).
package netghost.preflight

import rego.v1

deny contains sprintf("capture longer than the %v s limit", [input.max_duration_s]) if {
	input.kind == "capture_plan"
	input.capture_duration_s > input.max_duration_s
}

deny contains sprintf("capture larger than the %v byte limit", [input.max_capture_bytes]) if {
	input.kind == "capture_plan"
	input.capture_limit_bytes > input.max_capture_bytes
}

deny contains "capture plan has no limit facts: it cannot be checked" if {
	input.kind == "capture_plan"
	not input.max_duration_s
}
