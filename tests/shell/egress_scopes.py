"""Egress scopes the shell tests classify under.

The option-table tests probe public names (``example.com``, ``api.contoso.com``) because that is what an
engineer types; since issue 28 a probe is SAFE only toward the investigation's destinations, so those tests
run in an investigation whose problem statement named these hosts. The egress policy itself (what is out of
scope, what a probe may carry) is tested with the default scope in test_egress_corpus.py.
"""

from __future__ import annotations

from netghost.shell import EgressScope

INVESTIGATION = EgressScope().with_text(
    "api.contoso.com (contoso.com) stopped answering example.com clients; compare x.example, a.example, "
    "web01.contoso.com, ifconfig.me and myip.opendns.com"
)
"""A scope seeded the way the agent seeds it: from a problem statement that names these hosts."""
