"""Passwords on command lines (tool-specific flags: ``sqlcmd -P``, ``mysql -p``, ``az ... -p``, openssl
``pass:``, keytool ``-storepass`` ...) as a command line, in ``ps`` output, in shell history and in an
audit JSON string; and look-alike commands where the same letters mean a port, a priority or a file."""

from __future__ import annotations

import json
import random
import shlex

from tests.data.redact._common import Gen, Sample, ip, pw, user

__all__ = ["BENIGN", "SECRETS"]


def _q(rng: random.Random, value: str) -> str:
    """The value as a shell user would type it: bare, single- or double-quoted."""
    return rng.choice([value, value, f"'{value}'", f'"{value}"'])


def _place(rng: random.Random, line: str) -> tuple[str, bool]:
    """The command line alone (redact_argv checks it too), or inside ps/history/audit text."""
    roll = rng.random()
    if roll < 0.4:
        return line, True
    if roll < 0.6:
        return f"root      {rng.randint(900, 99999)}  0.0  0.1  23456  7890 pts/0    S+   11:42   0:00 {line}\n", False
    if roll < 0.8:
        return f"  {rng.randint(100, 2000)}  {line}\n", False
    return json.dumps({"event": "exec", "command": line, "user": "azureuser"}) + "\n", False


def _pwv(rng: random.Random) -> str:
    """A password without characters a shell would need escaping for."""
    return pw(rng, 8, 24, short=0.1).replace("#", "x").replace("!", "x")


def password_flag(rng: random.Random) -> Sample:
    p, p2 = _pwv(rng), _pwv(rng)
    u, h = user(rng), ip(rng, False)
    srv = f"srv{rng.randint(1, 99)}.database.windows.net"
    line, secrets = rng.choice([
        (f"sqlcmd -S tcp:{srv},1433 -d orders -U sqladmin -P {_q(rng, p)} -Q \"select 1\"", (p,)),
        (f"sqlcmd -S {srv} -U sa -P{p} -C", (p,)),
        (f"bcp dbo.Orders out orders.dat -S {srv} -U sa -P {_q(rng, p)} -c", (p,)),
        (f"mysql -h {h} -u root -p{p} orders", (p,)),
        (f"mysql -h {h} -u {u} --password={_q(rng, p)} -e 'show databases'", (p,)),
        (f"mysqldump -u root -p'{p}' --all-databases", (p,)),
        (f"az sql server create -g rg-db -n sql{rng.randint(1, 99)} -l westeurope -u sqladmin -p {_q(rng, p)}", (p,)),
        (f"az postgres flexible-server create -g rg -n pg1 --admin-user {u} --admin-password {_q(rng, p)}", (p,)),
        (f"az mysql flexible-server create -g rg -n my1 -u {u} -p {_q(rng, p)} --sku-name Standard_B1ms", (p,)),
        (f"az vm user update -g rg -n vm1 -u {u} -p {_q(rng, p)}", (p,)),
        (f"az sql mi create -g rg -n mi1 -u {u} -p {_q(rng, p)} --subnet sub1", (p,)),
        (f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out cert.pfx -passout pass:{p}", (p,)),
        (f"openssl rsa -in key.pem -out plain.pem -passin {_q(rng, 'pass:' + p)}", (p,)),
        (f"openssl pkcs12 -in cert.pfx -nodes -passin pass:{p} -passout pass:{p2}", (p, p2)),
        (f"openssl enc -aes-256-cbc -salt -in dump.sql -out dump.enc -k {p}", (p,)),
        (f"keytool -importkeystore -srckeystore a.p12 -srcstoretype PKCS12 -srcstorepass {p} -destkeystore b.jks -deststorepass {p2}", (p, p2)),
        (f"keytool -genkeypair -alias app -keystore app.jks -storepass {_q(rng, p)} -keypass {_q(rng, p2)}", (p, p2)),
        (f"wget --user={u} --password={p} https://repo.contoso.com/pkg.tgz", (p,)),
        (f"docker login -u {u} -p {p} acrghost.azurecr.io", (p,)),
        (f"helm registry login acrghost.azurecr.io --username {u} --password {_q(rng, p)}", (p,)),
        (f"ldapsearch -x -H ldap://{h} -D cn=admin,dc=contoso,dc=com -w {_q(rng, p)} -b dc=contoso,dc=com", (p,)),
        (f"redis-cli -h {h} -p 6380 --tls -a {_q(rng, p)} ping", (p,)),
        (f"ipmitool -I lanplus -H {h} -U {u} -P {_q(rng, p)} chassis power status", (p,)),
        (f"smbclient //{h}/share -U '{u}%{p}'", (p,)),
        (f"xfreerdp /v:{h} /u:{u} /p:{p}", (p,)),
        (f"sshpass -p {_q(rng, p)} ssh {u}@{h}", (p,)),
        (f"snmpwalk -v3 -l authPriv -u {u} -a SHA -A {_q(rng, p)} -x AES -X {_q(rng, p2)} {h}", (p, p2)),
        (f"mosquitto_pub -h {h} -u {u} -P {_q(rng, p)} -t telemetry -m hello", (p,)),
        (f"ssh-keygen -p -f ~/.ssh/id_ed25519 -P {_q(rng, p)} -N {_q(rng, p2)}", (p, p2)),
        (f"zip -P {p} backup.zip dump.sql", (p,)),
        (f"7z a -p{p} backup.7z dump.sql", (p,)),
        (f"gpg --batch --passphrase {_q(rng, p)} -d secrets.gpg", (p,)),
        (f"htpasswd -b -c /etc/nginx/.htpasswd {u} {p}", (p,)),
        (f"net use \\\\{h}\\share {p} /user:CONTOSO\\{u}", (p,)),
        (f"psql \"host={h} dbname=orders user={u} password={p} sslmode=require\"", (p,)),
    ])
    text, whole = _place(rng, line)
    meta = {"argv": "1"} if whole else {}
    return Sample("password-flag", text, secrets, keep=(u,) if f" {u}" in line and u not in secrets[0] else (),
                  why="the tool reads this flag's value as a password", meta=meta)


SECRETS: dict[str, Gen] = {"password-flag": password_flag}


def benign_flags(rng: random.Random) -> Sample:
    h, u = ip(rng, False), user(rng)
    line = rng.choice([
        f"mysql -h {h} -P 3306 -u {u} -p orders",
        f"ssh -p 2222 {u}@{h}",
        f"scp -P 2222 capture.pcap {u}@{h}:/tmp/",
        "nc -l -p 4444",
        "docker run -d -p 8080:80 nginx:1.27",
        f"iperf3 -c {h} -p 5201 -t 30",
        "az deployment group create -g rg-net -f main.bicep -p params.json",
        "az network nsg rule create -g rg -n allow-ssh --nsg-name nsg1 --priority 100 --destination-port-ranges 22",
        "openssl pkcs12 -in cert.pfx -passin env:PFX_PASSWORD -nokeys -out chain.pem",
        "openssl pkcs12 -export -in c.pem -inkey k.pem -passout file:/run/secrets/pfx -out c.pfx",
        "keytool -list -v -keystore app.jks",
        "sqlcmd -S srv1.database.windows.net -d orders -G -Q \"select name from sys.tables\"",
        "tcpdump -p -i eth0 -w /tmp/cap.pcap port 443",
        f"ping -c 3 -p ff {h}",
        f"az vm user update -g rg -n vm1 -u {u} --ssh-key-value @~/.ssh/id_rsa.pub",
        f"redis-cli -h {h} -p 6380 --tls ping",
        f"ipmitool -I lanplus -H {h} -U {u} -E chassis power status",
        f"psql -h {h} -U {u} -d orders -p 5432",
        "wget --ask-password https://repo.contoso.com/pkg.tgz",
        f"snmpwalk -v2c -c $SNMP_COMMUNITY {h}",
        "az storage blob download --account-name ghoststore -c captures -n cap.pcap -f cap.pcap --auth-mode key",
        "az keyvault secret show --vault-name kv-ghost -n db-password --query id -o tsv",
        "openssl s_client -connect kv-ghost.vault.azure.net:443 -servername kv-ghost.vault.azure.net",
        "az network vpn-connection show -g rg -n cn-onprem --query connectionStatus",
    ])
    text, whole = _place(rng, line)
    return Sample("benign-commands", text, keep=(shlex.split(line)[0],), meta={"argv": "1"} if whole else {},
                  why="-p/-P mean port, priority or parameters here; pass refs name env vars and files")


BENIGN: dict[str, Gen] = {"benign-commands": benign_flags}
