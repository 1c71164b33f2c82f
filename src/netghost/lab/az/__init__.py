"""The lab's ``az``: a simulator of the Azure CLI commands the agent runs, answering from the world.

``python -m netghost.lab.az ARGS`` (what the lab's ``bin/az`` launcher runs) or, in-process,
:func:`run_az` find a command by its words, parse its arguments as az does, run its handler
against the lab state under its lock and print the result through ``--query`` and ``-o``, with
az's exact error texts and exit codes. Packet captures live on the lab clock: :func:`settle`
writes the blob of every capture that has stopped, :func:`capture_status` says where one is.
Cloud-API faults declared in the world or injected at run time make commands fail the way Azure
does. :func:`run_az_slowly` (what a lab ``az`` program runs) first waits the latency
``$NETGHOST_LAB_AZ_LATENCY_S`` models (:data:`LATENCY_ENV`, :func:`az_latency`).
"""

from netghost.lab.az._arm_docs import public_ip_name
from netghost.lab.az._capture_store import capture_status, settle
from netghost.lab.az._run import LATENCY_ENV, REGISTRY, az_latency, main, run_az, run_az_slowly

__all__ = ["LATENCY_ENV", "REGISTRY", "az_latency", "capture_status", "main", "public_ip_name", "run_az", "run_az_slowly",
           "settle"]
