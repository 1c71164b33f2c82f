"""The Cloud Orchestrator: packet-capture tasks on Azure Network Watcher (not built yet).

It will turn the agent's ``capture_traffic``/``check_task``/``cancel_task``/``cleanup_task`` requests
(``netghost.contracts``) into ``az`` commands run through the Safe-Exec Shell, keep the task
registry in a hash-chained WAL (``netghost.governance``) and answer with the contracts' response
models. Nothing is exported until it lands; ``OrchestratorError`` is already in ``netghost.errors``.
"""

__all__: list[str] = []
