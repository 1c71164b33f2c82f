"""Clear-text credentials in decoded captures (tshark one-line and ``-V`` output, ``-z follow`` streams,
``tcpdump -A``), and look-alike sessions that carry no credential (prompts, capability lists, challenges).
"""

from __future__ import annotations

import base64
import random

from tests.data.redact._common import Gen, Sample, b64, guid, hexs, ip, pw, token, user, wrap_log

__all__ = ["BENIGN", "SECRETS"]


def _summary(rng: random.Random, proto: str, info: str, *, to_server: bool = True) -> str:
    a, b = ip(rng, False), ip(rng, False)
    arrow = rng.choice(["→", "->"])
    src, dst = (a, b) if to_server else (b, a)
    return f"{rng.randint(1, 9999):>5} {rng.random() * 30:.6f} {src} {arrow} {dst} {proto} {rng.randint(60, 200)} {info}"


def _follow(rng: random.Random, lines: list[str]) -> str:
    sep = rng.choice(["\r\n", "\n"])
    head = "===================================================================\nFollow: tcp,ascii\nFilter: tcp.stream eq 3\n"
    return head + sep.join(lines) + sep + "===================================================================\n"


def ftp(rng: random.Random) -> Sample:
    p, u = pw(rng, 6, 18), user(rng)
    form = rng.choice(["summary", "verbose", "follow", "tcpdump", "fields"])
    if form == "summary":
        text = wrap_log(rng, [_summary(rng, "FTP", f"Request: USER {u}"),
                              _summary(rng, "FTP", "Response: 331 Please specify the password.", to_server=False),
                              _summary(rng, "FTP", f"Request: PASS {p}"),
                              _summary(rng, "FTP", "Response: 230 Login successful.", to_server=False)])
    elif form == "verbose":
        text = (f"File Transfer Protocol (FTP)\n    PASS {p}\\r\\n\n        Request command: PASS\n"
                f"        Request arg: {p}\n    [Current working directory: ]\n")
    elif form == "follow":
        text = _follow(rng, ["220 (vsFTPd 3.0.5)", f"USER {u}", "331 Please specify the password.", f"PASS {p}",
                             "230 Login successful.", "SYST", "215 UNIX Type: L8"])
    elif form == "tcpdump":
        text = (f"11:42:07.{rng.randint(100000, 999999)} IP {ip(rng, False)}.{rng.randint(1024, 65000)} > {ip(rng, False)}.21: "
                f"Flags [P.], seq 11:{11 + len(p) + 7}, ack 35, win 502, length {len(p) + 7}: FTP: PASS {p}\n")
    else:
        text = f"USER\t{u}\nPASS\t{p}\nRETR\tcapture.pcap\n"
    return Sample("ftp-pass", text, (p,), command=rng.choice([None, "tshark -r ftp.pcap", "tshark -r ftp.pcap -T fields -e ftp.request.command -e ftp.request.arg"]),
                  why="FTP sends the password in clear after PASS")


def redis(rng: random.Random) -> Sample:
    p = pw(rng, 6, 32)
    form = rng.choice(["resp", "inline", "acl", "conf", "summary"])
    if form == "resp":
        text = _follow(rng, ["*2", "$4", rng.choice(["AUTH", "auth"]), f"${len(p)}", p, "+OK", "*1", "$4", "PING", "+PONG"])
    elif form == "acl":
        text = _follow(rng, ["*3", "$4", "AUTH", "$7", "default", f"${len(p)}", p, "+OK"])
    elif form == "inline":
        text = wrap_log(rng, [f"AUTH {p}", "+OK", "GET session:42", "$-1"])
    elif form == "conf":
        text = f"bind 0.0.0.0\nport 6379\nrequirepass {p}\nmasterauth {p}\nmaxmemory 2gb\n"
    else:
        text = wrap_log(rng, [_summary(rng, "RESP", f"Request: AUTH {p}"), _summary(rng, "RESP", "Response: OK", to_server=False)])
    return Sample("redis-auth", text, (p,), why="Redis AUTH carries the password in clear")


def http_basic(rng: random.Random) -> Sample:
    u, p = user(rng), pw(rng, 6, 20)
    blob = base64.b64encode(f"{u}:{p}".encode()).decode()
    form = rng.choice(["verbose", "curl", "summary", "proxy", "fields"])
    if form == "verbose":
        text = (f"Hypertext Transfer Protocol\n    GET /api/health HTTP/1.1\\r\\n\n    Host: 10.0.0.4:8080\\r\\n\n"
                f"    Authorization: Basic {blob}\\r\\n\n        Credentials: {u}:{p}\n    \\r\\n\n")
        secrets = (blob, p)
    elif form == "curl":
        text = f"> GET /status HTTP/1.1\n> Host: api.contoso.com\n> {rng.choice(['Authorization', 'authorization'])}: Basic {blob}\n> User-Agent: curl/8.5.0\n>\n< HTTP/1.1 200 OK\n"
        secrets = (blob,)
    elif form == "summary":
        text = wrap_log(rng, [_summary(rng, "HTTP", f"GET /admin HTTP/1.1 , Credentials: {u}:{p}")])
        secrets = (p,)
    elif form == "proxy":
        text = f"CONNECT login.microsoftonline.com:443 HTTP/1.1\r\nProxy-Authorization: basic {blob}\r\n\r\n"
        secrets = (blob,)
    else:
        text = f"{ip(rng, False)}\t{u}:{p}\n"
        return Sample("http-basic", text, (p,), command="tshark -r web.pcap -Y http.authbasic -T fields -e ip.src -e http.authbasic",
                      why="HTTP Basic is user:password in base64 or decoded by tshark")
    return Sample("http-basic", text, secrets, why="HTTP Basic is user:password in base64 or decoded by tshark")


def http_token_header(rng: random.Random) -> Sample:
    value, header = rng.choice([
        (token(rng, 40), "Authorization: Bearer"),
        (hexs(rng, 16), "Ocp-Apim-Subscription-Key:"),
        (hexs(rng, 16), "api-key:"),
        (b64(rng, 40, urlsafe=True, pad=False), "x-functions-key:"),
        (b64(rng, 32), "aeg-sas-key:"),
        (token(rng, 48), "X-ZUMO-AUTH:"),
        (token(rng, 32), "X-API-Key:"),
        (token(rng, 36), "X-Auth-Token:"),
        (f"glpat-{token(rng, 20)}", "PRIVATE-TOKEN:"),
        (token(rng, 44), "x-ms-authorization-auxiliary: Bearer"),
        (token(rng, 30), "Authorization: token"),
    ])
    name, _, scheme = header.partition(":")
    name = rng.choice([name, name.lower()])
    line = f"{name}:{scheme} {value}"
    form = rng.choice(["curl", "verbose", "h2"])
    if form == "curl":
        text = f"> POST /api/events HTTP/1.1\n> Host: func-ghost.azurewebsites.net\n> {line}\n> Content-Type: application/json\n>\n"
    elif form == "verbose":
        text = f"Hypertext Transfer Protocol\n    POST /api/events HTTP/1.1\\r\\n\n    {line}\\r\\n\n    Content-Length: 42\\r\\n\n"
    else:
        text = f"    Header: :method: POST\n    Header: {name.lower()}:{scheme} {value}\n    Header: content-type: application/json\n"
    return Sample("http-credential-header", text, (value,), why="API keys and tokens in request headers")


def cookies(rng: random.Random) -> Sample:
    vals = [token(rng, rng.choice([5, 7, 16, 32])), hexs(rng, 32), "CfDJ8" + b64(rng, 60, urlsafe=True, pad=False)]
    names = ["ASP.NET_SessionId", "ARRAffinity", ".AspNetCore.Cookies", "session", "JSESSIONID", "PHPSESSID", "sid"]
    pairs = [(rng.choice(names), v) for v in rng.sample(vals, rng.randint(1, 3))]
    form = rng.choice(["cookie", "set-cookie", "tshark-pairs", "h2"])
    if form == "cookie":
        text = f"> Cookie: {'; '.join(f'{n}={v}' for n, v in pairs)}\n"
    elif form == "set-cookie":
        text = "".join(f"< Set-Cookie: {n}={v}; Path=/; Secure; HttpOnly; SameSite=Lax\n" for n, v in pairs)
    elif form == "tshark-pairs":
        text = f"    Cookie: {'; '.join(f'{n}={v}' for n, v in pairs)}\\r\\n\n" + "".join(
            f"        Cookie pair: {n}={v}\n" for n, v in pairs)
    else:
        text = "".join(f"    Header: cookie: {n}={v}\n" for n, v in pairs)
    return Sample("http-cookie", text, tuple(v for _, v in pairs), keep=tuple(n for n, _ in pairs),
                  why="session cookies are bearer credentials")


def snmp_capture(rng: random.Random) -> Sample:
    c = pw(rng, 6, 16)
    form = rng.choice(["verbose", "tcpdump", "tcpdump-q", "fields"])
    if form == "verbose":
        text = (f"Simple Network Management Protocol\n    version: v2c (1)\n    community: {c}\n    data: get-request (0)\n"
                f"        get-request\n            request-id: {rng.randint(1, 10**9)}\n")
    elif form == "tcpdump":
        text = f"11:42:07.{rng.randint(10**5, 10**6 - 1)} IP {ip(rng, False)}.{rng.randint(1024, 65000)} > {ip(rng, False)}.161:  C=\"{c}\" GetRequest(28)  .1.3.6.1.2.1.1.1.0\n"
    elif form == "tcpdump-q":
        text = f"IP {ip(rng, False)}.161 > {ip(rng, False)}.33512:  C={c} GetResponse(43)  .1.3.6.1.2.1.1.5.0=\"core-1\"\n"
    else:
        text = f"{ip(rng, False)}\t{c}\tget-request\n"
        return Sample("snmp-community-capture", text, (c,), command="tshark -r snmp.pcap -T fields -e ip.src -e snmp.community -e snmp.data",
                      why="an SNMP community in a decoded capture")
    return Sample("snmp-community-capture", text, (c,), why="an SNMP community in a decoded capture")


def smtp_auth(rng: random.Random) -> Sample:
    u, p = f"{user(rng)}@contoso.com", pw(rng, 6, 20)
    if rng.random() < 0.5:
        blob = base64.b64encode(f"\0{u}\0{p}".encode()).decode()
        lines = ["220 mail.contoso.com ESMTP", "EHLO client", "250-AUTH PLAIN LOGIN", f"AUTH PLAIN {blob}",
                 "235 2.7.0 Authentication successful"]
        if rng.random() < 0.3:
            lines[3:4] = ["AUTH PLAIN", "334 ", blob]
        return Sample("smtp-auth", _follow(rng, lines), (blob,), why="AUTH PLAIN is \\0user\\0password in base64")
    ub, pb = base64.b64encode(u.encode()).decode(), base64.b64encode(p.encode()).decode()
    lines = ["250-AUTH LOGIN PLAIN", "AUTH LOGIN", "334 VXNlcm5hbWU6", ub, "334 UGFzc3dvcmQ6", pb, "235 2.7.0 Authentication successful"]
    if rng.random() < 0.3:
        lines[1:4] = [f"AUTH LOGIN {ub}"]
    return Sample("smtp-auth", _follow(rng, lines), (pb,), why="AUTH LOGIN sends the password in base64 after the Password: prompt")


def imap_pop(rng: random.Random) -> Sample:
    u, p = user(rng), pw(rng, 6, 20)
    tag = rng.choice(["a001", "A1", ".", "x1"])
    form = rng.choice(["imap", "imap-quoted", "pop3", "imap-plain"])
    if form == "imap":
        lines = ["* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready", f"{tag} {rng.choice(['LOGIN', 'login'])} {u} {p}", f"{tag} OK Logged in"]
    elif form == "imap-quoted":
        p = p[:3] + " " + p[3:]
        lines = [f'{tag} LOGIN "{u}" "{p}"', f"{tag} OK LOGIN completed"]
    elif form == "pop3":
        lines = ["+OK POP3 ready", f"USER {u}", "+OK", f"{rng.choice(['PASS', 'pass'])} {p}", "+OK Logged in."]
    else:
        blob = base64.b64encode(f"\0{u}\0{p}".encode()).decode()
        lines = [f"{tag} AUTHENTICATE PLAIN", "+ ", blob, f"{tag} OK"]
        return Sample("imap-pop-login", _follow(rng, lines), (blob,), why="IMAP AUTHENTICATE PLAIN carries the password")
    return Sample("imap-pop-login", _follow(rng, lines), (p,), why="IMAP LOGIN and POP3 PASS carry the password in clear")


def other_login(rng: random.Random) -> Sample:
    p = pw(rng, 6, 20)
    text = rng.choice([
        f"Lightweight Directory Access Protocol\n    LDAPMessage bindRequest(1) \"cn=admin,dc=contoso,dc=com\" simple\n        bindRequest\n"
        f"            version: 3\n            name: cn=admin,dc=contoso,dc=com\n            authentication: simple (0)\n                simple: {p}\n",
        f"PostgreSQL\n    Type: Password message\n    Length: {len(p) + 5}\n    Password: {p}\n",
        _follow(rng, ["Ubuntu 22.04 LTS", "login: admin", f"Password: {p}", "Last login: Mon May 18"]),
    ])
    return Sample("cleartext-login", text, (p,), why="LDAP simple bind, PostgreSQL password message, telnet login")


SECRETS: dict[str, Gen] = {
    "ftp-pass": ftp,
    "redis-auth": redis,
    "http-basic": http_basic,
    "http-credential-header": http_token_header,
    "http-cookie": cookies,
    "snmp-community-capture": snmp_capture,
    "smtp-auth": smtp_auth,
    "imap-pop-login": imap_pop,
    "cleartext-login": other_login,
}


def benign_sessions(rng: random.Random) -> Sample:
    host = rng.choice(["api.contoso.com", "stghost.blob.core.windows.net"])
    text = rng.choice([
        _follow(rng, ["220 (vsFTPd 3.0.5)", "USER anonymous", "331 Please specify the password.", "530 Login incorrect.",
                      "PASV", "227 Entering Passive Mode (10,0,0,5,195,80).", "QUIT", "221 Goodbye."]),
        _follow(rng, ["220 mail.contoso.com ESMTP Postfix", "EHLO client", "250-AUTH PLAIN LOGIN XOAUTH2", "250-STARTTLS",
                      "AUTH LOGIN", "334 VXNlcm5hbWU6", "535 5.7.8 Error: authentication failed", "QUIT"]),
        _follow(rng, ["* OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS AUTH=PLAIN AUTH=LOGIN] Dovecot ready.",
                      "a001 CAPABILITY", "a001 OK Capability completed.", "a002 LOGOUT"]),
        _follow(rng, ["*1", "$4", "PING", "-NOAUTH Authentication required.", "*2", "$3", "GET", "$9", "session:1"]),
        f"< HTTP/1.1 401 Unauthorized\n< WWW-Authenticate: Basic realm=\"ghost\"\n< WWW-Authenticate: Bearer authorization_uri=\"https://login.microsoftonline.com/{guid(rng)}/oauth2/authorize\", resource_id=\"https://storage.azure.com\"\n"
        f"< Vary: Cookie, Authorization\n< Access-Control-Allow-Headers: Authorization, Cookie, X-API-Key\n< x-ms-request-id: {guid(rng)}\n< Cache-Control: no-cache\n",
        f"Simple Network Management Protocol\n    version: v2c (1)\n    data: get-response (2)\n        get-response\n            request-id: {rng.randint(1, 10**9)}\n"
        "            error-status: noError (0)\n            variable-bindings: 1 item\nSNMPv2-MIB::snmpInBadCommunityNames.0 = Counter32: 3\n",
        f"> GET /api/health HTTP/1.1\n> Host: {host}\n> User-Agent: curl/8.5.0\n> Accept: */*\n>\n< HTTP/1.1 200 OK\n< Content-Type: application/json\n< x-ms-request-id: {guid(rng)}\n",
        wrap_log(rng, [_summary(rng, "HTTP", f"GET /orders?page={rng.randint(1, 9)} HTTP/1.1"),
                       _summary(rng, "TLSv1.3", "Client Hello (SNI=" + host + ")"),
                       _summary(rng, "DNS", f"Standard query 0x{hexs(rng, 2)} A {host}")]),
    ])
    return Sample("benign-capture", text, why="sessions with prompts, failures and capabilities but no credential")


BENIGN: dict[str, Gen] = {"benign-capture": benign_sessions}
