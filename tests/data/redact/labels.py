"""Secrets known by their label: secret-named variables in env dumps, YAML, JSON, INI, ``.env``, Docker and
systemd files; Kubernetes Secrets (base64 ``data``); cloud-init passwords; base64 ``customData`` /
``userData``; Azure fields and headers the earlier rules missed; private JWK members. Look-alikes use the
same names for metadata (``*_FILE``, ``*_ENDPOINT``, ``*_EXPIRY``) and Key Vault references."""

from __future__ import annotations

import base64
import json
import random

from tests.data.redact._common import Gen, Sample, b64, guid, hexs, pw, rid, token, user, wrap_output
from tests.data.redact.gear import crypt_hash

__all__ = ["BENIGN", "SECRETS"]

_NAMES = ["MYSQL_PWD", "GITHUB_PAT", "ADO_PAT", "AZURE_DEVOPS_EXT_PAT", "IDENTITY_HEADER", "MSI_SECRET", "APP_TOKEN",
          "SESSION_SECRET", "DB_PASSWORD", "OPENAI_API_KEY", "SMTP_PASS", "REDIS_AUTH", "TF_VAR_admin_password",
          "ARM_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PASSWORD", "SQLCMDPASSWORD", "PGPASSWORD", "VAULT_TOKEN",
          "NPM_TOKEN", "JWT_SIGNING_KEY", "WEBHOOK_SECRET", "SNMP_COMMUNITY", "WIFI_PSK", "RABBITMQ_DEFAULT_PASS",
          "POSTGRES_PASSWORD", "MSSQL_SA_PASSWORD", "AzureWebJobsStorage__accountKey", "ApiKey", "clientSecret",
          "admin_pwd", "MONGO_INITDB_ROOT_PASSWORD", "ENCRYPTION_PASSPHRASE", "SECRET_KEY_BASE", "DJANGO_SECRET_KEY"]


def _value(rng: random.Random, name: str) -> str:
    if name == "IDENTITY_HEADER":
        return guid(rng)
    if "PAT" in name and "PATH" not in name and rng.random() < 0.5:
        return token(rng, 52, "abcdefghijklmnopqrstuvwxyz234567")
    return pw(rng, 6, 40, short=0.15).replace("#", "x").replace(",", "x")


def env_labels(rng: random.Random) -> Sample:
    names = rng.sample(_NAMES, rng.randint(1, 3))
    values = {n: _value(rng, n) for n in names}
    plain = {"HOME": "/home/azureuser", "PATH": "/usr/local/bin:/usr/bin", "LANG": "C.UTF-8",
             "IDENTITY_ENDPOINT": "http://localhost:42356/msi/token", "AZURE_CLIENT_ID": guid(rng)}
    items = list(values.items()) + list(plain.items())
    rng.shuffle(items)
    form = rng.choice(["env", "export", "yaml", "json", "ini", "compose", "k8s-env", "powershell", "dockerfile", "systemd"])
    if form == "env":
        text = "".join(f"{k}={v}\n" for k, v in items)
    elif form == "export":
        text = "".join(f"export {k}=\"{v}\"\n" for k, v in items)
    elif form == "yaml":
        text = "settings:\n" + "".join(f"  {k}: {json.dumps(v) if rng.random() < 0.5 else v}\n" for k, v in items)
    elif form == "json":
        text = json.dumps(dict(items), indent=rng.choice([None, 2]))
    elif form == "ini":
        text = "[app]\n" + "".join(f"{k.lower()} = {v}\n" for k, v in items)
    elif form == "compose":
        text = "services:\n  api:\n    image: contoso/api:1.4\n    environment:\n" + "".join(f"      - {k}={v}\n" for k, v in items)
    elif form == "k8s-env":
        text = "    env:\n" + "".join(f"    - name: {k}\n      value: {json.dumps(v)}\n" for k, v in items)
    elif form == "powershell":
        text = "".join(f"$env:{k} = '{v}'\n" for k, v in items)
    elif form == "dockerfile":
        text = "FROM python:3.12-slim\n" + "".join(f"ENV {k}={v}\n" for k, v in items) + "CMD [\"python\", \"app.py\"]\n"
    else:
        text = "[Service]\n" + "".join(f"Environment=\"{k}={v}\"\n" for k, v in items) + "ExecStart=/usr/bin/app\n"
    command = rng.choice([None, "printenv", "cat .env", "docker inspect api"]) if form == "env" else None
    return Sample("env-secret-label", wrap_output(rng, text), tuple(values.values()),
                  keep=("/usr/local/bin", "http://localhost:42356/msi/token"), command=command,
                  why="the variable's name says its value is a credential")


def k8s_secret(rng: random.Random) -> Sample:
    raw = {rng.choice(["password", "db-pass", "api", "connection", "username", "config.json", "token", "webhook-url"]): pw(rng, 8, 30)
           for _ in range(rng.randint(1, 3))}
    data = {k: base64.b64encode(v.encode()).decode() for k, v in raw.items()}
    cert_b64 = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB" + b64(rng, 60).encode() + b"\n-----END CERTIFICATE-----\n").decode()
    with_cert = rng.random() < 0.3
    if rng.random() < 0.5:
        text = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-{rng.randint(1, 9)}\n  namespace: prod\ntype: Opaque\ndata:\n"
        text += "".join(f"  {k}: {v}\n" for k, v in data.items())
        if with_cert:
            text += f"  ca.crt: {cert_b64}\n"
    else:
        doc = {"apiVersion": "v1", "data": dict(data, **({"ca.crt": cert_b64} if with_cert else {})), "kind": "Secret",
               "metadata": {"name": "app", "namespace": "prod", "uid": guid(rng)}, "type": "Opaque"}
        text = json.dumps(doc, indent=4)
    return Sample("k8s-secret-data", text, tuple(data.values()), keep=(cert_b64,) if with_cert else (),
                  command=rng.choice([None, "kubectl get secret app -o yaml", "kubectl get secret app -o json"]),
                  why="every data value of a Secret is a secret, whatever its key; ca.crt is public")


def cloud_init(rng: random.Random) -> Sample:
    p1, p2 = pw(rng, 8, 20), pw(rng, 8, 20)
    h = crypt_hash(rng, "6")
    u = user(rng)
    text, secrets = rng.choice([
        (f"#cloud-config\nssh_pwauth: true\nchpasswd:\n  list: |\n    root:{p1}\n    {u}:{p2}\n  expire: False\n", (p1, p2)),
        (f"#cloud-config\nchpasswd:\n  expire: false\n  users:\n    - name: root\n      password: {p1}\n      type: text\n"
         f"    - {{name: {u}, password: {h}, type: hash}}\n", (p1, h)),
        (f"#cloud-config\npassword: {p1}\nchpasswd: {{ expire: False }}\nssh_pwauth: True\n", (p1,)),
        (f"#cloud-config\nusers:\n  - name: {u}\n    lock_passwd: false\n    plain_text_passwd: {p1}\n    sudo: ALL=(ALL) NOPASSWD:ALL\n", (p1,)),
        (f"#cloud-config\nusers:\n  - default\n  - name: {u}\n    passwd: {h}\n    shell: /bin/bash\n", (h,)),
        (f"#cloud-config\nchpasswd:\n  list:\n    - {u}:{p1}\n    - root:RANDOM\n", (p1,)),
        (f"#cloud-config\nruncmd:\n  - echo '{u}:{p1}' | chpasswd\n", (p1,)),
    ])
    return Sample("cloud-init-password", wrap_output(rng, text), secrets, why="cloud-init passwords for the VM's users")


def custom_data(rng: random.Random) -> Sample:
    script = f"#cloud-config\npackage_update: true\nruncmd:\n  - echo {token(rng, 12)} > /etc/motd\n"
    blob = base64.b64encode(script.encode()).decode()
    name = rng.choice(["customData", "userData", "custom_data", "user_data", "UserData"])
    form = rng.choice(["yaml", "tsv", "hcl", "json-nested", "cfn", "tsv"])
    command = None
    if form == "yaml":
        text = f"osProfile:\n  adminUsername: azureuser\n  computerName: vm1\n  {name}: {blob}\n"
    elif form == "tsv":
        text = blob + "\n"
        command = rng.choice([f"az vm show -g rg -n vm1 -u --query {name} -o tsv",
                              "az vm show -g rg -n vm1 --query osProfile.customData -o tsv",
                              "az vmss show -g rg -n ss1 --query virtualMachineProfile.userData -o tsv"])
    elif form == "hcl":
        text = f"resource \"azurerm_linux_virtual_machine\" \"vm\" {{\n  name = \"vm1\"\n  {name} = \"{blob}\"\n}}\n"
    elif form == "json-nested":
        text = json.dumps({"properties": {"virtualMachineProfile": {"osProfile": {name: blob, "adminUsername": "azureuser"}}}}, indent=2)
    else:
        text = f"Resources:\n  Vm:\n    Properties:\n      {name}: {blob}\n"
    return Sample("custom-data-b64", text, (blob,), command=command, why="VM custom/user data scripts often hold credentials")


def azure_misc(rng: random.Random) -> Sample:
    v = pw(rng, 8, 30)
    app = f"app-{rng.randint(1, 99)}"
    text, secret, command = rng.choice([
        (json.dumps({"containers": [{"name": "api", "properties": {"environmentVariables": [
            {"name": "DB_CONN", "secureValue": v}, {"name": "MODE", "value": "prod"}]}}]}, indent=2), v, None),
        (json.dumps({"type": "Microsoft.Compute/virtualMachines/extensions", "properties": {
            "publisher": "Microsoft.Azure.Extensions", "settings": {"fileUris": ["https://st.blob.core.windows.net/s/x.sh"]},
            "protectedSettings": {"commandToExecute": f"./x.sh --token {v}"}}}, indent=2), v, None),
        (json.dumps({"id": rid(rng, "Microsoft.Network", "connections/cn1/sharedkey"), "value": v}, indent=2), v,
         "az network vpn-connection shared-key show -g rg --connection-name cn1 --name default"),
        (f"{v}\n", v, "az network vpn-connection shared-key show -g rg --connection-name cn1 -n default --query value -o tsv"),
        (json.dumps({"publishingUserName": f"${app}", "publishingPassword": v,
                     "scmUri": f"https://${app}:{v}@{app}.scm.azurewebsites.net"}, indent=2), v, None),
        (f'<publishData><publishProfile profileName="{app} - Web Deploy" publishMethod="MSDeploy" userName="${app}" userPWD="{v}" '
         f'destinationAppUrl="https://{app}.azurewebsites.net" /></publishData>', v, None),
        (json.dumps({"customKeyIdentifier": None, "displayName": "ci", "endDateTime": "2027-05-22T00:00:00Z",
                     "hint": v[:3], "keyId": guid(rng), "secretText": v}, indent=2), v, None),
        (f"IDENTITY_ENDPOINT=http://localhost:8081/msi/token\nIDENTITY_HEADER={guid(rng)}\n", None, "printenv"),
        (json.dumps({"properties": {"servicePrincipalProfile": {"clientId": guid(rng), "secret": v}}}, indent=2), v, None),
        (f"Endpoint=https://appcs-{rng.randint(1, 9)}.azconfig.io;Id={token(rng, 4)}-l0-s0:{token(rng, 20)};Secret={b64(rng, 32)}\n", None, None),
    ])
    if secret is None:
        secret = text.split("IDENTITY_HEADER=")[1].strip() if "IDENTITY_HEADER" in text else text.split("Secret=")[1].strip()
    return Sample("azure-secret-field", text, (secret,), command=command, why="Azure secrets under names earlier rules missed")


def jwk_private(rng: random.Random) -> Sample:
    n, d, p, q = (b64(rng, s, urlsafe=True, pad=False) for s in (256, 256, 128, 128))
    dp, dq, qi = (b64(rng, 128, urlsafe=True, pad=False) for _ in range(3))
    k = b64(rng, 32, urlsafe=True, pad=False)
    if rng.random() < 0.75:
        jwk = {"kty": "RSA", "kid": guid(rng), "n": n, "e": "AQAB", "d": d, "p": p, "q": q, "dp": dp, "dq": dq, "qi": qi}
        secrets = (d, p, q, dp, dq, qi)
    else:
        jwk = {"kty": "oct", "kid": "hmac-1", "alg": "HS256", "k": k}
        secrets = (k,)
    text = json.dumps({"keys": [jwk]} if rng.random() < 0.5 else jwk, indent=rng.choice([None, 2]))
    return Sample("jwk-private", text, secrets, keep=("AQAB",) if "e" in jwk else (), why="private JWK members are the key")


SECRETS: dict[str, Gen] = {
    "env-secret-label": env_labels,
    "k8s-secret-data": k8s_secret,
    "cloud-init-password": cloud_init,
    "custom-data-b64": custom_data,
    "azure-secret-field": azure_misc,
    "jwk-private": jwk_private,
}


def benign_labels(rng: random.Random) -> Sample:
    items = [
        ("PASSWORD_MIN_LENGTH", "12"), ("TOKEN_URL", "https://login.microsoftonline.com/common/oauth2/v2.0/token"),
        ("SECRET_NAME", "db-password"), ("API_KEY_HEADER", "X-API-Key"), ("KEY_VAULT_NAME", f"kv-ghost-{rng.randint(1, 9)}"),
        ("IDENTITY_ENDPOINT", "http://localhost:42356/msi/token"), ("MSI_ENDPOINT", "http://127.0.0.1:41741/MSI/token/"),
        ("PASSWORD_FILE", "/run/secrets/db_password"), ("AZURE_CLIENT_ID", guid(rng)), ("ACCESS_TOKEN_EXPIRY", "3600"),
        ("GITHUB_TOKEN_PATH", "/var/run/secrets/gh"), ("DB_PASSWORD_SECRET_REF", "kv://db-password"),
        ("AZURE_KEYVAULT_RESOURCEENDPOINT", "https://kv-ghost.vault.azure.net/"), ("TOKEN_AUDIENCE", "api://ghost"),
        ("SSH_PUBLIC_KEY_PATH", "~/.ssh/id_ed25519.pub"), ("KEY_ROTATION_DAYS", "90"), ("PATH", "/usr/bin:/bin"),
        ("SECRET_PROVIDER", "azure-keyvault"), ("PASSWORD_POLICY", "strong"), ("PAT_EXPIRES_ON", "2026-09-01"),
    ]
    picked = rng.sample(items, rng.randint(4, 8))
    form = rng.choice(["env", "yaml", "json"])
    if form == "env":
        text = "".join(f"{k}={v}\n" for k, v in picked)
    elif form == "yaml":
        text = "".join(f"{k}: {v}\n" for k, v in picked)
    else:
        text = json.dumps(dict(picked), indent=2)
    return Sample("benign-labels", text, why="secret-sounding names that hold paths, ids, lengths and endpoints")


def benign_kv_refs(rng: random.Random) -> Sample:
    vault = f"kv-ghost-{rng.randint(1, 99)}"
    ref = rng.choice([
        f"@Microsoft.KeyVault(SecretUri=https://{vault}.vault.azure.net/secrets/db-password/{hexs(rng, 16)})",
        f"@Microsoft.KeyVault(SecretUri=https://{vault}.vault.azure.net/secrets/db-password/)",
        f"@Microsoft.KeyVault(VaultName={vault};SecretName=db-password)",
        f"@Microsoft.KeyVault(VaultName={vault};SecretName=api-key;SecretVersion={hexs(rng, 16)})",
    ])
    name = rng.choice(["DB_PASSWORD", "ApiKey", "AzureWebJobsStorage", "STORAGE_CONNECTION_STRING", "CLIENT_SECRET"])
    form = rng.choice(["appsettings", "env", "arm"])
    if form == "appsettings":
        text = json.dumps([{"name": name, "slotSetting": False, "value": ref},
                           {"name": "WEBSITE_RUN_FROM_PACKAGE", "slotSetting": False, "value": "1"}], indent=2)
    elif form == "env":
        text = f"{name}={ref}\nWEBSITE_SITE_NAME=app-ghost\n"
    else:
        text = json.dumps({"parameters": {"adminPassword": {"reference": {"keyVault": {"id": rid(rng, "Microsoft.KeyVault", f"vaults/{vault}")},
                                                                         "secretName": "vm-admin"}}}}, indent=2)
        ref = vault
    return Sample("benign-keyvault-ref", text, keep=(ref,), why="a Key Vault reference names a secret; it is not one")


BENIGN: dict[str, Gen] = {"benign-labels": benign_labels, "benign-keyvault-ref": benign_kv_refs}
