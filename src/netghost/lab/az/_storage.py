"""``az storage container exists|create``, ``az storage blob list|show|download|delete|exists``, ``az storage account show``.

Authentication follows AZURE.md T2: ``--auth-mode login`` needs data-plane RBAC (else the
"You do not have the required permissions" block, exit 1); the default ``key`` mode prints the
multi-line WARNING on stderr and proceeds. Missing blobs and containers are storage 404s: exit 3
with the ``RequestId``/``Time``/``ErrorCode`` form.

An account no world holds fails as the real CLI fails: in key mode (and ``storage account show``
without ``-g``) the CLI looks the account up in the subscription's list first and its validator stops
with ``Storage account 'NAME' not found.`` (a validation error: exit 2); in login mode it asks for no
key, goes straight to ``NAME.blob.core.windows.net`` and fails to connect (exit 1; the real CLI retries
for about 90 s first, which the simulator does not wait).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netghost.lab.az._args import Arg, CommandSpec, ParsedArgs
from netghost.lab.az._cloud_faults import (
    KEY_MODE_WARNING,
    download_failure,
    find_fault,
    key_auth_not_permitted,
    storage_auth_failure,
)
from netghost.lab.az._context import AzContext, Command, id_parts, int_arg
from netghost.lab.az._errors import AzError, not_found, plain_error, storage_error
from netghost.lab.clock import format_azure_time
from netghost.lab.world import StorageAccount, World

__all__ = ["COMMANDS", "storage_account_doc"]

_ACCOUNT_ARGS = (
    Arg("--account-key"), Arg("--account-name"), Arg("--blob-endpoint"), Arg("--connection-string"), Arg("--sas-token"),
)
_AUTH = Arg("--auth-mode", choices=("key", "login"))
_NO_HOST = ("<urllib3.connection.HTTPSConnection object at 0x7f2c8e1b5d10>: Failed to resolve '{host}' "
            "([Errno -2] Name or service not known)")
"""azure-core's ServiceRequestError text for a host DNS does not know (the account does not exist)."""
_PRECONDITIONS = (Arg("--if-match"), Arg("--if-modified-since"), Arg("--if-none-match"),
                  Arg("--if-unmodified-since"), Arg("--tags-condition"))


def _iso(ts: float) -> str:
    return format_azure_time(ts, 0).replace("Z", "+00:00")


def _account(ctx: AzContext, args: ParsedArgs, write: bool = False) -> StorageAccount:
    """Resolve the account and check credentials the way the data plane would (``write``: a write call)."""
    name = args["account_name"] or ctx.env.get("AZURE_STORAGE_ACCOUNT")
    if args["blob_url"] and not name:
        name = args["blob_url"].split("//", 1)[-1].split(".", 1)[0]
    if not name:
        raise plain_error("Missing credentials to access storage service. The following variations are accepted:\n"
                          "    (1) account name and key (--account-name and --account-key options or\n"
                          "        set AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY environment variables)\n"
                          "    (2) account name and SAS token (--sas-token option used with either the --account-name\n"
                          "        option or AZURE_STORAGE_ACCOUNT environment variable)\n"
                          "    (3) account name (--account-name; login credentials used with --auth-mode login)")
    account = next((a for a in ctx.world.spec.storage_accounts if a.name == name), None)
    mode = args["auth_mode"] or ctx.env.get("AZURE_STORAGE_AUTH_MODE") or "key"
    if account is None and mode == "login":
        raise plain_error(_NO_HOST.format(host=f"{name}.blob.core.windows.net"))
    keyless = not (args["account_key"] or args["sas_token"] or args["connection_string"])
    if account is None:
        if keyless:  # the CLI warns, then looks the account up to ask for its key
            ctx.warn(KEY_MODE_WARNING)
        raise plain_error(f"Storage account '{name}' not found.", 2)
    refused = any(f.kind == "storage-auth-failure" and f.auth_mode == mode and f.account in (None, name)
                  and (write or not f.writes_only) for f in ctx.state.cloud_faults())
    if mode == "login":
        if refused or not account.data_plane_rbac:
            raise storage_auth_failure()
        return account
    if keyless:
        ctx.warn(KEY_MODE_WARNING)
    if refused or (not account.allow_shared_key_access and not args["sas_token"]):
        raise key_auth_not_permitted(ctx.now_text())
    return account


def _container_blobs(ctx: AzContext, account: str, container: str) -> dict[str, Any]:
    blobs = ctx.state.storage().get(account, {}).get(container)
    if blobs is None:
        raise storage_error("The specified container does not exist.", "ContainerNotFound", ctx.now_text())
    return blobs


def _names(args: ParsedArgs) -> tuple[str, str]:
    if args["blob_url"]:
        rest = args["blob_url"].split(".blob.core.windows.net/", 1)[-1].split("?", 1)[0]
        container, _, blob = rest.partition("/")
        return container, blob
    if not args["container_name"] or not args["name"]:
        raise AzError(2, "ERROR: usage error: --blob-url URL | --container-name NAME --name NAME\n")
    return args["container_name"], args["name"]


def _visible(ctx: AzContext, blobs: dict[str, Any], name: str) -> dict[str, Any] | None:
    meta = blobs.get(name)
    if meta is None or float(meta["available_at"]) > ctx.now():
        return None
    return dict(meta)


def blob_doc(container: str, name: str, meta: dict[str, Any], content_range: bool) -> dict[str, Any]:
    """A blob's properties as ``download`` (and, without range, ``list``) print them."""
    size = int(meta["size"])
    return {
        "container": container, "content": "", "contentMd5": None, "deleted": False, "encryptedMetadata": None,
        "encryptionKeySha256": None, "encryptionScope": None, "hasLegalHold": None, "hasVersionsOnly": None,
        "immutabilityPolicy": {"expiryTime": None, "policyMode": None}, "isAppendBlobSealed": None,
        "isCurrentVersion": None, "lastAccessedOn": None, "metadata": {}, "name": name,
        "objectReplicationDestinationPolicy": None, "objectReplicationSourceProperties": [],
        "properties": {
            "appendBlobCommittedBlockCount": None, "blobTier": None, "blobTierChangeTime": None,
            "blobTierInferred": None, "blobType": "BlockBlob", "contentLength": size,
            "contentRange": f"bytes 0-{max(size - 1, 0)}/{size}" if content_range else None,
            "contentSettings": {"cacheControl": None, "contentDisposition": None, "contentEncoding": None,
                                "contentLanguage": None, "contentMd5": None, "contentType": "application/octet-stream"},
            "copy": {"completionTime": None, "destinationSnapshot": None, "id": None, "incrementalCopy": None,
                     "progress": None, "source": None, "status": None, "statusDescription": None},
            "creationTime": _iso(float(meta["created"])), "deletedTime": None, "etag": meta["etag"],
            "lastModified": _iso(float(meta["created"])),
            "lease": {"duration": None, "state": "available", "status": "unlocked"},
            "pageBlobSequenceNumber": None, "pageRanges": None, "rehydrationStatus": None,
            "remainingRetentionDays": None, "serverEncrypted": True,
        },
        "rehydratePriority": None, "requestServerEncrypted": True, "snapshot": None, "tagCount": None,
        "tags": None, "versionId": None,
    }


def _container_exists(ctx: AzContext, args: ParsedArgs) -> Any:
    account = _account(ctx, args)
    return {"exists": args["name"] in ctx.state.storage().get(account.name, {})}


def _container_create(ctx: AzContext, args: ParsedArgs) -> Any:
    """``{"created": true}``, or ``false`` when it exists (``--fail-on-exist`` makes that an error)."""
    account = _account(ctx, args, write=True)
    name = args["name"]
    if name in ctx.state.storage().get(account.name, {}):
        if args["fail_on_exist"]:
            raise storage_error("The specified container already exists.", "ContainerAlreadyExists",
                                ctx.now_text(), exit_code=1)
        return {"created": False}
    ctx.state.ensure_container(account.name, name)
    return {"created": True}


def _blob_show(ctx: AzContext, args: ParsedArgs) -> Any:
    account = _account(ctx, args)
    container, name = _names(args)
    meta = _visible(ctx, _container_blobs(ctx, account.name, container), name)
    if meta is None:
        raise storage_error("The specified blob does not exist.", "BlobNotFound", ctx.now_text())
    return blob_doc(container, name, meta, content_range=False)


def _blob_exists(ctx: AzContext, args: ParsedArgs) -> Any:
    account = _account(ctx, args)
    container, name = _names(args)
    blobs = ctx.state.storage().get(account.name, {}).get(container, {})
    return {"exists": _visible(ctx, blobs, name) is not None}


def _blob_list(ctx: AzContext, args: ParsedArgs) -> Any:
    account = _account(ctx, args)
    blobs = _container_blobs(ctx, account.name, args["container_name"])
    prefix = args["prefix"] or ""
    out = []
    for name in sorted(blobs):
        meta = _visible(ctx, blobs, name)
        if meta is not None and name.startswith(prefix):
            out.append(blob_doc(args["container_name"], name, meta, content_range=False))
    limit = args["num_results"]
    if limit and limit != "*":
        out = out[: int_arg(limit, "--num-results", 1, 5000)]
    return out


def _blob_download(ctx: AzContext, args: ParsedArgs) -> Any:
    account = _account(ctx, args)
    container, name = _names(args)
    blobs = _container_blobs(ctx, account.name, container)
    meta = _visible(ctx, blobs, name)
    if meta is None:
        raise storage_error("The specified blob does not exist.", "BlobNotFound", ctx.now_text())
    fault = find_fault(ctx.state.cloud_faults(), "download-failure", account=account.name)
    if fault is not None and ctx.state.bump_counter("download-failure") <= fault.count:
        raise download_failure(ctx.now_text())
    body = ctx.state.blob_body(meta)
    if not args["file"]:  # "If not specified, stdout will be used" (pipe support): raw bytes only
        return body
    if args["file"]:
        target = Path(args["file"])
        if Path(ctx.cwd, target).exists() and args["overwrite"] is False:
            raise plain_error(f"The specified path already exists. Please change the path or set --overwrite to true: {target}")
        try:
            ctx.write_file(args["file"], body)  # the caller's directory and umask, as the real az writes
        except OSError as exc:
            raise plain_error(f"[Errno {exc.errno}] {exc.strerror}: '{args['file']}'") from exc
    return blob_doc(container, name, meta, content_range=True)


def _blob_delete(ctx: AzContext, args: ParsedArgs) -> Any:
    account = _account(ctx, args, write=True)
    container, name = _names(args)
    blobs = _container_blobs(ctx, account.name, container)
    if _visible(ctx, blobs, name) is None or not ctx.state.delete_blob(account.name, container, name):
        raise storage_error("The specified blob does not exist.", "BlobNotFound", ctx.now_text())
    return None


def _network_rules(world: World, account: StorageAccount) -> dict[str, Any]:
    """``networkRuleSet``: the firewall of the account's public endpoint (subnets through their service
    endpoint, public addresses), as the storage GET prints it."""
    rules = []
    for ref_ in account.virtual_network_rules:
        vnet = world.vnet(ref_.partition("/")[0])
        subnet = next((s for s in vnet.subnets if s.name == ref_.partition("/")[2]), None) if vnet else None
        if vnet is not None and subnet is not None:
            rules.append({"action": "Allow", "state": "Succeeded", "virtualNetworkResourceId": world.subnet_id(vnet, subnet)})
    # the SDK's names, as az prints them (ARM's networkAcls says id and value: lab ARM renames them)
    return {"bypass": "AzureServices", "defaultAction": account.default_action,
            "ipRules": [{"action": "Allow", "ipAddressOrRange": value} for value in account.ip_rules],
            "ipv6Rules": [], "resourceAccessRules": [], "virtualNetworkRules": rules}


def storage_account_doc(world: World, account: StorageAccount) -> dict[str, Any]:
    sid = world.rid(account.resource_group, "Microsoft.Storage/storageAccounts", account.name)
    location = account.location or world.rg_location(account.resource_group)
    return {
        "accessTier": "Hot", "allowBlobPublicAccess": False, "allowSharedKeyAccess": account.allow_shared_key_access,
        "creationTime": "2026-01-15T09:00:00+00:00", "enableHttpsTrafficOnly": True, "id": sid,
        "kind": "StorageV2", "location": location, "minimumTlsVersion": "TLS1_2", "name": account.name,
        "primaryEndpoints": {"blob": f"https://{account.name}.blob.core.windows.net/",
                             "dfs": f"https://{account.name}.dfs.core.windows.net/",
                             "file": f"https://{account.name}.file.core.windows.net/",
                             "queue": f"https://{account.name}.queue.core.windows.net/",
                             "table": f"https://{account.name}.table.core.windows.net/",
                             "web": f"https://{account.name}.z13.web.core.windows.net/"},
        "networkRuleSet": _network_rules(world, account),
        "primaryLocation": location, "provisioningState": "Succeeded",
        "publicNetworkAccess": account.public_network_access,
        "resourceGroup": account.resource_group, "sku": {"name": "Standard_LRS", "tier": "Standard"},
        "statusOfPrimary": "available", "tags": {}, "type": "Microsoft.Storage/storageAccounts",
        "etag": None,
    }


def _account_show(ctx: AzContext, args: ParsedArgs) -> Any:
    name = args["name"] or (id_parts(args["ids"][0])[-1] if args["ids"] else None)
    if not name:
        raise AzError(2, "ERROR: (--name | --ids) are required\n")
    account = next((a for a in ctx.world.spec.storage_accounts if a.name == name), None)
    rg = args["resource_group"] or (id_parts(args["ids"][0])[4] if args["ids"] else "") or \
        (account.resource_group if account else "")
    if account is None or account.resource_group.lower() != rg.lower():
        if args["resource_group"] or args["ids"]:
            raise not_found(f"Microsoft.Storage/storageAccounts/{name}", rg)
        # the real CLI's validator found no such name in the subscription's account list
        raise plain_error(f"Storage account '{name}' not found.", 2)
    return storage_account_doc(ctx.world, account)


def _account_list(ctx: AzContext, args: ParsedArgs) -> Any:
    """Every account in the subscription, or in one group (``az storage account list [-g]``)."""
    rg = args["resource_group"]
    if rg and not any(g.name.lower() == rg.lower() for g in ctx.world.spec.resource_groups):
        raise plain_error(f"Resource group '{rg}' could not be found.", 3)
    return [storage_account_doc(ctx.world, a) for a in ctx.world.spec.storage_accounts
            if not rg or a.resource_group.lower() == rg.lower()]


COMMANDS = [
    Command(CommandSpec(("storage", "container", "exists"), (
        Arg("--name", "-n", required=True), _AUTH, Arg("--timeout"), *_ACCOUNT_ARGS,
    ), (("Check for the existence of a storage container. (autogenerated)",
         "az storage container exists --account-name mystorageccount --account-key 00000000 --name mycontainer"),),
        policy=True), _container_exists),
    Command(CommandSpec(("storage", "container", "create"), (
        Arg("--name", "-n", required=True), _AUTH, Arg("--default-encryption-scope", "-d"),
        Arg("--fail-on-exist", kind="flag"), Arg("--metadata", kind="many"),
        Arg("--prevent-encryption-scope-override", "-p", choices=("false", "true")),
        Arg("--public-access", choices=("blob", "container", "off")), Arg("--resource-group", "-g"),
        Arg("--timeout"), *_ACCOUNT_ARGS,
    ), (("Create a storage container in a storage account.",
         "az storage container create -n mystoragecontainer --account-name mystorageaccount"),), policy=True),
        _container_create),
    Command(CommandSpec(("storage", "blob", "show"), (
        _AUTH, Arg("--blob-url"), Arg("--container-name", "-c"), Arg("--lease-id"), Arg("--name", "-n"),
        Arg("--snapshot"), Arg("--timeout"), Arg("--version-id"), *_PRECONDITIONS, *_ACCOUNT_ARGS,
    ), policy=True), _blob_show),
    Command(CommandSpec(("storage", "blob", "exists"), (
        _AUTH, Arg("--blob-url"), Arg("--container-name", "-c"), Arg("--name", "-n"), Arg("--snapshot"),
        Arg("--timeout"), *_ACCOUNT_ARGS,
    ), policy=True), _blob_exists),
    Command(CommandSpec(("storage", "blob", "list"), (
        Arg("--container-name", "-c", required=True), _AUTH, Arg("--delimiter"), Arg("--include"), Arg("--marker"),
        Arg("--num-results"), Arg("--prefix"), Arg("--show-next-marker", kind="flag"), Arg("--timeout"), *_ACCOUNT_ARGS,
    ), (("List all storage blobs in a container whose names start with 'foo'; will match names such as 'foo', 'foobar', and 'foo/bar'",
         "az storage blob list -c mycontainer --prefix foo"),)), _blob_list),
    Command(CommandSpec(("storage", "blob", "download"), (
        _AUTH, Arg("--blob-url"), Arg("--container-name", "-c"), Arg("--end-range"), Arg("--file", "-f"),
        Arg("--lease-id"), Arg("--max-connections"), Arg("--name", "-n"), Arg("--no-progress", kind="flag"),
        Arg("--open-mode"), Arg("--overwrite", kind="optbool", default=True), Arg("--snapshot"), Arg("--start-range"),
        Arg("--timeout"), Arg("--validate-content", kind="flag"), Arg("--version-id"), *_PRECONDITIONS, *_ACCOUNT_ARGS,
    ), policy=True), _blob_download),
    Command(CommandSpec(("storage", "blob", "delete"), (
        _AUTH, Arg("--blob-url"), Arg("--container-name", "-c"), Arg("--delete-snapshots", choices=("include", "only")),
        Arg("--lease-id"), Arg("--name", "-n"), Arg("--snapshot"), Arg("--timeout"), *_PRECONDITIONS, *_ACCOUNT_ARGS,
    ), policy=True), _blob_delete),
    Command(CommandSpec(("storage", "account", "show"), (
        Arg("--ids", kind="many"), Arg("--name", "-n"), Arg("--resource-group", "-g"), Arg("--expand"),
    )), _account_show),
    Command(CommandSpec(("storage", "account", "list"), (
        Arg("--resource-group", "-g"),
    ), (("List all storage accounts in a subscription.", "az storage account list"),
        ("List all storage accounts in a resource group.", "az storage account list -g MyResourceGroup")),
        ), _account_list),
]
