"""Lab ARM: the lab world served as Azure's own endpoints, so the real azure-cli can run against it.

On loopback, over HTTPS with a CA the lab makes, one proxy plays ``management.azure.com`` (the ARM REST
API: the resources the simulator knows, with ARM's errors and long-running operations), each storage
account's ``<account>.blob.core.windows.net`` (the Blob service) and the VM managed-identity endpoint
``169.254.169.254`` (``az login --identity``). Every answer comes from the ``az`` simulator run
in-process on the same lab state (:mod:`netghost.lab.az`), turned back into the REST shape the CLI
expects, so the simulator and the real CLI over lab ARM answer from one model; an installed role
definition (:func:`install_role`) is enforced on every request. The resident lab process serves it
(:mod:`netghost.lab.resident`, ``Resident.control("arm")``); :func:`az_environment` is what sends a real
az there, :func:`az_login` signs it in.
"""

from netghost.lab.arm._certs import LabCertificates, ensure_certificates
from netghost.lab.arm._endpoint import ARM_DIR, LabArm, az_environment, az_login, start_lab_arm
from netghost.lab.arm._rbac import RoleDefinition, install_role, load_role
from netghost.lab.arm._router import ROUTES, ArmRouter

__all__ = [
    "ARM_DIR",
    "ROUTES",
    "ArmRouter",
    "LabArm",
    "LabCertificates",
    "RoleDefinition",
    "az_environment",
    "az_login",
    "ensure_certificates",
    "install_role",
    "load_role",
    "start_lab_arm",
]
