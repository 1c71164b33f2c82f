"""netghost.shell.classify: one command line in, SAFE / RISKY / FORBIDDEN (tiers 0-3) and a reason out.

:func:`classify` never raises: it parses the line with tree-sitter-bash (``_parse``), matches the built-in
tables in ``rules/*.toml`` (``_tables`` compiles them: ``_tier0`` FORBIDDEN rules, with the credential
ontology of ``netghost.redact`` for credential files, persistence targets and secret variables;
``_options``, ``_values``, ``_urls`` and ``_local`` per-binary argument checks for tier 1; ``_egress``
where network probes may go and what they may carry, against the session's :class:`EgressScope`
(``_scope``); ``_az`` tier 2 with its rule floor ``_azrules``, the catalogue of azure-cli's commands
``_azcat`` and ``_azdecide``, and ``_armpath``), rejects secret values anywhere in argv, and applies an
optional organisation policy (``_policy``; :func:`load_org_policy` in ``_policy_file`` reads and verifies
one, raising PolicyError). Argument checking lives here rather than in a subpackage of its own because it
changes with the rule tables and is used by nothing but the classifier.
"""

from netghost.shell.classify._classify import Classification, classify
from netghost.shell.classify._policy import OrgPolicy
from netghost.shell.classify._policy_file import load_org_policy
from netghost.shell.classify._scope import EgressScope

__all__ = ["Classification", "EgressScope", "OrgPolicy", "classify", "load_org_policy"]
