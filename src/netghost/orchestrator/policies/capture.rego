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

# Per-session capture budgets (budgets.toml): how many captures at once, how many capture seconds and
# bytes in all. The facts hold each budget's limit, the count with this capture included (computed in
# Python from the session's task registry, a resumed session's earlier runs included) and the refusal's
# wording; the comparison is made here, and a denial fails the task before anything is created.
deny contains b.message if {
	input.kind == "capture_plan"
	b := input.budgets.concurrent_captures
	b.count > b.limit
}

deny contains b.message if {
	input.kind == "capture_plan"
	b := input.budgets.capture_seconds
	b.count > b.limit
}

deny contains b.message if {
	input.kind == "capture_plan"
	b := input.budgets.capture_bytes
	b.count > b.limit
}

deny contains "capture plan has no budget facts: it cannot be checked" if {
	input.kind == "capture_plan"
	not input.budgets
}
