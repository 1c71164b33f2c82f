"""netghost.shell.exec: run one approved argv without a shell, and make sure nothing it started outlives it.

``_run`` starts the child (no shell, stdin from /dev/null, a scrubbed environment, its own session),
collects both pipes up to a byte limit and kills the whole tree on timeout or overflow; ``_reaper`` is the
Linux launcher script it runs the command under (a child subreaper, so daemons that called setsid() die
too). The two change together: they share the launcher's command line, exit codes and stderr marker.
``_child_env`` reads ``child_env.toml``, the credentials by program: which credential variables (the Azure
identity's) are held back from every child and given to the programs that need them (``az``).
"""

from netghost.shell.exec._child_env import ChildEnvironments, EnvClass, env_classes, program_classes
from netghost.shell.exec._run import RunResult, child_environments, run_argv, scrub_env

__all__ = [
    "ChildEnvironments",
    "EnvClass",
    "RunResult",
    "child_environments",
    "env_classes",
    "program_classes",
    "run_argv",
    "scrub_env",
]
