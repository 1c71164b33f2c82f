"""A generated secret corpus for the redactor (issue 16, items 2 and 9), and a benign corpus of look-alikes.

Each class has a rule that builds many realistic variants from a seeded random generator: key lengths,
quoting, whitespace, nesting, field-name case, arrays, Windows line endings. A secret sample lists the
exact substrings that must be gone after redaction; a benign sample must come back byte-identical.
Deterministic (seeded), so a failure names a sample that can be rebuilt: ``python -m
tests.shell.secret_corpus`` prints the counts per class, ``--dump PATH`` writes the corpus as JSON lines
in the format of ``tests/data/shell/secrets_dev.jsonl``.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

__all__ = ["Sample", "benign_samples", "secret_samples"]

SEED = 16


@dataclass(frozen=True)
class Sample:
    kind: str
    text: str
    secrets: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()  # substrings that must survive in a secret sample (ids, names)
    command: str | None = None
    meta: dict[str, str] = field(default_factory=dict)


_PW_CHARS = string.ascii_letters + string.digits + "!#%^*_+-.~@"


def _pw(rng: random.Random, lo: int = 8, hi: int = 32) -> str:
    """A password: mixed classes, no whitespace or quotes, never starting with a dash."""
    n = rng.randint(lo, hi)
    core = "".join(rng.choice(_PW_CHARS) for _ in range(n - 2))
    return rng.choice(string.ascii_letters) + core + rng.choice(string.digits)


def _guid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _b64key(rng: random.Random, nbytes: int) -> str:
    return base64.b64encode(rng.randbytes(nbytes)).decode()


def _crlf(rng: random.Random, text: str) -> str:
    return text.replace("\n", "\r\n") if rng.random() < 0.3 else text


def _case(rng: random.Random, name: str) -> str:
    """The field name as some tool might spell it: camelCase, PascalCase, UPPER, lower, snake_case."""
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    return rng.choice([name, name[0].upper() + name[1:], name.upper(), name.lower(), snake, snake.upper()])


def _dumps(rng: random.Random, obj: object) -> str:
    return json.dumps(obj, indent=rng.choice([None, 2, 4]), separators=rng.choice([None, (",", ":")]))


def _embed(rng: random.Random, doc: str) -> str:
    """JSON alone, or after a warning line as az prints it, or inside a log line."""
    roll = rng.random()
    if roll < 0.15:
        return "WARNING: Command group 'network' is in preview.\n" + doc
    if roll < 0.25:
        return "2026-05-22T11:42:07Z INFO response body: " + doc.replace("\n", " ") + "\n"
    return doc


def _rid(rng: random.Random, provider: str, name: str) -> str:
    return f"/subscriptions/{_guid(rng)}/resourceGroups/rg-{rng.randint(1, 99)}/providers/{provider}/{name}"


# --- item 9: misses --------------------------------------------------------------------------------------


def _openvpn(rng: random.Random) -> Sample:
    lines = [rng.randbytes(16).hex() for _ in range(rng.choice([4, 8, 16]))]
    body = "\n".join(lines)
    block = f"-----BEGIN OpenVPN Static key V1-----\n{body}\n-----END OpenVPN Static key V1-----\n"
    style = rng.choice(["file", "inline", "json"])
    if style == "file":
        text = "#\n# 2048 bit OpenVPN static key\n#\n" + block
    elif style == "inline":
        tag = rng.choice(["tls-auth", "secret", "tls-crypt"])
        text = f"client\ndev tun\nremote vpn.contoso.com 1194\nkey-direction 1\n<{tag}>\n{block}</{tag}>\n"
    else:
        return Sample("openvpn-static-key", json.dumps({"message": "ta.key:\n" + block}), tuple(lines))
    return Sample("openvpn-static-key", _crlf(rng, text), tuple(lines))


def _netrc(rng: random.Random) -> Sample:
    entries, secrets = [], []
    for _ in range(rng.randint(1, 3)):
        pw = _pw(rng)
        host = rng.choice(["api.github.com", "ftp.contoso.com", "10.0.0.4", "dev.azure.com"])
        user = rng.choice(["alice", "svc-build", "anonymous", "jane.doe@contoso.com"])
        sep = rng.choice([" ", "\t", "\n  ", "\n\t"])
        form = rng.choice(["machine", "machine", "default"])
        head = f"machine {host}" if form == "machine" else "default"
        extra = f"{sep}account acct1" if rng.random() < 0.1 else ""
        entries.append(f"{head}{sep}login {user}{extra}{sep}password {pw}")
        secrets.append(pw)
    text = "\n".join(entries) + "\n"
    if rng.random() < 0.3:
        text += "\nmacdef init\ncd /pub\nbinary\n\n"
    return Sample("netrc", _crlf(rng, text), tuple(secrets), command=rng.choice([None, "cat ~/.netrc"]))


def _pgpass(rng: random.Random) -> Sample:
    lines, secrets = [], []
    for _ in range(rng.randint(1, 4)):
        pw = _pw(rng)
        if rng.random() < 0.2:
            pw = pw[:4] + "\\:" + pw[4:]
        host = rng.choice(
            ["localhost", "*", "db.contoso.com", "10.1.2.3", "pg-prod.postgres.database.azure.com"]
        )
        port = rng.choice(["5432", "*", "6432"])
        db = rng.choice(["*", "postgres", "orders"])
        user = rng.choice(["postgres", "app_rw", "*"])
        lines.append(f"{host}:{port}:{db}:{user}:{pw}")
        secrets.append(pw)
    text = "# hostname:port:database:username:password\n" + "\n".join(lines) + "\n"
    return Sample("pgpass", _crlf(rng, text), tuple(secrets))


def _b64_client_secret(rng: random.Random) -> Sample:
    secret = _pw(rng, 16, 40)
    inner = rng.choice(
        [
            f"client_id={_guid(rng)}\nclient_secret={secret}\n",
            f"AZURE_CLIENT_ID={_guid(rng)}\nAZURE_CLIENT_SECRET={secret}\n",
            json.dumps({"clientId": _guid(rng), "clientSecret": secret}),
            f"client_secret: {secret}\ntenant: contoso.onmicrosoft.com\n",
        ]
    )
    blob = base64.b64encode(inner.encode()).decode()
    text = rng.choice(
        [
            f"apiVersion: v1\nkind: Secret\ndata:\n  credentials: {blob}\n",
            json.dumps({"name": "sp-creds", "blob": blob}, indent=2),
            f"{blob}\n",
            f"echo {blob} | base64 -d > /tmp/env\n",
        ]
    )
    return Sample("base64-client-secret", _crlf(rng, text), (blob,))


_KEY_FIELDS = ("primaryKey", "secondaryKey", "authorizationKey", "key1", "key2", "apiKey", "sharedKey")


def _guid_key(rng: random.Random) -> Sample:
    key = _guid(rng)
    ids = {n: _guid(rng) for n in ("id", "tenantId", "principalId", "correlationId")}
    doc = {"name": "auth-1", _case(rng, rng.choice(_KEY_FIELDS)): key, **ids}
    if rng.random() < 0.5:
        doc = {"properties": doc, "id": _rid(rng, "Microsoft.Network", "expressRouteCircuits/er1")}
    return Sample("guid-key-field", _embed(rng, _dumps(rng, doc)), (key,), keep=tuple(ids.values()))


def _cisco_psk(rng: random.Random) -> Sample:
    key = _pw(rng, 8, 40).replace("#", "x")
    ip = f"{rng.randint(20, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    line = rng.choice(
        [
            f" pre-shared-key {key}",
            f" pre-shared-key 0 {key}",
            f" pre-shared-key local 0 {key}",
            f" pre-shared-key remote {key}",
            f" pre-shared-key address {ip} key {key}",
            f" pre-shared-key address 0.0.0.0 0.0.0.0 key {key}",
            f"crypto isakmp key {key} address {ip}",
            f"crypto isakmp key 0 {key} address {ip} no-xauth",
            f" ikev1 pre-shared-key {key}",
            f" ikev2 remote-authentication pre-shared-key {key}",
            f'set security ike policy azure pre-shared-key ascii-text "{key}"',
        ]
    )
    text = (
        f"crypto ikev2 keyring azure-keyring\n peer {ip}\n  address {ip}\n{line}\n!\n"
        f"crypto map azure-map 10 ipsec-isakmp\n set peer {ip}\n set transform-set azure-ts\n"
        f" set pfs group{rng.choice([2, 14, 24])}\n!\n"
    )
    return Sample("cisco-pre-shared-key", _crlf(rng, text), (key,), keep=(" set pfs group",))


# --- item 2: secret-bearing JSON fields -----------------------------------------------------------------


def _value(rng: random.Random) -> str:
    """Any value: long random, short, low-entropy, a word: the field name alone makes it secret."""
    kind = rng.random()
    if kind < 0.3:
        return _b64key(rng, rng.choice([16, 32, 64]))
    if kind < 0.55:
        return _pw(rng, 4, 12)
    if kind < 0.7:
        return "Zq" + "".join(rng.choice("abcdef") for _ in range(rng.randint(4, 10)))
    return _pw(rng, 12, 40)


def _vpn_connection(rng: random.Random) -> Sample:
    key = _value(rng)
    doc = {
        "connectionType": "IPsec",
        "id": _rid(rng, "Microsoft.Network", "connections/cn-onprem"),
        "name": "cn-onprem",
        "provisioningState": "Succeeded",
        _case(rng, "sharedKey"): key,
        "virtualNetworkGateway1": {"id": _rid(rng, "Microsoft.Network", "virtualNetworkGateways/vgw")},
    }
    return Sample("json-shared-key", _crlf(rng, _embed(rng, _dumps(rng, doc))), (key,), keep=("cn-onprem",))


def _expressroute_auth(rng: random.Random) -> Sample:
    keys = [_guid(rng) for _ in range(rng.randint(1, 3))]
    doc = [
        {
            _case(rng, "authorizationKey"): k,
            "authorizationUseStatus": "Available",
            "id": _rid(rng, "Microsoft.Network", f"expressRouteCircuits/er/authorizations/a{i}"),
            "name": f"a{i}",
        }
        for i, k in enumerate(keys)
    ]
    return Sample("json-authorization-key", _embed(rng, _dumps(rng, doc)), tuple(keys), keep=("a0",))


def _user_data(rng: random.Random) -> Sample:
    script = f"#!/bin/bash\napt-get install -y nginx\necho {_pw(rng)} > /etc/motd\n"
    blob = base64.b64encode(script.encode()).decode()
    field_name = rng.choice(["userData", "customData"])
    doc = {"name": "vm1", "osProfile": {"adminUsername": "azureuser", _case(rng, field_name): blob}}
    if field_name == "userData":
        doc = {"name": "vm1", _case(rng, "userData"): blob, "vmId": _guid(rng)}
    return Sample("json-user-data", _embed(rng, _dumps(rng, doc)), (blob,), keep=("vm1",))


def _connection_strings(rng: random.Random) -> Sample:
    key = _b64key(rng, 32)
    cs = f"Endpoint=sb://ns{rng.randint(1, 99)}.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={key}"
    short = _pw(rng, 4, 8)
    form = rng.choice(["keys", "webapp", "arm"])
    if form == "keys":
        doc: object = {
            "keyName": "RootManageSharedAccessKey",
            _case(rng, "primaryConnectionString"): cs,
            _case(rng, "primaryKey"): key,
            _case(rng, "secondaryKey"): short,
        }
        secrets: tuple[str, ...] = (key, short)
    elif form == "webapp":
        doc = [
            {"name": "db", "slotSetting": False, "type": "SQLAzure", "value": f"Server=x;Password={short}"}
        ]
        doc = {_case(rng, "connectionStrings"): doc, "name": "web1"}
        secrets = (short,)
    else:
        doc = {"outputs": {"sbConnectionString": {"type": "String", "value": cs}}}
        secrets = (key,)
    return Sample("json-connection-string", _embed(rng, _dumps(rng, doc)), secrets)


def _registry(rng: random.Random) -> Sample:
    p1, p2 = _value(rng), _value(rng)
    if rng.random() < 0.5:
        doc: object = {
            _case(rng, "passwords"): [{"name": "password", "value": p1}, {"name": "password2", "value": p2}],
            "username": "acrghost0",
        }
    else:
        creds = {"acrghost": {"address": "acrghost.azurecr.io", "username": "acrghost", "password": p1}}
        doc = {
            "modulesContent": {
                "$edgeAgent": {
                    "properties.desired": {
                        "runtime": {"settings": {_case(rng, "registryCredentials"): creds}},
                    }
                }
            }
        }
        p2 = ""
    return Sample("json-registry-password", _embed(rng, _dumps(rng, doc)), tuple(p for p in (p1, p2) if p))


_SETTINGS = ("AZURE_STORAGE_KEY", "DB_PASSWORD", "AZURE_POSTGRESQL_CONNECTION_STRING", "CLIENT_SECRET",
             "GITHUB_TOKEN", "AZURE_REDIS_CONNECTIONSTRING", "password2")  # fmt: skip


def _service_connector(rng: random.Random) -> Sample:
    secrets, configs = [], []
    for name in rng.sample(_SETTINGS, rng.randint(1, 3)):
        value = _value(rng)
        configs.append({"name": name, "value": value})
        secrets.append(value)
    configs.append(
        {"name": "AZURE_STORAGEBLOB_RESOURCEENDPOINT", "value": "https://st.blob.core.windows.net/"}
    )
    rng.shuffle(configs)
    doc: object = {"configurations": configs} if rng.random() < 0.5 else configs
    return Sample(
        "json-service-connector",
        _embed(rng, _dumps(rng, doc)),
        tuple(secrets),
        keep=("https://st.blob.core.windows.net/",),
    )


def _host_keys(rng: random.Random) -> Sample:
    master, default, system = _value(rng), _value(rng), _value(rng)
    doc = {
        _case(rng, "functionKeys"): {"default": default},
        _case(rng, "masterKey"): master,
        _case(rng, "systemKeys"): {"durabletask_extension": system},
    }
    return Sample("json-host-keys", _embed(rng, _dumps(rng, doc)), (master, default, system))


SECRET_CLASSES: dict[str, Callable[[random.Random], Sample]] = {
    "openvpn": _openvpn,
    "netrc": _netrc,
    "pgpass": _pgpass,
    "base64-client-secret": _b64_client_secret,
    "guid-key": _guid_key,
    "cisco-psk": _cisco_psk,
    "json-shared-key": _vpn_connection,
    "json-authorization-key": _expressroute_auth,
    "json-user-data": _user_data,
    "json-connection-string": _connection_strings,
    "json-registry": _registry,
    "json-service-connector": _service_connector,
    "json-host-keys": _host_keys,
}


# --- benign look-alikes ---------------------------------------------------------------------------------


def _benign_ids(rng: random.Random) -> Sample:
    doc = {
        "id": _rid(rng, "Microsoft.Network", "networkInterfaces/nic1"),
        "tenantId": _guid(rng),
        "subscriptionId": _guid(rng),
        "principalId": _guid(rng),
        "clientId": _guid(rng),
        "objectId": _guid(rng),
        "correlationId": _guid(rng),
        "keyId": _guid(rng),
        "resourceGuid": _guid(rng),
        "etag": f'W/"{_guid(rng)}"',
        "adminPassword": None,
        "userData": None,
        "sharedKey": None,
        "disablePasswordAuthentication": True,
        "connectionStrings": [],
        "keyName": None,
        "passwordProfile": {"forceChangePasswordNextSignIn": False},
    }
    return Sample(
        "benign-ids", _embed(rng, _dumps(rng, {_case(rng, k) if k != "id" else k: v for k, v in doc.items()}))
    )


def _benign_hashes(rng: random.Random) -> Sample:
    sha = rng.randbytes(32).hex()
    text = (
        f"commit {rng.randbytes(20).hex()}\nsha256:{sha}  capture-{rng.randint(1, 99)}.pcap\n"
        f"md5sum: {rng.randbytes(16).hex()}\nimage: mcr.microsoft.com/azure-cli@sha256:{rng.randbytes(32).hex()}\n"
        f"2026-05-22 11:42:07 time=12:34:56 mac 00:0d:3a:{rng.randint(10, 99)}:4c:5d ipv6 2001:db8:85a3:0:0:8a2e:370:7334\n"
        f"fe80:1234:abcd:ef01:2345 root:x:0:0:root:/root:/bin/bash\n"
    )
    return Sample("benign-hashes", _crlf(rng, text))


def _benign_dns(rng: random.Random) -> Sample:
    pub = base64.b64encode(
        b"0\x82\x01\x220\r\x06\t*\x86H\x86\xf7\r\x01\x01\x01\x05\x00\x03\x82\x01\x0f\x00" + rng.randbytes(200)
    ).decode()
    text = (
        f'selector1._domainkey.contoso.com. 3600 IN TXT "v=DKIM1; k=rsa; p={pub}"\n'
        f'contoso.com. 3600 IN TXT "MS=ms{rng.randint(10**7, 10**8)}"\n'
        f'contoso.com. 3600 IN TXT "google-site-verification={_b64key(rng, 30).rstrip("=").replace("/", "_")}"\n'
    )
    return Sample("benign-dns-txt", text, command="dig TXT contoso.com")


def _benign_pem_cert(rng: random.Random) -> Sample:
    body = base64.b64encode(
        b"0\x82\x03\x1f0\x82\x02\x07\xa0\x03\x02\x01\x02" + rng.randbytes(rng.choice([300, 500]))
    ).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    label = rng.choice(["CERTIFICATE", "PUBLIC KEY"])
    return Sample(
        "benign-pem-public", _crlf(rng, f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----\n")
    )


_PROSE = ("Packet capture finished: 1532 packets, 0 dropped.", "Hello, world! This is the NSG flow log summary.",
          "route table rt-spoke has 4 routes; next hop VirtualAppliance 10.0.0.4",
          "#!/bin/bash\napt-get update\napt-get install -y tcpdump\n")  # fmt: skip


def _benign_b64_text(rng: random.Random) -> Sample:
    blob = base64.b64encode(rng.choice(_PROSE).encode()).decode()
    text = rng.choice(
        [
            f"{blob}\n",
            json.dumps({"message": blob, "encoding": "base64"}),
            f"echo {blob} | base64 -d\n",
            f"data:\n  motd: {blob}\n",
        ]
    )
    return Sample("benign-base64-text", text)


def _benign_router(rng: random.Random) -> Sample:
    ip = f"203.0.113.{rng.randint(1, 254)}"
    text = (
        f"crypto ikev2 profile azure-profile\n match identity remote address {ip} 255.255.255.255\n"
        f" authentication remote pre-shared-key\n authentication local pre-shared-key\n keyring local azure-keyring\n"
        f"!\ncrypto ipsec transform-set azure-ts esp-gcm 256\n mode tunnel\n!\n"
        f"crypto map azure-map 10 ipsec-isakmp\n set peer {ip}\n set pfs group{rng.choice([2, 14, 24])}\n"
        f" set security-association lifetime seconds 3600\n!\ntunnel-group {ip} ipsec-attributes\n"
        f" ikev1 pre-shared-key *****\n"
    )
    return Sample("benign-router-config", _crlf(rng, text))


def _benign_netrc(rng: random.Random) -> Sample:
    text = (
        f"machine ftp.contoso.com login anonymous\nmacdef init\ncd /pub/{rng.randint(1, 9)}\nbinary\nget README\n\n"
        "# the password comes from the keyring\n"
    )
    return Sample("benign-netrc-macdef", _crlf(rng, text))


def _benign_ovpn(rng: random.Random) -> Sample:
    text = f"client\ndev tun\nproto udp\nremote vpn{rng.randint(1, 9)}.contoso.com 1194\ntls-auth ta.key 1\nkey-direction 1\ncipher AES-256-GCM\n"
    return Sample("benign-ovpn-config", _crlf(rng, text))


def _benign_appsettings(rng: random.Random) -> Sample:
    doc = [
        {"name": "WEBSITE_RUN_FROM_PACKAGE", "slotSetting": False, "value": "1"},
        {"name": "FUNCTIONS_WORKER_RUNTIME", "slotSetting": False, "value": "python"},
        {"name": "KEY_VAULT_URI", "slotSetting": False, "value": "https://kv.vault.azure.net/"},
        {"name": "DB_PASSWORD_SECRET_NAME", "slotSetting": False, "value": "db-password"},
    ]
    return Sample("benign-appsettings", _embed(rng, _dumps(rng, doc)))


BENIGN_CLASSES: dict[str, Callable[[random.Random], Sample]] = {
    "ids": _benign_ids,
    "hashes": _benign_hashes,
    "dns": _benign_dns,
    "pem": _benign_pem_cert,
    "b64-text": _benign_b64_text,
    "router": _benign_router,
    "netrc-macdef": _benign_netrc,
    "ovpn": _benign_ovpn,
    "appsettings": _benign_appsettings,
}


def _generate(
    classes: dict[str, Callable[[random.Random], Sample]], per_class: int, seed: int
) -> Iterator[Sample]:
    for name, build in classes.items():
        rng = random.Random(f"{seed}:{name}")
        for i in range(per_class):
            sample = build(rng)
            yield Sample(
                sample.kind, sample.text, sample.secrets, sample.keep, sample.command, {"id": f"{name}-{i}"}
            )


def secret_samples(per_class: int = 60, seed: int = SEED) -> list[Sample]:
    """``per_class`` variants of every secret class (13 classes)."""
    return list(_generate(SECRET_CLASSES, per_class, seed))


def benign_samples(per_class: int = 30, seed: int = SEED) -> list[Sample]:
    """``per_class`` variants of every benign look-alike class."""
    return list(_generate(BENIGN_CLASSES, per_class, seed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dump", help="write the secret and benign samples as JSON lines to this path")
    args = parser.parse_args()
    secrets, benign = secret_samples(), benign_samples()
    print(Counter(s.kind for s in secrets), sum(len(s.secrets) for s in secrets), "secrets")
    print(Counter(s.kind for s in benign), sum(len(s.text) for s in benign), "benign characters")
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as out:
            for sample in secrets + benign:
                row = {k: v for k, v in asdict(sample).items() if v}
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
