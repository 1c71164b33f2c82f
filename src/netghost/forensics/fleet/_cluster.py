"""The Dask client the fleet submits to: an existing scheduler, or a LocalCluster of worker processes.

Why processes, one thread each: the engine is numpy and compiled loops that hold the GIL for most of a
capture, so threads in one process would take turns; one process per core runs captures in parallel,
and a worker that dies (out of memory, a signal) takes only its own capture down, which Dask retries
on another worker (``distributed.scheduler.allowed-failures``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["dask_client"]

# What a local worker reads from its environment: Blob credentials (adlfs, DefaultAzureCredential, a managed
# identity's endpoint) and the engine's memory budget.
_WORKER_ENV_PREFIXES = ("AZURE_", "IDENTITY_", "MSI_", "IMDS_", "NETGHOST_")


def _worker_env() -> dict[str, str]:
    """The current values a local worker must see. Workers fork from a forkserver that Python starts
    once per process, with the environment of that moment: a second fleet in the same process (the MCP
    server, a test run) would otherwise read blobs with the first one's credentials, or none. Variables
    removed since then cannot be unset this way (Dask's nanny only sets them)."""
    return {k: v for k, v in os.environ.items() if k.startswith(_WORKER_ENV_PREFIXES)}


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None,
                memory_limit: int | str = "auto") -> Iterator[Any]:
    """A ``distributed.Client``: connected to ``scheduler`` (``tcp://host:8786``), else to a new
    LocalCluster of ``workers`` processes (default one per core), closed on exit.

    Args:
        scheduler: address of a running Dask scheduler (Kubernetes, Azure ML, Coiled, ``dask scheduler``).
        workers: worker processes of the local cluster.
        memory_limit: per local worker (Dask's monitor restarts a worker past 95% of it).
    """
    from dask.distributed import Client, LocalCluster  # noqa: PLC0415  only a fleet imports dask

    if scheduler:
        with Client(scheduler, timeout="30s") as client:  # type: ignore[no-untyped-call]
            yield client
        return
    import dask  # noqa: PLC0415

    n = workers or os.cpu_count() or 1
    # Dask starts workers with MALLOC_TRIM_THRESHOLD_=65536 so freed memory goes back to the OS at
    # once; the engine allocates and frees many large arrays per capture, and with that setting each
    # one is page-faulted in afresh: measured 0.3-0.5 s instead of 0.11 s per 100k-packet capture.
    # forkserver, not Dask's default spawn: workers fork from a clean server process instead of each
    # starting an interpreter and importing everything (cluster start 2.0 -> 1.2 s, start to close
    # 3.0 -> 1.5 s on 2 workers); plain fork would copy the client's event-loop threads' locks.
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                          "distributed.worker.multiprocessing-method": "forkserver"}):
        # Its HTTP endpoint on loopback and a free port: Dask's default is every interface on 8787, and a
        # second local fleet on the machine then warns about the taken port.
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,  # type: ignore[no-untyped-call]
                               dashboard_address="127.0.0.1:0", memory_limit=memory_limit, env=_worker_env())
        with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
            yield client  # (inside the config: a worker restarted after a crash gets it too)
