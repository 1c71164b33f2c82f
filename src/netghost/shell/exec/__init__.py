"""netghost.shell.exec: run one approved argv without a shell, and make sure nothing it started outlives it.

``_run`` starts the child (no shell, stdin from /dev/null, a scrubbed environment, its own session),
collects both pipes up to a byte limit and kills the whole tree on timeout or overflow; ``_reaper`` is the
Linux launcher script it runs the command under (a child subreaper, so daemons that called setsid() die
too). The two change together: they share the launcher's command line, exit codes and stderr marker.
"""

from netghost.shell.exec._run import RunResult, run_argv, scrub_env

__all__ = ["RunResult", "run_argv", "scrub_env"]
