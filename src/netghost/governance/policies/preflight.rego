# Default CabinCrew preflight policy of the Network Ghost Agent (CabinCrew §6).
#
# Rules add reasons to three sets; Python picks the strictest non-empty one
# (deny > require_approval > warn > allow). User policies in the same package only ever
# ADD reasons, so they can tighten but never loosen this floor.
#
# Input = facts pre-computed in Python (netghost.governance.policy.command_facts / capture_plan_facts):
# tokenisation, combined short flags (-sk -> -s -k) and every number are handled there,
# because rego-cpp 1.5.2 compares numbers lexicographically in min/max/sort (DEPENDENCIES.md).
package netghost.preflight

import rego.v1

az_read_verbs := {"list", "show", "list-effective-nsg", "show-effective-route-table", "test-ip-flow", "show-next-hop", "get", "wait"}

insecure_flags := {"-k", "--insecure"}

deny contains "FORBIDDEN command: it can never run through the Safe-Exec Shell" if {
	input.verdict == "FORBIDDEN"
}

deny contains "plan contains a step outside the approved plan" if {
	input.kind == "capture_plan"
	input.unplanned_steps > 0
}

deny contains "capture longer than the 3600 s limit" if {
	input.kind == "capture_plan"
	input.capture_duration_s > 3600
}

require_approval contains "RISKY command: a human must approve it" if {
	input.verdict == "RISKY"
}

require_approval contains sprintf("Azure call '%s' changes resources", [input.az_verb]) if {
	input.environment == "azure"
	input.az_verb != ""
	not input.az_verb in az_read_verbs
}

require_approval contains "plan creates cloud resources" if {
	input.kind == "capture_plan"
	input.creates_resources
}

warn contains "TLS certificate verification is disabled (-k/--insecure)" if {
	some f in input.flags
	f in insecure_flags
}

warn contains "plan has no cleanup step: resources may be left behind" if {
	input.kind == "capture_plan"
	not input.has_cleanup
}
