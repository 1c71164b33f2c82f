"""The offline playbook brain: a deterministic investigator behind the Brain protocol (issue 13).

It reads the problem statement into a symptom, keeps two to three falsifiable hypotheses, climbs seed
001's escalation ladder (endpoints, DNS, control plane, suspects, then a capture only when the control
plane is clean) and concludes with a structured diagnosis. It is stateless: every turn is decided from
the conversation alone, so a resumed session goes on exactly where it stopped.
"""

from netghost.agent.brains.playbook._brain import PlaybookBrain
from netghost.agent.brains.playbook._symptom import Symptom, parse_symptom

__all__ = ["PlaybookBrain", "Symptom", "parse_symptom"]
