"""Password hashes (``/etc/shadow``, ``.htpasswd``, crypt formats, LDAP schemes, database hashes) and session
keys (TLS key-log lines, ``openssl s_client`` master keys, ``ip xfrm state`` IPsec keys), with look-alikes:
``/etc/passwd``, locked shadow entries, checksums, TLS randoms and session ids, which are public."""

from __future__ import annotations

import base64
import hashlib
import random

from tests.data.redact._common import Gen, Sample, b64, guid, hexs, ip, token, wrap_output
from tests.data.redact.gear import _CRYPT, crypt_hash

__all__ = ["BENIGN", "SECRETS"]

_NAMES = ["root", "daemon", "azureuser", "jdoe", "postgres", "www-data", "svc_backup", "alice.smith"]


def any_hash(rng: random.Random) -> str:
    """One password hash in a format some system writes."""
    kind = rng.choice(["md5", "sha256", "sha512", "sha512r", "bcrypt", "yescrypt", "argon2", "apr1", "scrypt", "gy"])
    if kind == "md5":
        return crypt_hash(rng, "1")
    if kind == "sha256":
        return crypt_hash(rng, "5")
    if kind == "sha512":
        return crypt_hash(rng, "6")
    if kind == "sha512r":
        return f"$6$rounds={rng.choice([5000, 656000])}${token(rng, 16, _CRYPT)}${token(rng, 86, _CRYPT)}"
    if kind == "bcrypt":
        return f"${rng.choice(['2a', '2b', '2y'])}${rng.choice(['10', '12', '05'])}${token(rng, 53, _CRYPT)}"
    if kind == "yescrypt":
        return f"$y$j9T${token(rng, 22, _CRYPT)}${token(rng, 43, _CRYPT)}"
    if kind == "gy":
        return f"$gy$j9T${token(rng, 22, _CRYPT)}${token(rng, 43, _CRYPT)}"
    if kind == "argon2":
        variant = rng.choice(["argon2id", "argon2i", "argon2d"])
        return f"${variant}$v=19$m=65536,t=3,p=4${b64(rng, 16, pad=False)}${b64(rng, 32, pad=False)}"
    if kind == "apr1":
        return f"$apr1${token(rng, 8, _CRYPT)}${token(rng, 22, _CRYPT)}"
    return f"$7$C6..../....{token(rng, 16, _CRYPT)}${token(rng, 43, _CRYPT)}"


def shadow(rng: random.Random) -> Sample:
    lines, secrets = [], []
    for name in rng.sample(_NAMES, rng.randint(2, 5)):
        roll = rng.random()
        if roll < 0.3:
            lines.append(f"{name}:{rng.choice(['*', '!', '!!', '!*', ''])}:19{rng.randint(100, 999)}:0:99999:7:::")
            continue
        h = any_hash(rng)
        if roll < 0.38:
            h = "!" + h
        lines.append(f"{name}:{h}:19{rng.randint(100, 999)}:0:99999:7:::")
        secrets.append(h.lstrip("!"))
    if not secrets:
        h = crypt_hash(rng, "6")
        lines.append(f"deploy:{h}:19500:0:99999:7:::")
        secrets.append(h)
    command = rng.choice([None, "sudo cat /etc/shadow", "getent shadow", "sudo tail -n 5 /etc/shadow"])
    return Sample("shadow-hash", wrap_output(rng, "\n".join(lines) + "\n"), tuple(secrets), keep=("99999:7:::",),
                  command=command, why="a shadow hash can be cracked offline")


def htpasswd(rng: random.Random) -> Sample:
    lines, secrets = [], []
    for name in rng.sample(_NAMES, rng.randint(1, 4)):
        kind = rng.choice(["apr1", "bcrypt", "sha", "sha", "apr1", "ssha"])
        if kind == "apr1":
            h = f"$apr1${token(rng, 8, _CRYPT)}${token(rng, 22, _CRYPT)}"
        elif kind == "bcrypt":
            h = f"$2y$05${token(rng, 53, _CRYPT)}"
        elif kind == "sha":
            h = "{SHA}" + base64.b64encode(hashlib.sha1(rng.randbytes(8)).digest()).decode()
        else:
            h = "{SSHA}" + b64(rng, 24)
        lines.append(f"{name}:{h}")
        secrets.append(h.split("}", 1)[-1])
    command = rng.choice([None, "cat /etc/nginx/.htpasswd", "cat .htpasswd"])
    return Sample("htpasswd-hash", wrap_output(rng, "\n".join(lines) + "\n"), tuple(secrets), command=command,
                  why="htpasswd entries are crackable password hashes")


def stray_hash(rng: random.Random) -> Sample:
    """Hashes outside a shadow file: in an LDIF, a SQL result, a YAML user list, a JSON API reply."""
    h = any_hash(rng)
    nt = hexs(rng, 16)
    md5pg = "md5" + hexs(rng, 16)
    mysql = "*" + hexs(rng, 20, upper=True)
    scram = f"SCRAM-SHA-256$4096:{b64(rng, 16)}${b64(rng, 32)}:{b64(rng, 32)}"
    django = f"pbkdf2_sha256$600000${token(rng, 22)}${b64(rng, 32)}"
    ssha = b64(rng, 24)
    grub = f"grub.pbkdf2.sha512.10000.{hexs(rng, 64, upper=True)}.{hexs(rng, 64, upper=True)}"
    text, secret = rng.choice([
        (f"dn: uid=jdoe,ou=people,dc=contoso,dc=com\nuserPassword: {{SSHA}}{ssha}\nmail: jdoe@contoso.com", ssha),
        (f"dn: uid=jdoe,ou=people,dc=contoso,dc=com\nuserPassword:: {base64.b64encode(('{CRYPT}' + h).encode()).decode()}",
         base64.b64encode(("{CRYPT}" + h).encode()).decode()),
        (f" user  | authentication_string\n-------+-------------------------------------------\n app   | {mysql}", mysql),
        (f" rolname  | rolpassword\n----------+-------------------------------------\n app_rw   | {md5pg}", md5pg),
        (f" rolname  | rolpassword\n----------+------\n app_rw   | {scram}", scram.split("$", 1)[1]),
        (f"users:\n  - name: deploy\n    passwd: {h}\n    lock_passwd: false", h),
        (f'{{"username": "jdoe", "password_hash": "{h}", "active": true}}', h),
        (f"Administrator:500:aad3b435b51404eeaad3b435b51404ee:{nt}:::", nt),
        (f"CONTOSO\\svc_sql:1104:aad3b435b51404eeaad3b435b51404ee:{nt}:::", nt),
        (f"sqlsvc:{django}", django),
        (f"set superusers=\"root\"\npassword_pbkdf2 root {grub}", grub),
        (f"hash found in memory dump: {h}", h),
    ])
    return Sample("password-hash", wrap_output(rng, text + "\n"), (secret,), why="password hashes are crackable")


_TLS13 = ["CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0",
          "SERVER_TRAFFIC_SECRET_0", "EXPORTER_SECRET", "CLIENT_EARLY_TRAFFIC_SECRET", "EARLY_EXPORTER_SECRET"]


def tls_keylog(rng: random.Random) -> Sample:
    lines, secrets = [], []
    if rng.random() < 0.2:
        lines.append("# SSL/TLS secrets log file, generated by NSS")
    for _ in range(rng.randint(1, 3)):
        rand = hexs(rng, 32)
        if rng.random() < 0.4:
            secret = hexs(rng, 48)
            lines.append(f"CLIENT_RANDOM {rand} {secret}")
            secrets.append(secret)
        else:
            n = rng.choice([32, 48])
            for label in rng.sample(_TLS13, rng.randint(2, 5)):
                secret = hexs(rng, n)
                lines.append(f"{label} {rand} {secret}")
                secrets.append(secret)
    if rng.random() < 0.15:
        secret = hexs(rng, 48)
        lines.append(f"RSA {hexs(rng, 8)} {secret}")
        secrets.append(secret)
    text = "\n".join(lines) + "\n"
    command = rng.choice([None, "cat $SSLKEYLOGFILE", "tail -n 20 /tmp/sslkeys.log"])
    return Sample("tls-keylog", wrap_output(rng, text), tuple(secrets), command=command,
                  why="key-log secrets decrypt the captured TLS sessions")


def session_keys(rng: random.Random) -> Sample:
    """TLS master keys from ``openssl s_client`` and IPsec SA keys from ``ip xfrm state``."""
    if rng.random() < 0.5:
        mk = hexs(rng, 48, upper=True)
        sid = hexs(rng, 32, upper=True)
        text = (f"SSL-Session:\n    Protocol  : TLSv1.2\n    Cipher    : ECDHE-RSA-AES256-GCM-SHA384\n"
                f"    Session-ID: {sid}\n    Session-ID-ctx: \n    Master-Key: {mk}\n    PSK identity: None\n"
                f"    PSK identity hint: None\n    SRP username: None\n    Start Time: 1716371234\n")
        return Sample("session-key", text, (mk,), keep=(sid,), command="openssl s_client -connect kv.vault.azure.net:443",
                      why="the TLS master key decrypts the session; the session id is public")
    enc, auth = hexs(rng, 32), hexs(rng, 32)
    spi = f"0x{hexs(rng, 4)}"
    text = (f"src {ip(rng)} dst {ip(rng)}\n\tproto esp spi {spi} reqid 1 mode tunnel\n\treplay-window 0 flag af-unspec\n"
            f"\tauth-trunc hmac(sha256) 0x{auth} 128\n\tenc cbc(aes) 0x{enc}\n\tanti-replay context: seq 0x0, oseq 0x3\n")
    if rng.random() < 0.4:
        aead = hexs(rng, 36)
        text = text.replace(f"\tauth-trunc hmac(sha256) 0x{auth} 128\n\tenc cbc(aes) 0x{enc}\n",
                            f"\taead rfc4106(gcm(aes)) 0x{aead} 128\n")
        return Sample("session-key", text, (aead,), keep=(spi,), command="sudo ip xfrm state",
                      why="ESP keys decrypt the tunnel traffic")
    return Sample("session-key", text, (enc, auth), keep=(spi,), command="sudo ip xfrm state",
                  why="ESP keys decrypt the tunnel traffic")


SECRETS: dict[str, Gen] = {
    "shadow-hash": shadow,
    "htpasswd-hash": htpasswd,
    "password-hash": stray_hash,
    "tls-keylog": tls_keylog,
    "session-key": session_keys,
}


def benign_passwd(rng: random.Random) -> Sample:
    lines = [f"{n}:x:{rng.randint(0, 2000)}:{rng.randint(0, 2000)}:{n}:/home/{n}:/bin/bash" for n in rng.sample(_NAMES, 4)]
    lines += [f"{n}:{rng.choice(['*', '!', '!!', '!*'])}:19{rng.randint(100, 999)}:0:99999:7:::" for n in rng.sample(_NAMES, 3)]
    lines += [f"sudo:x:27:{rng.choice(_NAMES)}", "docker:!::azureuser"]
    return Sample("benign-passwd", "\n".join(lines) + "\n", command=rng.choice([None, "cat /etc/passwd", "getent group"]),
                  why="passwd/group entries and locked shadow entries hold no hash")


def benign_checksums(rng: random.Random) -> Sample:
    lines = [f"{hexs(rng, 32)}  capture-{rng.randint(1, 99)}.pcap", f"{hexs(rng, 20)}  README.md",
             f"SHA256 ({guid(rng)}.cap) = {hexs(rng, 32)}", f"MD5 (trace.pcapng) = {hexs(rng, 16)}",
             f"sha512:{hexs(rng, 64)}", f"Digest: sha256:{hexs(rng, 32)}",
             f"commit {hexs(rng, 20)}", f"Merge: {hexs(rng, 4)[:7]} {hexs(rng, 4)[:7]}",
             f"integrity sha384-{b64(rng, 48)}", f"Content-MD5: {b64(rng, 16)}",
             f"x-ms-content-crc64: {b64(rng, 8)}", f"ETag: \"0x8DC{hexs(rng, 6, upper=True)}\"",
             f"pwdLastSet: 13{rng.randint(10**16, 10**17)}", "$1 per GB; costs $5$ per month"]
    rng.shuffle(lines)
    return Sample("benign-checksums", "\n".join(lines) + "\n", why="content hashes and digests are not secrets")


def benign_tls(rng: random.Random) -> Sample:
    text = (
        f"    Handshake Protocol: Client Hello\n        Version: TLS 1.2 (0x0303)\n        Random: {hexs(rng, 32)}\n"
        f"            GMT Unix Time: May 22, 2026 11:42:07.000000000 UTC\n        Session ID Length: 32\n"
        f"        Session ID: {hexs(rng, 32)}\n        Cipher Suites Length: 62\n"
        f"        Extension: server_name (len=29) name=stghost.blob.core.windows.net\n"
        f"        Extension: key_share (len=38) x25519\n            Key Exchange: {hexs(rng, 32)}\n"
        f"Certificate fingerprint (SHA-256): {':'.join(hexs(rng, 1, upper=True) for _ in range(32))}\n"
        "export SSLKEYLOGFILE=/tmp/sslkeys.log  # then run tshark -o tls.keylog_file:/tmp/sslkeys.log\n"
        "The CLIENT_RANDOM lines in the key log let Wireshark decrypt the capture.\n"
    )
    return Sample("benign-tls-decode", wrap_output(rng, text), command=rng.choice([None, "tshark -r cap.pcap -V -Y tls"]),
                  why="TLS randoms, session ids and key shares are sent in clear")


BENIGN: dict[str, Gen] = {
    "benign-passwd": benign_passwd,
    "benign-checksums": benign_checksums,
    "benign-tls-decode": benign_tls,
}
