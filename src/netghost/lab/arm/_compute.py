"""``Microsoft.Compute`` and ``Microsoft.ContainerService`` routes: VMs, their extensions and instance
views, scale sets with their instances, NICs and extensions, AKS clusters."""

from __future__ import annotations

from typing import Any

from netghost.lab.arm import _shapes as shape
from netghost.lab.arm._rest import to_rest
from netghost.lab.arm._routes import Call, Route, compile_template, listing

__all__ = ["ROUTES"]

_VM = "Microsoft.Compute/virtualMachines"
_VMSS = "Microsoft.Compute/virtualMachineScaleSets"


def _vm_get(c: Call) -> Any:
    expand = (c.req.arg("$expand") or "").lower()
    verb = "get-instance-view" if "instanceview" in expand else "show"
    return to_rest(c.sim.run(["vm", verb, "-g", c.rg, "-n", c.seg["vm"]]), shape.VM)


def _vm_instance_view(c: Call) -> Any:
    doc = c.sim.run(["vm", "get-instance-view", "-g", c.rg, "-n", c.seg["vm"]])
    return to_rest(doc.get("instanceView"), shape.FLAT)


def _vm_list(c: Call) -> Any:
    argv = ["vm", "list", *(["-g", c.seg["rg"]] if "rg" in c.seg else [])]
    expand = (c.req.arg("$expand") or "").lower()
    docs = c.sim.run(argv)
    if "instanceview" in expand:
        docs = [c.sim.run(["vm", "get-instance-view", "--ids", d["id"]]) for d in docs]
    return listing(to_rest(docs, shape.VM))


def _extension_list(c: Call) -> Any:
    return listing(to_rest(c.sim.run(["vm", "extension", "list", "-g", c.rg, "--vm-name", c.seg["vm"]]),
                           shape.EXTENSION))


def _extension_get(c: Call) -> Any:
    return to_rest(c.sim.run(["vm", "extension", "show", "-g", c.rg, "--vm-name", c.seg["vm"], "-n", c.seg["ext"]]),
                   shape.EXTENSION)


def _vmss_list(c: Call) -> Any:
    return listing(to_rest(c.sim.run(["vmss", "list", *(["-g", c.seg["rg"]] if "rg" in c.seg else [])]), shape.VMSS))


def _vmss_get(c: Call) -> Any:
    return to_rest(c.sim.run(["vmss", "show", "-g", c.rg, "-n", c.seg["vmss"]]), shape.VMSS)


def _vmss_instances(c: Call) -> Any:
    argv = ["vmss", "list-instances", "-g", c.rg, "-n", c.seg["vmss"]]
    if "instanceview" in (c.req.arg("$expand") or "").lower():
        argv += ["--expand", "instanceView"]
    return listing(to_rest(c.sim.run(argv), shape.VMSS_VM))


def _vmss_instance(c: Call) -> Any:
    doc = c.sim.run(["vmss", "show", "-g", c.rg, "-n", c.seg["vmss"], "--instance-id", c.seg["instance"]])
    return to_rest(doc, shape.VMSS_VM)


def _vmss_nics(c: Call) -> Any:
    return listing(to_rest(c.sim.run(["vmss", "nic", "list", "-g", c.rg, "--vmss-name", c.seg["vmss"]]), shape.NIC))


def _vmss_extensions(c: Call) -> Any:
    docs = c.sim.run(["vmss", "extension", "list", "-g", c.rg, "--vmss-name", c.seg["vmss"]])
    return listing(to_rest(docs, shape.EXTENSION))


def _aks_get(c: Call) -> Any:
    return to_rest(c.sim.run(["aks", "show", "-g", c.rg, "-n", c.seg["cluster"]]), shape.AKS)


def _r(method: str, template: str, action: str, handler: Any) -> Route:
    return Route(method, compile_template(template), action, handler)


ROUTES = [
    _r("GET", f"RG/{_VM}", f"{_VM}/read", _vm_list),
    _r("GET", f"SUB/{_VM}", f"{_VM}/read", _vm_list),
    _r("GET", f"RG/{_VM}/{{vm}}", f"{_VM}/read", _vm_get),
    _r("GET", f"RG/{_VM}/{{vm}}/instanceView", f"{_VM}/instanceView/read", _vm_instance_view),
    _r("GET", f"RG/{_VM}/{{vm}}/extensions", f"{_VM}/extensions/read", _extension_list),
    _r("GET", f"RG/{_VM}/{{vm}}/extensions/{{ext}}", f"{_VM}/extensions/read", _extension_get),
    _r("GET", f"RG/{_VMSS}", f"{_VMSS}/read", _vmss_list),
    _r("GET", f"SUB/{_VMSS}", f"{_VMSS}/read", _vmss_list),
    _r("GET", f"RG/{_VMSS}/{{vmss}}", f"{_VMSS}/read", _vmss_get),
    _r("GET", f"RG/{_VMSS}/{{vmss}}/virtualMachines", f"{_VMSS}/virtualMachines/read", _vmss_instances),
    _r("GET", f"RG/{_VMSS}/{{vmss}}/virtualMachines/{{instance}}", f"{_VMSS}/virtualMachines/read", _vmss_instance),
    _r("GET", f"RG/{_VMSS}/{{vmss}}/networkInterfaces", f"{_VMSS}/networkInterfaces/read", _vmss_nics),
    _r("GET", f"RG/{_VMSS}/{{vmss}}/extensions", f"{_VMSS}/extensions/read", _vmss_extensions),
    _r("GET", "RG/Microsoft.ContainerService/managedClusters/{cluster}",
       "Microsoft.ContainerService/managedClusters/read", _aks_get),
]
