"""Router, firewall and VPN configurations: secret classes and their secret-free look-alikes.

Formats follow the vendors' own ``show running-config`` / ``show configuration`` / ``show full-configuration``
output: Cisco IOS, IOS-XE, NX-OS, IOS-XR and ASA; Juniper Junos (set and brace forms); FortiOS; PAN-OS (set
and XML); strongSwan ``ipsec.secrets`` / ``swanctl.conf``; libreswan; Huawei VRP; WireGuard and
systemd-networkd. Hash and encoding shapes are produced the way the devices produce them (type 7 is the
real Vigenere-like encoding; ``$9$`` uses the Junos alphabet), with random content.
"""

from __future__ import annotations

import random

from tests.data.redact._common import Gen, Sample, b64, case, hexs, ip, pw, quote, token, user, wrap_config

__all__ = ["BENIGN", "SECRETS"]

_XLAT = "dsfd;kfoA,.iyewrkldJKDHSUBsgvca69834ncxv9873254k;fg87"
_CRYPT = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_JUNOS = "QzF3n6/9CAtpu0OB1IREhcSyrleKvMW8LXx7N-dVbwsY2g4oaJZGUDjiHkq.mPf5T"


def type7(rng: random.Random, clear: str) -> str:
    """Cisco type 7: a two-digit seed, then each character XOR the translation table, in hex."""
    seed = rng.randint(0, 15)
    out = f"{seed:02d}"
    for i, ch in enumerate(clear):
        out += f"{ord(ch) ^ ord(_XLAT[(seed + i) % len(_XLAT)]):02X}"
    return out


def crypt_hash(rng: random.Random, kind: str) -> str:
    """A crypt(3)-style hash: ``$1$`` md5, ``$5$``/``$6$`` sha, ``$8$``/``$9$`` Cisco pbkdf2/scrypt."""
    salt = token(rng, {"1": 4, "5": 16, "6": 16, "8": 14, "9": 14}.get(kind, 8), _CRYPT)
    body = token(rng, {"1": 22, "5": 43, "6": 86, "8": 43, "9": 43}.get(kind, 43), _CRYPT)
    return f"${kind}${salt}${body}"


def junos9(rng: random.Random) -> str:
    return "$9$" + token(rng, rng.randint(14, 64), _JUNOS)


def fortienc(rng: random.Random) -> str:
    return "ENC " + b64(rng, rng.choice([40, 48, 60, 72, 80]))


def _ph(rng: random.Random) -> str:
    """A hostname line and a few lines of ordinary config around the secret."""
    return f"hostname {rng.choice(['edge', 'core', 'branch', 'fw'])}-{rng.randint(1, 40)}\n!\n"


def _tail(rng: random.Random) -> str:
    return rng.choice([
        "!\ninterface GigabitEthernet0/0\n ip address 10.0.0.1 255.255.255.0\n no shutdown\n!\n",
        "!\nline vty 0 4\n transport input ssh\n!\n",
        "!\nip route 0.0.0.0 0.0.0.0 10.0.0.254\n!\n",
        "",
    ])


# --- secrets -----------------------------------------------------------------------------------------


def cisco_type7(rng: random.Random) -> Sample:
    clear = pw(rng, 6, 14)
    enc = type7(rng, clear)
    u = user(rng)
    line = rng.choice([
        f"username {u} privilege 15 password 7 {enc}",
        f"username {u} password 7 {enc}",
        f"enable password 7 {enc}",
        f"line vty 0 4\n password 7 {enc}\n login",
        f"key chain OSPF-KEYS\n key 1\n  key-string 7 {enc}",
        f"interface Gi0/1\n ip ospf authentication-key 7 {enc}",
        f"interface Gi0/1\n ip ospf message-digest-key 1 md5 7 {enc}",
        f"router bgp 65001\n neighbor {ip(rng)} password 7 {enc}",
        f"tacacs-server key 7 {enc}",
        f"radius-server key 7 {enc}",
        f"interface Dialer1\n ppp chap password 7 {enc}",
        f"interface Vlan10\n standby 1 authentication md5 key-string 7 {enc}",
        f"ntp authentication-key 1 md5 {enc} 7",
    ])
    return Sample("cisco-type7", wrap_config(rng, _ph(rng) + line + "\n" + _tail(rng)), (enc,),
                  keep=("hostname",), why="type 7 is a reversible encoding of the password")


def cisco_secret(rng: random.Random) -> Sample:
    kind = rng.choice(["5", "8", "9", "5", "9"])
    h = crypt_hash(rng, {"5": "1"}.get(kind, kind))
    u = user(rng)
    line = rng.choice([
        f"enable secret {kind} {h}",
        f"enable secret level 15 {kind} {h}",
        f"username {u} privilege 15 secret {kind} {h}",
        f"username {u} secret {kind} {h}",
        f"username {u} privilege 15 algorithm-type scrypt secret 9 {crypt_hash(rng, '9')}",
        f"username {u} password 5 {crypt_hash(rng, '5')}  role network-admin",
        f"username {u}\n secret 10 {crypt_hash(rng, '6')}",
    ])
    secret = line.split()[-1] if "role" not in line else line.split()[4]
    if line.startswith(f"username {u}\n"):
        secret = line.split()[-1]
    return Sample("cisco-secret-hash", wrap_config(rng, _ph(rng) + line + "\n" + _tail(rng)), (secret,),
                  why="type 5/8/9 password hashes can be cracked offline")


def cisco_cleartext(rng: random.Random) -> Sample:
    clear = pw(rng, 6, 16)
    u = user(rng)
    asa = token(rng, 16, _CRYPT)
    pbkdf2 = f"$sha512$5000${b64(rng, 16)}${b64(rng, 16)}"
    huawei = rng.choice([f"$1c${token(rng, 40, _CRYPT)}$", f"%^%#{token(rng, 40, _CRYPT)}%^%#"])
    line, secret = rng.choice([
        (f"username {u} privilege 15 password 0 {clear}", clear),
        (f"username {u} password {clear}", clear),
        (f"enable password {clear}", clear),
        (f"line con 0\n password {clear}\n login", clear),
        (f"enable password {asa} encrypted", asa),
        (f"passwd {asa} encrypted", asa),
        (f"username {u} password {asa} encrypted privilege 15", asa),
        (f"username {u} password {clear} privilege 15", clear),
        (f"username {u} password {pbkdf2} pbkdf2 privilege 15", pbkdf2),
        (f"vtp password {clear}", clear),
        (f"interface Dot11Radio0\n ssid CORP\n  wpa-psk ascii 0 {clear}", clear),
        (f"local-user {u} password irreversible-cipher {huawei}", huawei),
        (f"local-user {u} password cipher {huawei}", huawei),
    ])
    return Sample("gear-password", wrap_config(rng, _ph(rng) + line + "\n" + _tail(rng)), (secret,),
                  why="clear-text or ASA/Huawei-encrypted device passwords")


def snmp_community(rng: random.Random) -> Sample:
    comm = pw(rng, 6, 16, specials="$&")
    auth, priv = pw(rng, 8, 20), pw(rng, 8, 20)
    acl = rng.choice(["", " 10", " SNMP-ACL", " view all"])
    text, secrets, command = rng.choice([
        (f"snmp-server community {comm} {case(rng, 'ro')}{acl}", (comm,), None),
        (f"snmp-server community {comm} RW", (comm,), None),
        (f"snmp-server host {ip(rng, False)} version 2c {comm}", (comm,), None),
        (f"snmp-server host {ip(rng, False)} informs version 2c {comm} udp-port 162", (comm,), None),
        (f"snmp-server host inside {ip(rng, False)} community {comm} version 2c", (comm,), None),
        (f"snmp-server user {user(rng)} NMS v3 auth sha {auth} priv aes 128 {priv}", (auth, priv), None),
        (f"set snmp community {comm} authorization read-only", (comm,), None),
        (f"snmp {{\n    community {comm} {{\n        authorization read-only;\n    }}\n}}", (comm,), None),
        (f"config system snmp community\n    edit 1\n        set name \"{comm}\"\n    next\nend", (comm,), None),
        (f"rocommunity {comm} 10.0.0.0/8\nsyslocation DC1", (comm,), None),
        (f"com2sec notConfigUser default {comm}", (comm,), None),
        (f"createUser {user(rng)} SHA \"{auth}\" AES \"{priv}\"", (auth, priv), None),
        (f"trap2sink {ip(rng, False)} {comm}", (comm,), None),
        ("SNMPv2-MIB::sysDescr.0 = STRING: Cisco IOS XE", (comm,), f"snmpwalk -v2c -c {comm} {ip(rng, False)}"),
    ])
    if command:
        return Sample("snmp-community", f"snmpwalk -v2c -c {comm} {ip(rng, False)}\n{text}\n", secrets,
                      command=command, why="an SNMP community is a password")
    return Sample("snmp-community", wrap_config(rng, _ph(rng) + text + "\n"), secrets,
                  why="an SNMP community or v3 auth/priv passphrase is a password")


def tacacs_radius(rng: random.Random) -> Sample:
    key = pw(rng, 8, 24)
    enc = type7(rng, key)
    host = ip(rng, False)
    text, secret = rng.choice([
        (f"tacacs-server host {host} key {key}", key),
        (f"tacacs-server host {host} key 0 {key}", key),
        (f"tacacs-server host {host} key 7 \"{enc}\"", enc),
        (f"radius-server host {host} auth-port 1812 acct-port 1813 key {key}", key),
        (f"radius-server host {host} key 7 {enc}", enc),
        (f"tacacs server ISE\n address ipv4 {host}\n key 7 {enc}", enc),
        (f"radius server ISE-1\n address ipv4 {host} auth-port 1812 acct-port 1813\n key {key}", key),
        (f"aaa-server ISE (inside) host {host}\n key {key}", key),
        (f"aaa group server tacacs+ TAC\n server-private {host} key 7 {enc}", enc),
        (f"set system radius-server {host} secret \"{junos9(rng)}\"", None),
        (f"set system tacplus-server {host} secret \"{junos9(rng)}\"", None),
        (f"config user radius\n    edit \"nps\"\n        set server \"{host}\"\n        set secret {fortienc(rng)}\n    next\nend", None),
        (f"client corp-switches {{\n    ipaddr = {host}/24\n    secret = {key}\n}}", key),
    ])
    if secret is None:
        secret = text.split("secret ", 1)[1].split("\n")[0].strip('"').removeprefix("ENC ")
    return Sample("tacacs-radius-key", wrap_config(rng, _ph(rng) + text + "\n"), (secret,), keep=(host,),
                  why="the shared secret between a device and its AAA server")


def ipsec_psk(rng: random.Random) -> Sample:
    psk = pw(rng, 8, 40, specials="$&")
    peer, local = ip(rng), ip(rng)
    j9 = junos9(rng)
    fenc = fortienc(rng)
    pan = "-AQ==" + b64(rng, 20) + b64(rng, 16)
    s64 = "0s" + b64(rng, 24)
    text, secret = rng.choice([
        (f"crypto isakmp key {psk} address {peer}", psk),
        (f"crypto keyring AZURE\n  pre-shared-key address {peer} key {psk}", psk),
        (f"tunnel-group {peer} ipsec-attributes\n ikev2 remote-authentication pre-shared-key {psk}\n ikev2 local-authentication pre-shared-key {psk}", psk),
        (f"set security ike policy IKE-POL pre-shared-key ascii-text \"{j9}\"", j9),
        (f"security {{\n    ike {{\n        policy IKE-POL {{\n            pre-shared-key ascii-text \"{j9}\"; ## SECRET-DATA\n        }}\n    }}\n}}", j9),
        (f"config vpn ipsec phase1-interface\n    edit \"to-azure\"\n        set interface \"port1\"\n        set remote-gw {peer}\n        set psksecret {fenc}\n    next\nend", fenc[4:]),
        (f"config vpn ipsec phase1-interface\n    edit \"to-azure\"\n        set psksecret {quote(rng, psk, chr(34))}\n    next\nend", psk),
        (f"set network ike gateway GW-AZURE authentication pre-shared-key key {pan}", pan),
        (f"<entry name=\"GW-AZURE\">\n  <authentication>\n    <pre-shared-key>\n      <key>{pan}</key>\n    </pre-shared-key>\n  </authentication>\n</entry>", pan),
        (f"{local} {peer} : PSK \"{psk}\"", psk),
        (f"%any {peer} : PSK '{psk}'", psk),
        (f": PSK {s64}", s64),
        (f"@east @west : PSK \"{psk}\"", psk),
        (f"secrets {{\n    ike-azure {{\n        id = {peer}\n        secret = {quote(rng, psk, chr(34))}\n    }}\n}}", psk),
        (f"conn azure\n    left=%defaultroute\n    right={peer}\n    authby=secret\n# /etc/ipsec.d/azure.secrets\n{local} {peer} : PSK \"{psk}\"", psk),
        (f"ike peer AZURE\n pre-shared-key cipher %^%#{token(rng, 40, _CRYPT)}%^%#\n remote-address {peer}", None),
    ])
    if secret is None:
        secret = text.split("cipher ", 1)[1].split("\n")[0]
    return Sample("ipsec-psk", wrap_config(rng, text + "\n", device=False), (secret,), keep=(peer,),
                  why="an IKE pre-shared key authenticates the tunnel")


def junos_secret(rng: random.Random) -> Sample:
    h6, h1, j9 = crypt_hash(rng, "6"), crypt_hash(rng, "1"), junos9(rng)
    u = user(rng)
    text, secret = rng.choice([
        (f"set system root-authentication encrypted-password \"{h6}\"", h6),
        (f"set system login user {u} class super-user authentication encrypted-password \"{h1}\"", h1),
        (f"system {{\n    root-authentication {{\n        encrypted-password \"{h6}\"; ## SECRET-DATA\n    }}\n}}", h6),
        (f"set protocols bgp group EBGP authentication-key \"{j9}\"", j9),
        (f"protocols {{\n    ospf {{\n        area 0.0.0.0 {{\n            interface ge-0/0/1.0 {{\n                authentication {{\n                    md5 1 key \"{j9}\"; ## SECRET-DATA\n                }}\n            }}\n        }}\n    }}\n}}", j9),
        (f"set snmp v3 usm local-engine user {u} authentication-sha authentication-key \"{j9}\"", j9),
        (f"set system login user {u} authentication plain-text-password-value \"{j9}\"", j9),
    ])
    return Sample("junos-secret", wrap_config(rng, text + "\n", device=False), (secret,),
                  why="Junos $9$ is reversible; $1$/$6$ are crackable hashes")


def fortios_enc(rng: random.Random) -> Sample:
    enc = b64(rng, rng.choice([40, 48, 60, 72, 80]))
    u = user(rng)
    field = rng.choice(["password", "passwd", "secret", "psksecret", "key", "auth-password", "priv-pwd"])
    text = (f"config {rng.choice(['system admin', 'user local', 'router bgp', 'system ha'])}\n"
            f"    edit \"{u}\"\n        set accprofile \"super_admin\"\n        set {field} ENC {enc}\n    next\nend")
    return Sample("fortios-enc", wrap_config(rng, text + "\n", device=False), (enc,), keep=("super_admin",),
                  why="FortiOS ENC values are reversibly encrypted with a known key")


def wireguard(rng: random.Random) -> Sample:
    priv, psk, pub = b64(rng, 32), b64(rng, 32), b64(rng, 32)
    sp = rng.choice([" = ", "=", " =  "])
    form = rng.choice(["wg-quick", "networkd", "dump", "show-key", "nm"])
    command = None
    if form == "wg-quick":
        text = (f"[Interface]\nAddress = 10.8.0.1/24\nListenPort = 51820\nPrivateKey{sp}{priv}\n\n[Peer]\n"
                f"PublicKey{sp}{pub}\nPresharedKey{sp}{psk}\nAllowedIPs = 10.8.0.2/32\n")
    elif form == "networkd":
        text = (f"[NetDev]\nName=wg0\nKind=wireguard\n\n[WireGuard]\nPrivateKey={priv}\nListenPort=51820\n\n"
                f"[WireGuardPeer]\nPublicKey={pub}\nPresharedKey={psk}\nAllowedIPs=10.8.0.0/24\n")
    elif form == "dump":
        command = rng.choice(["wg show all dump", "sudo wg show wg0 dump"])
        iface = "wg0\t" if " all " in command else ""
        text = (f"{iface}{priv}\t{pub}\t51820\toff\n"
                f"{iface}{b64(rng, 32)}\t{psk}\t{ip(rng)}:51820\t10.8.0.2/32\t0\t0\t0\toff\n")
    elif form == "show-key":
        text = f"{priv}\n"
        command = rng.choice(["wg show wg0 private-key", "wg genkey", "sudo wg show wg0 preshared-keys"])
        psk = ""
    else:
        text = f"[wireguard]\nprivate-key={priv}\nlisten-port=51820\n\n[wireguard-peer.{pub}]\npreshared-key={psk}\n"
    secrets = tuple(s for s in (priv, psk) if s)
    return Sample("wireguard-key", text if command else wrap_config(rng, text, device=False), secrets,
                  keep=(pub,) if form != "show-key" else (), command=command,
                  why="a WireGuard private or pre-shared key; the public key stays")


def routing_auth(rng: random.Random) -> Sample:
    key = pw(rng, 6, 20)
    nbr = ip(rng, False)
    text = rng.choice([
        f"router bgp 65010\n neighbor {nbr} remote-as 65020\n neighbor {nbr} password {key}",
        f"router bgp 65010\n neighbor {nbr} password 0 {key}",
        f"interface Gi0/0\n ip ospf authentication-key {key}",
        f"interface Gi0/0\n ip ospf message-digest-key 10 md5 {key}",
        f"key chain EIGRP\n key 1\n  key-string {key}",
        f"interface Vlan20\n standby 10 authentication md5 key-string {key}",
        f"interface Vlan20\n vrrp 5 authentication text {key}",
        f"ntp authentication-key 5 md5 {key}",
        f"router isis\n area-password {key}\n domain-password {key}",
        f"set protocols bgp group IBGP neighbor {nbr} authentication-key {quote(rng, key, chr(34))}",
    ])
    return Sample("routing-auth-key", wrap_config(rng, _ph(rng) + text + "\n"), (key,), keep=(nbr,),
                  why="routing-protocol authentication keys let an attacker inject routes")


SECRETS: dict[str, Gen] = {
    "cisco-type7": cisco_type7,
    "cisco-secret-hash": cisco_secret,
    "gear-password": cisco_cleartext,
    "snmp-community": snmp_community,
    "tacacs-radius-key": tacacs_radius,
    "ipsec-psk": ipsec_psk,
    "junos-secret": junos_secret,
    "fortios-enc": fortios_enc,
    "wireguard-key": wireguard,
    "routing-auth-key": routing_auth,
}


# --- look-alikes -------------------------------------------------------------------------------------


def benign_cisco(rng: random.Random) -> Sample:
    peer = ip(rng)
    cert = "\n".join("  " + " ".join(hexs(rng, 4, upper=True) for _ in range(8)) for _ in range(rng.randint(3, 8)))
    text = _ph(rng) + rng.choice([
        "service password-encryption\n",
        "no service password-recovery\n",
        "security passwords min-length 12\n",
    ]) + (
        "aaa new-model\naaa authentication login default group tacacs+ local\n"
        "aaa authorization exec default group tacacs+ local\n"
        "username admin privilege 15 secret 9 <removed>\n"
        "enable secret 5 *****\n"
        f"crypto pki certificate chain TP-self-signed-{rng.randint(10**8, 10**9)}\n certificate self-signed 01\n{cert}\n  \tquit\n"
        "crypto ikev2 profile AZURE-PROFILE\n match identity remote address " + peer + " 255.255.255.255\n"
        " authentication remote pre-shared-key\n authentication local pre-shared-key\n keyring local AZURE-KEYRING\n"
        "snmp-server location DC1 row 4\nsnmp-server contact noc@contoso.com\nsnmp-server enable traps snmp linkdown linkup\n"
        "tacacs-server timeout 5\nip tacacs source-interface Loopback0\n"
        "interface GigabitEthernet0/1\n ip ospf authentication message-digest\n ip ospf cost 10\n"
        "key chain OSPF-KEYS\n key 1\n  cryptographic-algorithm hmac-sha-256\n"
        "line vty 0 4\n login local\n password-retry 3\n transport input ssh\n"
        "ip ssh version 2\nip ssh pubkey-chain\n  username netops\n   key-hash ssh-rsa " + hexs(rng, 16, upper=True) + "\n"
    ) + _tail(rng)
    return Sample("benign-cisco-config", wrap_config(rng, text), why="config with no secret: keywords, masks, cert hex")


def benign_junos(rng: random.Random) -> Sample:
    text = (
        f"set system host-name srx-{rng.randint(1, 99)}\nset system services ssh root-login deny\n"
        f"set system login user netops class super-user authentication ssh-ed25519 \"ssh-ed25519 {b64(rng, 51)[:68]} netops@jump\"\n"
        f"set interfaces ge-0/0/0 unit 0 family inet address {ip(rng)}/30\n"
        f"set security ike proposal P1 authentication-method pre-shared-keys\n"
        f"set security ike proposal P1 dh-group group14\nset security ike gateway GW ike-policy IKE-POL\n"
        f"set security ike gateway GW address {ip(rng)}\nset snmp location \"DC2\"\n"
        f"set system root-authentication encrypted-password \"<removed>\"\n"
    )
    return Sample("benign-junos-config", wrap_config(rng, text, device=False), why="Junos config with no secret")


def benign_fortios(rng: random.Random) -> Sample:
    text = (
        "config system admin\n    edit \"admin\"\n        set accprofile \"super_admin\"\n        set vdom \"root\"\n"
        "        set password-expire 2026-12-31 00:00:00\n    next\nend\n"
        "config user local\n    edit \"guest\"\n        set type password\n        set status enable\n    next\nend\n"
        f"config vpn ipsec phase1-interface\n    edit \"to-azure\"\n        set authmethod psk\n        set remote-gw {ip(rng)}\n"
        "        set proposal aes256-sha256\n        set dhgrp 14\n    next\nend\n"
    )
    return Sample("benign-fortios-config", wrap_config(rng, text, device=False), why="FortiOS config with no secret")


def benign_wireguard(rng: random.Random) -> Sample:
    pubs = [b64(rng, 32) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.5:
        text = "interface: wg0\n  public key: " + b64(rng, 32) + "\n  private key: (hidden)\n  listening port: 51820\n"
        for p in pubs:
            text += f"\npeer: {p}\n  endpoint: {ip(rng)}:51820\n  allowed ips: 10.8.0.{rng.randint(2, 200)}/32\n  latest handshake: 1 minute, 2 seconds ago\n  transfer: 1.2 MiB received, 3.4 MiB sent\n"
        return Sample("benign-wireguard", text, keep=tuple(pubs), command="sudo wg show", why="wg show hides the private key")
    text = "[Interface]\nAddress = 10.8.0.2/24\nPrivateKeyFile = /etc/wireguard/wg0.key\n\n" + "".join(
        f"[Peer]\nPublicKey = {p}\nEndpoint = {ip(rng)}:51820\nAllowedIPs = 0.0.0.0/0\n\n" for p in pubs
    )
    return Sample("benign-wireguard", wrap_config(rng, text, device=False), keep=tuple(pubs),
                  why="public keys and a key *file* path only")


def benign_vpn(rng: random.Random) -> Sample:
    text = (
        f"conn azure-{rng.randint(1, 9)}\n    keyexchange=ikev2\n    authby=secret\n    left=%defaultroute\n"
        f"    leftid={ip(rng)}\n    right={ip(rng)}\n    rightsubnet=10.{rng.randint(0, 200)}.0.0/16\n    ike=aes256-sha256-modp2048!\n"
        "    esp=aes256-sha256!\n    auto=start\n\n# ipsec.secrets\nmoon.strongswan.org : RSA moonKey.pem\n"
        f"@carol : ECDSA carolKey.pem\nauthentication-method pre-shared-keys\nset pfs group{rng.choice([14, 24])}\n"
        " ikev1 pre-shared-key *****\n"
    )
    return Sample("benign-vpn-config", wrap_config(rng, text, device=False), why="IPsec config that names key files only")


BENIGN: dict[str, Gen] = {
    "benign-cisco-config": benign_cisco,
    "benign-junos-config": benign_junos,
    "benign-fortios-config": benign_fortios,
    "benign-wireguard": benign_wireguard,
    "benign-vpn-config": benign_vpn,
}
