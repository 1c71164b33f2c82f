"""Cloud-API faults: failures of Azure itself, as the real ``az`` reports them.

Each fault is a :class:`~netghost.lab.world.CloudFaultSpec`, declared in a world's
``cloud_faults`` or injected into a running lab with :meth:`LabState.inject_fault`. The error texts
and exit codes are the ones AZURE.md documents; where no public source exists (extension missing,
duplicate capture name, quota) the text is the lab's documented default and a fault's ``message``
overrides it.

=========================  =====  ====================================================================
kind                       exit   what the simulator does
=========================  =====  ====================================================================
extension-missing          1      ``packet-capture create`` / ``test-connectivity`` refuse the VM
no-network-watcher         1      ``network watcher is not enabled for region <loc>.``
container-missing          0/3    ``container exists`` -> False; blob commands -> ContainerNotFound (3);
                                  a capture into it ends in ``Error`` / ``StorageFailed``
storage-auth-failure       1      ``--auth-mode login`` data-plane calls print the RBAC block
capture-error              0      the capture ends ``packetCaptureStatus: Error`` after ``delay_s``
poll-transient             1      the first ``count`` show/show-status calls fail (InternalServerError)
blob-late                  3      the blob appears ``delay_s`` lab seconds after Stopped (BlobNotFound)
download-failure           1      the first ``count`` downloads fail (storage InternalError)
capture-name-conflict      1      a create reusing a live capture name fails (Conflict)
capture-quota              1      more than ``limit`` unfinished captures in a region fail (QuotaExceeded)
extension-failed           0      the agent extension reports ``provisioningState: Failed``; a capture
                                  on the VM ends ``Error`` / ``AgentStopped``
vm-stopped                 0      the VM is put in ``power_state`` (the world copy changes); captures
                                  running on it end ``Error`` / ``AgentStopped``
wireserver-blocked         0      an outbound NSG rule denies 168.63.129.16 at the VM (world copy);
                                  a capture on it ends ``Error`` / ``AgentStopped``
capture-early-stop         0      the capture stops ``delay_s`` after it starts with ``stop_reason``
create-unknown-outcome     1      the first ``count`` creates fail (InternalServerError) although the
                                  session was created: a later ``show`` finds it
capture-no-traffic         0      the capture (on ``vm``) sees no packet in its window: it stops
                                  normally and its blob holds the pcap file header only (0 packets)
storage-auth-failure       1      (``auth_mode: key``) shared-key access refused: KeyBasedAuthentication-
                                  NotPermitted; (``writes_only``) reads pass, writes print the RBAC block
=========================  =====  ====================================================================

What the lab had to choose where no public source speaks (AZURE.md §2, §4): the texts of
``extension-missing``, ``capture-name-conflict`` and ``capture-quota``; ``AgentStopped`` as the
``packetCaptureError`` of a capture whose agent cannot run (the value is in the REST enum, the
circumstances are the lab's); and ``BytesExceeded`` as the ``stopReason`` of a byte-limited
capture (only ``Manual`` [REC] and ``TimeExceeded`` [DOC] are documented). ``capture-no-traffic``'s
blob is the 24-byte libpcap global header and no record (a writer that saw nothing): no public source
shows what the agent uploads for an idle window, and a 0-byte file is not a capture the engine reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from netghost.lab.az._errors import AzError, arm_error, plain_error, storage_error
from netghost.lab.world import CLOUD_FAULT_KINDS, CloudFaultSpec

__all__ = [
    "CLOUD_FAULT_KINDS",
    "STORAGE_RBAC_TEXT",
    "WATCHER_EXTENSIONS",
    "capture_conflict",
    "capture_quota",
    "create_lost",
    "download_failure",
    "extension_missing",
    "find_fault",
    "internal_server_error",
    "key_auth_not_permitted",
    "no_watcher",
    "storage_auth_failure",
]

# the Network Watcher agent's extension names (AZURE.md §2), lowercased
WATCHER_EXTENSIONS = frozenset({"networkwatcheragentlinux", "networkwatcheragentwindows"})

STORAGE_RBAC_TEXT = (
    "ERROR: \n"
    "You do not have the required permissions needed to perform this operation.\n"
    "Depending on your operation, you may need to be assigned one of the following roles:\n"
    '    "Storage Blob Data Owner"\n'
    '    "Storage Blob Data Contributor"\n'
    '    "Storage Blob Data Reader"\n'
    '    "Storage Queue Data Contributor"\n'
    '    "Storage Queue Data Reader"\n'
    '    "Storage Table Data Contributor"\n'
    '    "Storage Table Data Reader"\n'
    "\n"
    'If you want to use the old authentication method and allow querying for the right account key, '
    'please use the "--auth-mode" parameter and "key" value.\n'
    "                    \n"
)

KEY_MODE_WARNING = (
    "WARNING: \n"
    "There are no credentials provided in your command and environment, we will query for account key "
    "for your storage account.\n"
    "It is recommended to provide --connection-string, --account-key or --sas-token in your command as "
    "credentials.\n"
    "\n"
    "You also can add `--auth-mode login` in your command to use Azure Active Directory (Azure AD) for "
    "authorization if your login account is assigned required RBAC roles.\n"
    "For more information about RBAC roles in storage, visit "
    "https://learn.microsoft.com/azure/storage/common/storage-auth-aad-rbac-cli.\n"
    "\n"
    "In addition, setting the corresponding environment variables can avoid inputting credentials in your "
    "command. Please use --help to get more information about environment variable usage.\n"
)


def find_fault(faults: Sequence[CloudFaultSpec], kind: str, *, vm: str | None = None,
               region: str | None = None, account: str | None = None) -> CloudFaultSpec | None:
    """The first fault of ``kind`` whose optional scope (vm, region, account) matches."""
    for fault in faults:
        if fault.kind != kind:
            continue
        if fault.vm is not None and (vm is None or fault.vm.lower() != vm.lower()):
            continue
        if fault.region is not None and (region is None or fault.region.lower() != region.lower()):
            continue
        if fault.account is not None and (account is None or fault.account != account):
            continue
        return fault
    return None


def no_watcher(location: str) -> AzError:
    """[RUN] ``ERROR: network watcher is not enabled for region westus3.`` (exit 1)."""
    return plain_error(f"network watcher is not enabled for region {location}.")


def extension_missing(vm_id: str, fault: CloudFaultSpec | None) -> AzError:
    """No public source has the real text (AZURE.md §2); this default names the extension."""
    message = (fault.message if fault and fault.message else
               f"The Network Watcher agent VM extension (AzureNetworkWatcherExtension) is not installed "
               f"on virtual machine '{vm_id}'. Install the extension and retry the operation.")
    return arm_error("AzureNetworkWatcherExtensionNotInstalled", message, 1)


def internal_server_error() -> AzError:
    """The real service-side failure (WALinuxAgent #2765): ``(InternalServerError) An error occurred.``"""
    return arm_error("InternalServerError", "An error occurred.", 1)


def storage_auth_failure() -> AzError:
    return AzError(1, STORAGE_RBAC_TEXT)


def key_auth_not_permitted(time_text: str) -> AzError:
    """Azure Storage's 403 when the account disallows shared-key access (``allowSharedKeyAccess: false``)."""
    return storage_error("Key based authentication is not permitted on this storage account.",
                         "KeyBasedAuthenticationNotPermitted", time_text, exit_code=1)


def download_failure(time_text: str) -> AzError:
    """Azure Storage's 500 ``InternalError`` text, exit 1."""
    return storage_error("Server encountered an internal error. Please try again after some time.",
                         "InternalError", time_text, exit_code=1)


def capture_conflict(name: str, watcher: str, fault: CloudFaultSpec | None) -> AzError:
    message = (fault.message if fault and fault.message else
               f"Packet capture session '{name}' already exists in network watcher '{watcher}'. "
               "Use a different name or delete the existing session.")
    return arm_error("PacketCaptureSessionAlreadyExists", message, 1)


def capture_quota(location: str, limit: int, fault: CloudFaultSpec | None) -> AzError:
    message = (fault.message if fault and fault.message else
               f"The number of concurrent packet capture sessions in region '{location}' has reached the "
               f"limit of {limit} for this subscription.")
    return arm_error("PacketCaptureQuotaExceeded", message, 1)


def create_lost(fault: CloudFaultSpec) -> AzError:
    """A create whose outcome the caller cannot know: the session exists, the call failed.

    Default: the real service-side failure text (AZURE.md §4); ``message`` overrides it, e.g. with
    a client-side read timeout.
    """
    if fault.message:
        return plain_error(fault.message)
    return internal_server_error()
