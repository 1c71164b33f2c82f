"""How ``az`` reports failures: the three error forms and their exit codes.

azure-cli maps any HTTP 404 to exit 3, argparse errors to exit 2 and everything else to exit 1,
and prints every error on stderr with an ``ERROR: `` prefix (AZURE.md §4). Three forms occur:

* ARM errors: ``ERROR: (Code) Message`` then ``Code: ...`` and ``Message: ...`` lines;
* storage data-plane errors: the message, then ``RequestId:``, ``Time:`` and ``ErrorCode:`` lines;
* plain CLI errors: ``ERROR: <text>`` (validation, "network watcher is not enabled ...").
"""

from __future__ import annotations

import uuid

from netghost.errors import AzError

__all__ = ["AzError", "arm_error", "not_found", "plain_error", "storage_error"]




def arm_error(code: str, message: str, exit_code: int | None = None) -> AzError:
    """An ARM error; 404-class codes exit 3 unless ``exit_code`` says otherwise."""
    if exit_code is None:
        exit_code = 3 if code in {"ResourceNotFound", "ResourceGroupNotFound", "NotFound"} else 1
    return AzError(exit_code, f"ERROR: ({code}) {message}\nCode: {code}\nMessage: {message}\n")


def not_found(type_and_name: str, rg: str) -> AzError:
    """``(ResourceNotFound)`` as ARM words it for a missing resource in an existing group."""
    return arm_error(
        "ResourceNotFound",
        f"The Resource '{type_and_name}' under resource group '{rg}' was not found. "
        "For more details please go to https://aka.ms/ARMResourceNotFoundFix",
    )


def plain_error(text: str, exit_code: int = 1) -> AzError:
    return AzError(exit_code, f"ERROR: {text}\n")


def storage_error(message: str, error_code: str, time_text: str, exit_code: int = 3) -> AzError:
    """A storage data-plane error (``BlobNotFound``, ``ContainerNotFound``, ``InternalError``)."""
    request_id = uuid.uuid4()
    return AzError(
        exit_code, f"ERROR: {message}\nRequestId:{request_id}\nTime:{time_text}\nErrorCode:{error_code}\n"
    )
