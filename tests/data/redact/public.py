"""Public material that looks like secrets and must come back untouched: SSH public keys, certificates and
public keys (PEM and single-line base64), JWKS documents, thumbprints, ARM skip tokens and ``nextLink``,
hashes, etags, GUIDs and resource ids in az output, and error texts printed by secret-sounding commands."""

from __future__ import annotations

import base64
import hashlib
import json
import random

from tests.data.redact._common import Gen, Sample, b64, guid, hexs, rid, wrap_output

__all__ = ["BENIGN"]

_SPKI_RSA = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
_CERT = bytes.fromhex("3082031f30820207a003020102")  # Certificate, tbsCertificate, [0] version v3


def _ssh_blob(rng: random.Random, algo: str) -> str:
    def field(b: bytes) -> bytes:
        return len(b).to_bytes(4, "big") + b

    name = algo.encode()
    if algo == "ssh-rsa":
        body = field(name) + field(b"\x01\x00\x01") + field(b"\x00" + rng.randbytes(rng.choice([256, 384, 512])))
    elif algo == "ssh-ed25519":
        body = field(name) + field(rng.randbytes(32))
    else:
        body = field(name) + field(b"nistp256") + field(b"\x04" + rng.randbytes(64))
    return base64.b64encode(body).decode()


def ssh_public(rng: random.Random) -> Sample:
    algo = rng.choice(["ssh-rsa", "ssh-ed25519", "ecdsa-sha2-nistp256"])
    blob = _ssh_blob(rng, algo)
    line = f"{algo} {blob} azureuser@jump-{rng.randint(1, 9)}"
    form = rng.choice(["authorized_keys", "json", "known_hosts", "yaml", "hashed-known-hosts"])
    if form == "authorized_keys":
        text = f'no-port-forwarding,from="10.0.0.0/8" {line}\n{algo} {_ssh_blob(rng, algo)}\n'
    elif form == "json":
        text = json.dumps({"linuxConfiguration": {"disablePasswordAuthentication": True, "ssh": {"publicKeys": [
            {"keyData": line + "\n", "path": "/home/azureuser/.ssh/authorized_keys"}]}}}, indent=2)
    elif form == "known_hosts":
        text = f"10.0.0.4 {algo} {blob}\nvm1.contoso.com,10.0.0.5 {algo} {_ssh_blob(rng, algo)}\n"
    elif form == "yaml":
        text = f"users:\n  - name: azureuser\n    ssh_authorized_keys:\n      - {line}\n"
    else:
        text = f"|1|{b64(rng, 20)}|{b64(rng, 20)} {algo} {blob}\n"
    return Sample("public-ssh-key", wrap_output(rng, text), keep=(blob,), why="an SSH public key is public")


def pem_public(rng: random.Random) -> Sample:
    der = (_SPKI_RSA + rng.randbytes(256) + b"\x02\x03\x01\x00\x01") if rng.random() < 0.5 else (_CERT + rng.randbytes(rng.choice([500, 800])))
    body = base64.b64encode(der).decode()
    label = "PUBLIC KEY" if der.startswith(_SPKI_RSA) else "CERTIFICATE"
    form = rng.choice(["pem", "pem", "json-cer", "json-x5c", "kubeconfig", "escaped-pem"])
    if form == "pem":
        lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
        text = f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----\n"
    elif form == "json-cer":
        text = json.dumps({"cer": body, "id": "https://kv.vault.azure.net/certificates/web/" + hexs(rng, 16),
                           "x509ThumbprintHex": hexs(rng, 20, upper=True)}, indent=2)
    elif form == "json-x5c":
        text = json.dumps({"publicKeyCertificate": body, "x5c": [body]}, indent=2)
    elif form == "kubeconfig":
        pem = f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"
        body = base64.b64encode(pem.encode()).decode()
        text = f"clusters:\n- cluster:\n    certificate-authority-data: {body}\n    server: https://aks-ghost.hcp.westeurope.azmk8s.io:443\n  name: aks-ghost\n"
    else:
        lines = "\\n".join(body[i:i + 64] for i in range(0, len(body), 64))
        text = json.dumps({"certificate": "PLACEHOLDER"}).replace("PLACEHOLDER", f"-----BEGIN {label}-----\\n{lines}\\n-----END {label}-----\\n")
        body = body[:64]
    return Sample("public-pem", wrap_output(rng, text), keep=(body,), why="certificates and public keys are public")


def jwks(rng: random.Random) -> Sample:
    keys = []
    for _ in range(rng.randint(1, 3)):
        n = b64(rng, 256, urlsafe=rng.random() < 0.7, pad=rng.random() < 0.3)
        cert = base64.b64encode(_CERT + rng.randbytes(700)).decode()
        keys.append({"kty": "RSA", "use": "sig", "kid": b64(rng, 20, urlsafe=True, pad=False),
                     "x5t": b64(rng, 20, urlsafe=True, pad=False), "n": n, "e": "AQAB", "x5c": [cert],
                     "issuer": f"https://login.microsoftonline.com/{guid(rng)}/v2.0"})
    if rng.random() < 0.4:
        kv = {"key": {"kid": f"https://kv-ghost.vault.azure.net/keys/cmk/{hexs(rng, 16)}", "kty": "RSA-HSM",
                      "keyOps": ["wrapKey", "unwrapKey"], "n": keys[0]["n"], "e": "AQAB"},
              "attributes": {"enabled": True, "recoveryLevel": "Recoverable+Purgeable"}}
        text = json.dumps(kv, indent=2)
    else:
        text = json.dumps({"keys": keys}, indent=rng.choice([None, 2]))
    return Sample("public-jwk", text, keep=tuple(str(keys[0][k]) for k in ("n", "kid", "x5t")),
                  command=rng.choice([None, "az keyvault key show --vault-name kv-ghost -n cmk", "curl -s https://login.microsoftonline.com/common/discovery/v2.0/keys"]),
                  why="JWK moduli, exponents, thumbprints and key ids are public")


def thumbprints(rng: random.Random) -> Sample:
    sha1 = hashlib.sha1(rng.randbytes(8)).hexdigest().upper()
    x5t = base64.urlsafe_b64encode(bytes.fromhex(sha1)).decode().rstrip("=")
    text = rng.choice([
        json.dumps([{"name": "web", "thumbprint": sha1, "expirationDate": "2027-01-01T00:00:00+00:00",
                     "subjectName": "CN=web.contoso.com", "x5t": x5t}], indent=2),
        f"Thumbprint                                Subject\n----------                                -------\n{sha1}  CN=web.contoso.com\n",
        f"SHA1 Fingerprint={':'.join(sha1[i:i + 2] for i in range(0, 40, 2))}\n",
        json.dumps({"customKeyIdentifier": sha1, "keyId": guid(rng), "type": "AsymmetricX509Cert", "usage": "Verify"}, indent=2),
        f"{sha1}\n",
    ])
    return Sample("public-thumbprint", text, keep=(sha1[:20],),
                  command=rng.choice([None, "az webapp config ssl list -g rg", "az ad app credential list --id x --query [].customKeyIdentifier -o tsv"]),
                  why="a certificate thumbprint is a hash of public data")


def skip_tokens(rng: random.Random) -> Sample:
    marker = base64.b64encode(json.dumps({"nextMarker": f"2!{rng.randint(100, 999)}!{b64(rng, 30)}", "skip": 100}).encode()).decode()
    binary = b64(rng, 48)
    sub = guid(rng)
    tok = rng.choice([marker, binary, b64(rng, 60, urlsafe=True, pad=False)])
    enc = tok.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    text = rng.choice([
        json.dumps({"nextLink": f"https://management.azure.com/subscriptions/{sub}/providers/Microsoft.Network/networkInterfaces?api-version=2024-05-01&%24skiptoken={enc}",
                    "value": [{"id": rid(rng, "Microsoft.Network", "networkInterfaces/nic1"), "name": "nic1"}]}, indent=2),
        json.dumps({"$skipToken": tok, "count": 100, "data": [], "totalRecords": 1433}, indent=2),
        json.dumps({"skip_token": tok, "count": 1000, "total_records": 5120}, indent=2),
        json.dumps({"continuationToken": tok, "value": []}),
        f"WARNING: Next Marker: {tok}\n",
    ])
    return Sample("public-skip-token", text, keep=(tok[:24],), why="paging cursors are not credentials")


def az_ids(rng: random.Random) -> Sample:
    blobs = [{"container": "captures", "name": f"ghost_vm{i}.pcap", "properties": {
        "contentSettings": {"contentMd5": b64(rng, 16), "contentType": "application/octet-stream"},
        "etag": f"0x8DC{hexs(rng, 6, upper=True)}", "lastModified": "2026-05-22T11:42:07+00:00",
        "contentLength": rng.randint(10**5, 10**9)}, "versionId": "2026-05-22T11:42:07.1234567Z"} for i in range(rng.randint(1, 3))]
    text = rng.choice([
        json.dumps(blobs, indent=2),
        json.dumps({"digest": f"sha256:{hexs(rng, 32)}", "tags": ["v1.4"], "timestamp": "2026-05-22T11:42:07Z",
                    "imageDigest": f"sha256:{hexs(rng, 32)}", "configMediaType": "application/vnd.oci.image.config.v1+json"}, indent=2),
        json.dumps({"id": rid(rng, "Microsoft.Network", "virtualNetworks/vnet1"), "etag": f'W/"{guid(rng)}"',
                    "resourceGuid": guid(rng), "properties": {"fileHash": b64(rng, 32), "sha256": hexs(rng, 32)}}, indent=2),
        f"x-ms-request-id: {guid(rng)}\nx-ms-correlation-request-id: {guid(rng)}\nETag: \"{hexs(rng, 16)}\"\n"
        f"Content-MD5: {b64(rng, 16)}\nx-ms-content-crc64: {b64(rng, 8)}\nx-ms-version: 2023-11-03\n",
    ])
    return Sample("public-hashes-ids", wrap_output(rng, text), why="hashes, etags, GUIDs and ids in az output")


def error_texts(rng: random.Random) -> Sample:
    req = guid(rng)
    key_warning = (
        "WARNING: \nThere are no credentials provided in your command and environment, we will query for account key "
        "for your storage account.\nIt is recommended to provide --connection-string, --account-key or --sas-token in your "
        "command as credentials.\n\nYou also can add `--auth-mode login` in your command to use Azure Active Directory (Azure AD) "
        "for authorization if your login account is assigned required RBAC roles.\nFor more information about RBAC roles in "
        "storage, visit https://learn.microsoft.com/azure/storage/common/storage-auth-aad-rbac-cli.\n\nIn addition, setting the "
        "corresponding environment variables can avoid inputting credentials in your command. Please use --help to get more "
        "information about environment variable usage.\n"
    )
    text, command = rng.choice([
        (key_warning + f"ERROR: The specified blob does not exist.\nRequestId:{req}\nTime:2026-05-22T11:42:07.0000000Z\nErrorCode:BlobNotFound\n",
         "az storage blob download --account-name ghoststore -c captures -n cap.pcap -f cap.pcap --auth-mode key"),
        (key_warning + f"ERROR: Key based authentication is not permitted on this storage account.\nRequestId:{req}\nTime:2026-05-22T11:42:07.0000000Z\nErrorCode:KeyBasedAuthenticationNotPermitted\n",
         "az storage container exists --account-name ghoststore -n captures --auth-mode key"),
        ("ERROR: (SecretNotFound) A secret with (name/id) db-password was not found in this key vault. If you recently deleted "
         "this secret you may be able to recover it using the correct recovery command.\nCode: SecretNotFound\n"
         "Message: A secret with (name/id) db-password was not found in this key vault.\nInner error: {\n    \"code\": \"SecretNotFound\"\n}\n",
         "az keyvault secret show --vault-name kv-ghost -n db-password"),
        (f"ERROR: (AuthorizationFailed) The client 'jdoe@contoso.com' with object id '{guid(rng)}' does not have authorization "
         f"to perform action 'Microsoft.Storage/storageAccounts/listKeys/action' over scope '{rid(rng, 'Microsoft.Storage', 'storageAccounts/ghoststore')}' "
         f"or the scope is invalid.\nCode: AuthorizationFailed\n", "az storage account keys list -g rg -n ghoststore"),
        ("ERROR: The password must be between 12 and 123 characters, and have 3 of: a lower case, an upper case, a digit, a special character.\n",
         "az vm create -g rg -n vm1 --image Ubuntu2204 --admin-username azureuser --admin-password ***"),
        (f"ERROR: Operation returned an invalid status 'Forbidden'\nInvalidAuthenticationTokenTenant: The access token is from the wrong issuer.\nCorrelation ID: {req}\n",
         "az account get-access-token --resource https://management.azure.com"),
        ("WARNING: This command is in preview and under development.\nWARNING: Command group 'network vpn-connection shared-key' is deprecated.\n"
         "ERROR: (ResourceNotFound) The Resource 'Microsoft.Network/connections/cn1' under resource group 'rg' was not found.\nCode: ResourceNotFound\n",
         "az network vpn-connection shared-key show -g rg --connection-name cn1 -n default"),
        ("ERROR: Unable to decrypt the private key: bad decrypt\nHINT: check -passin\n", "openssl pkcs12 -in cert.pfx -nokeys -passin env:PFX_PASSWORD"),
    ])
    return Sample("public-error-text", text, keep=tuple(line for line in text.splitlines() if line.startswith(("ErrorCode:", "WARNING:", "Code:"))),
                  command=command, why="warnings and errors say why a command failed")


BENIGN: dict[str, Gen] = {
    "public-ssh-key": ssh_public,
    "public-pem": pem_public,
    "public-jwk": jwks,
    "public-thumbprint": thumbprints,
    "public-skip-token": skip_tokens,
    "public-hashes-ids": az_ids,
    "public-error-text": error_texts,
}
