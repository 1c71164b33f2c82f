"""Hand-written cases for redaction of network gear, captures, hashes, flags and labels (issue 28), kept
apart from the generated corpora: formats written independently of the generators (VyOS, MikroTik, H3C,
NX-OS, tcpdump -A, Java properties, web.config, ...) and outputs that must come back unchanged (PAM and pf
configs, kubectl describe, terraform plans, syslog). Also the --auth-mode key regression: az's warning and
the BlobNotFound error under it reach the user intact, through the shell.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from netghost.redact import redact, redact_argv
from netghost.shell import HitlDecision, SafeExecShell
from tests.shell.shell_helpers import Recorder, table_classify

# (text, command that printed it, secrets that must be gone, substrings that must stay)
SECRET_CASES: list[tuple[str, str | None, list[str], list[str]]] = [('username admin password 0 cisco\n', None, ['cisco'], ['username admin']),
 ('enable secret cisco123\n', None, ['cisco123'], []),
 ('!\n'
  'username netadmin privilege 15 role network-admin secret sha512 '
  '$6$Xk2/abc$8yH5tq0wY3lG6iJm7oPz1sRb4cVdNf9eKhQuWxA2jLt5MnBvCgZr.FpTyUe3oIa6SdHk7lZj9XwQ1bR0cVfN2m\n',
  None,
  ['$6$Xk2/abc$8yH5tq0wY3lG6iJm7oPz1sRb4cVdNf9eKhQuWxA2jLt5MnBvCgZr.FpTyUe3oIa6SdHk7lZj9XwQ1bR0cVfN2m'],
  ['username netadmin']),
 ('snmp-server user nmsuser network-admin auth md5 0x7f2b5a1c9d3e4f60718293a4b5c6d7e8 priv '
  '0x1a2b3c4d5e6f708192a3b4c5d6e7f809 localizedkey\n',
  None,
  ['0x7f2b5a1c9d3e4f60718293a4b5c6d7e8', '0x1a2b3c4d5e6f708192a3b4c5d6e7f809'],
  []),
 ('aaa-server ISE protocol radius\n'
  'aaa-server ISE (inside) host 10.1.1.1\n'
  ' key Sup3rS3cret\n'
  ' authentication-port 1812\n',
  None,
  ['Sup3rS3cret'],
  ['10.1.1.1']),
 ('crypto isakmp key 6 FLgBaJHXdYY_AcHZZMgQ_RhTDJXHUBAAB address 0.0.0.0\n',
  None,
  ['FLgBaJHXdYY_AcHZZMgQ_RhTDJXHUBAAB'],
  ['address 0.0.0.0']),
 ("set vpn ipsec site-to-site peer 198.51.100.7 authentication pre-shared-secret 'Vy0s-PSK!x'\n",
  None,
  ['Vy0s-PSK!x'],
  ['198.51.100.7']),
 ("set system login user vyos authentication plaintext-password 'vyos123'\n", None, ['vyos123'], []),
 ('/interface wireguard add listen-port=13231 name=wg1 '
  'private-key="yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="\n',
  None,
  ['yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk='],
  ['listen-port=13231']),
 ('/ppp secret add name=vpnuser password=Mk9!z service=l2tp\n', None, ['Mk9!z'], ['name=vpnuser']),
 ('local-user admin class manage\n password hash $h$6$Zq3c$abcdefghijklmnopqrstuvwxyz0123456789ABCD==\n',
  None,
  ['$h$6$Zq3c$abcdefghijklmnopqrstuvwxyz0123456789ABCD=='],
  []),
 ('radius-server host 10.0.0.5 key 7 0822455D0A16544541\n', None, ['0822455D0A16544541'], ['10.0.0.5']),
 ('tacacs-server host 10.0.0.6 key 7 "105A0C1B1D1C051E"\n', None, ['105A0C1B1D1C051E'], []),
 ('line vty 0 15\n password 7 14141B180F0B\n login\n', None, ['14141B180F0B'], ['line vty 0 15']),
 ('config system admin\n'
  '    edit "admin"\n'
  '        set password ENC SH2Cq2RvNgQBRj1mCp6e6Vw4mlhdSMTUBsEBQGSvdjhxUe+Rnbvq2ZyABgfw5w=\n'
  '    next\n'
  'end\n',
  None,
  ['SH2Cq2RvNgQBRj1mCp6e6Vw4mlhdSMTUBsEBQGSvdjhxUe+Rnbvq2ZyABgfw5w='],
  ['set password ENC']),
 ('<users>\n'
  ' <entry name="admin">\n'
  '  <phash>$1$kaiqxbuh$b7hNgHm6G0yyzDrDA.W.R/</phash>\n'
  ' </entry>\n'
  '</users>\n',
  None,
  ['$1$kaiqxbuh$b7hNgHm6G0yyzDrDA.W.R/'],
  ['entry name="admin"']),
 ('<gateway><entry '
  'name="to-azure"><authentication><pre-shared-key><key>-AQ==bWFyc2hhbGxpbmcgYXJlYQ==</key></pre-shared-key></authentication></entry></gateway>\n',
  None,
  ['-AQ==bWFyc2hhbGxpbmcgYXJlYQ=='],
  ['to-azure']),
 ('# ipsec.secrets\n10.10.0.1 %any : PSK 0x4a6f686e446f65\n', None, ['0x4a6f686e446f65'], []),
 ('snmp-server community N3tw0rkM0n RO SNMP_ACL\nsnmp-server community Wr1teC0mm RW 99\n',
  None,
  ['N3tw0rkM0n', 'Wr1teC0mm'],
  ['SNMP_ACL']),
 ('[Interface]\n'
  'PrivateKey = 0Ha7wdhDsF1xb0v/Dz2q36/ubTcMF6B2hgi/cRmfm0c=\n'
  'Address = 10.0.0.2/32\n'
  'DNS = 1.1.1.1\n'
  '\n'
  '[Peer]\n'
  'PublicKey = 1Jnlxfv0fYC0nb0PYc2LDIRjrdbDqvjlf/gbSKr8vDQ=\n'
  'PresharedKey = S6NU0e4hpXQ9uD7Ifs6kPKWCAdtnrpdaumzjA8rHThI=\n'
  'Endpoint = 203.0.113.1:51820\n',
  None,
  ['0Ha7wdhDsF1xb0v/Dz2q36/ubTcMF6B2hgi/cRmfm0c=', 'S6NU0e4hpXQ9uD7Ifs6kPKWCAdtnrpdaumzjA8rHThI='],
  ['1Jnlxfv0fYC0nb0PYc2LDIRjrdbDqvjlf/gbSKr8vDQ=']),
 ('root:$y$j9T$1rKAZ8jnDGUqQk1ZdjVZb.$Yy7k8Ie1tX2Oq8vN0V4Yb3s2v1lWbUo9rXkqkzZ6m96:19600:0:99999:7:::\n',
  'sudo cat /etc/shadow',
  ['$y$j9T$1rKAZ8jnDGUqQk1ZdjVZb.$Yy7k8Ie1tX2Oq8vN0V4Yb3s2v1lWbUo9rXkqkzZ6m96'],
  ['root:']),
 ('admin:abJnggxhB/yWI\n', 'cat .htpasswd', ['abJnggxhB/yWI'], []),
 ('dn: cn=svc,dc=x\nuserPassword: {SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n',
  None,
  ['W6ph5Mm5Pz8GgiULbPgzG37mj9g='],
  ['dn: cn=svc,dc=x']),
 ('Administrator:500:aad3b435b51404eeaad3b435b51404ee:fc525c9683e8fe067095ba2ddc971889:::\n',
  None,
  ['fc525c9683e8fe067095ba2ddc971889'],
  ['Administrator:500']),
 ('$krb5tgs$23$*sqlsvc$CONTOSO.LOCAL$MSSQLSvc/sql01*$1f4e2c...$8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f\n',
  None,
  ['8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f'],
  []),
 ('CLIENT_RANDOM 52362c4e2b4b0a1f1b6e1d5c0b9a8f7e6d5c4b3a2918171615141312111009 '
  '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0\n',
  None,
  ['9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0'],
  ['CLIENT_RANDOM 52362c4e2b4b0a1f1b6e1d5c0b9a8f7e6d5c4b3a2918171615141312111009']),
 ('client_handshake_traffic_secret a0b1c2d3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b6c7d8e9f '
  '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n',
  None,
  ['00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'],
  []),
 ('  5   0.061 10.0.0.4 → 10.0.0.9 FTP 70 Request: USER anonymous\n'
  '  7   0.064 10.0.0.4 → 10.0.0.9 FTP 78 Request: PASS Summer2024!\n',
  None,
  ['Summer2024!'],
  ['USER anonymous']),
 ('*2\r\n$4\r\nauth\r\n$6\r\nfoobar\r\n+OK\r\n', None, ['foobar'], []),
 ('GET /metrics HTTP/1.1\r\nHost: 10.0.0.5:9100\r\nAuthorization: Basic cHJvbWV0aGV1czpwcjBtM3RoM3Vz\r\n\r\n',
  None,
  ['cHJvbWV0aGV1czpwcjBtM3RoM3Vz'],
  ['Host: 10.0.0.5:9100']),
 ('Set-Cookie: ARRAffinitySameSite=2f6f3ed7c52ad83fa1f9d6e1aa3c2b6f8e1a7d43e2c8d1f5a9b4e6c7d8f9a0b1; Path=/; '
  'HttpOnly; Secure; SameSite=None; Domain=app.azurewebsites.net\n',
  None,
  ['2f6f3ed7c52ad83fa1f9d6e1aa3c2b6f8e1a7d43e2c8d1f5a9b4e6c7d8f9a0b1'],
  ['Domain=app.azurewebsites.net']),
 ('Cookie: lang=en-US; session_id=9a8b7c6d5e4f; theme=dark\n', None, ['9a8b7c6d5e4f'], ['lang=', 'theme=']),
 ('    community: N0cR34d\n    data: get-request (0)\n', None, ['N0cR34d'], ['get-request']),
 ('IP 10.0.0.7.51000 > 10.0.0.1.161:  C="pr1v4te" SetRequest(30)  .1.3.6.1.2.1.1.5.0="x"\n',
  None,
  ['pr1v4te'],
  ['SetRequest']),
 ('C: a1 LOGIN bob "correct horse"\nS: a1 OK LOGIN completed\n', None, ['correct horse'], []),
 ('S: +OK POP3 server ready\nC: USER bob\nS: +OK\nC: PASS hunter2\nS: +OK\n',
  None,
  ['hunter2'],
  ['USER bob']),
 ('AUTH PLAIN AGJvYkBleGFtcGxlLmNvbQBodW50ZXIy\r\n235 2.7.0 Authentication successful\r\n',
  None,
  ['AGJvYkBleGFtcGxlLmNvbQBodW50ZXIy'],
  []),
 ('NTLM Secure Service Provider\n'
  '    NTLM Message Type: NTLMSSP_AUTH (0x00000003)\n'
  '    NTLMv2 Response: 2b0f6ea4f0b8e0d2a8b3c8d9e7f6a5b4010100000000000080f3c1d9\n',
  None,
  ['2b0f6ea4f0b8e0d2a8b3c8d9e7f6a5b4010100000000000080f3c1d9'],
  []),
 ("sqlcmd -S myserver.database.windows.net -d db -U admin -P 'P@ssw0rd!' -Q 'SELECT 1'",
  None,
  ['P@ssw0rd!'],
  ['myserver.database.windows.net']),
 ('mysqldump -h 10.0.0.4 -uroot -pS3cr3tPw --single-transaction app > app.sql',
  None,
  ['S3cr3tPw'],
  ['10.0.0.4']),
 ('az sql server create --name srv1 --resource-group rg --location westeurope --admin-user sqladmin '
  "--admin-password 'Xy12!abc'",
  None,
  ['Xy12!abc'],
  ['srv1']),
 ('az postgres flexible-server create -g rg -n pg -u pgadmin -p Pg4dm1n!', None, ['Pg4dm1n!'], ['pgadmin']),
 ('openssl pkcs12 -in cert.pfx -out cert.pem -nodes -password pass:Pfx!2024',
  None,
  ['Pfx!2024'],
  ['cert.pfx']),
 ('keytool -list -keystore truststore.jks -storepass changeit2', None, ['changeit2'], ['truststore.jks']),
 ('java -Djavax.net.ssl.keyStorePassword=K3yst0re! -jar app.jar', None, ['K3yst0re!'], ['app.jar']),
 ('curl -u admin:Adm1n! https://10.0.0.4/api', None, ['Adm1n!'], []),
 ("docker login myreg.azurecr.io --username myreg --password 'R3g!stryPw'", None, ['R3g!stryPw'], []),
 ("Invoke-Sqlcmd -ServerInstance srv -Username sa -Password 'Sq1Pw!' -Query 'select 1'",
  None,
  ['Sq1Pw!'],
  []),
 ("$secure = ConvertTo-SecureString 'VmP@ss123' -AsPlainText -Force", None, ['VmP@ss123'], []),
 ('az storage blob upload --account-name st --account-key '
  "'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123==' -c c -f f -n n",
  None,
  ['abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123=='],
  []),
 ('MYSQL_PWD=ab1!\nMYSQL_HOST=db\n', 'printenv', ['ab1!'], ['MYSQL_HOST=db']),
 ('export GH_PAT=ghp_notreallyashape123\n', None, ['ghp_notreallyashape123'], []),
 ("DB_PASS='hunter22'\nDB_USER=app\n", None, ['hunter22'], ['DB_USER=app']),
 ('[client]\nuser = backup\npassword = B@ckup2024\nhost = 10.0.0.8\n',
  'cat ~/.my.cnf',
  ['B@ckup2024'],
  ['host = 10.0.0.8']),
 ('//registry.npmjs.org/:_authToken=9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0\n',
  None,
  ['9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0'],
  []),
 ('<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>Nex!us2024</password>\n</server>\n',
  None,
  ['Nex!us2024'],
  ['<id>nexus</id>']),
 ('apiVersion: v1\n'
  'kind: Secret\n'
  'metadata:\n'
  '  name: db\n'
  'type: kubernetes.io/basic-auth\n'
  'stringData:\n'
  '  username: admin\n'
  '  password: t0p-S3cr3t\n',
  None,
  ['t0p-S3cr3t'],
  ['name: db']),
 ('#cloud-config\npassword: ubuntu123\nchpasswd: { expire: False }\nssh_pwauth: True\n',
  None,
  ['ubuntu123'],
  ['ssh_pwauth: True']),
 ('{\n'
  '  "osProfile": {\n'
  '    "adminUsername": "azureuser",\n'
  '    "customData": "I2Nsb3VkLWNvbmZpZwpwYXNzd29yZDogdWJ1bnR1"\n'
  '  }\n'
  '}',
  None,
  ['I2Nsb3VkLWNvbmZpZwpwYXNzd29yZDogdWJ1bnR1'],
  ['azureuser']),
 ('IDENTITY_ENDPOINT=http://127.0.0.1:41056/msi/token\n'
  'IDENTITY_HEADER=853b9a84-5bfa-4b22-a3f3-0b9a43d9ad8a\n'
  'MSI_SECRET=853b9a84-5bfa-4b22-a3f3-0b9a43d9ad8a\n',
  'printenv',
  ['853b9a84-5bfa-4b22-a3f3-0b9a43d9ad8a'],
  ['http://127.0.0.1:41056/msi/token'])]

# (text, command): secret-free outputs that must come back byte-identical
BENIGN_CASES: list[tuple[str, str | None]] = [('conn azure\n  leftauth=psk\n  rightauth=psk\n', None),
 ('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host\n', None),
 ('{"kty":"RSA","use":"sig","kid":"nOo3ZDrODXEK1jKWhXslHR_KXEg","x5t":"nOo3ZDrODXEK1jKWhXslHR_KXEg","n":"oaLLT9hkcSj2tGfZsjbu7Xz1Krs0qEicXPmEsJKOBQHauZ_kRM1HdEkgOJbUznUspE6xOuOSXjlzErqBxXAu4SCvcvVOCYG2v9G3-uIrLF5dstD0sYHBo1VomtKxzF90Vslrkn6rNQgUGIWgvuQTxm1uRklYFPEcTIRw0LnYknzJ06GC9ljKR617wABVrZNkBuDgQKj37qcyxoaxIGdxEcmVFZXJyrxDgdXh9owRmZn6LIJlGjZ9m59emfuwnBnsIQG7DirJwe9SXrLXnexRQWqyzCdkYaOqkpKrsjuxUj2-MHX31FqsdpJJsOAvYXGOYBKJRjhGrGdONVrZdUdTBQ","e":"AQAB","x5c":["MIIDBTCCAe2gAwIBAgIQN33ROaIJ6bJBWDCxtmJEbjANBgkqhkiG9w0BAQsFADAtMSswKQYDVQQDEyJhY2NvdW50cy5hY2Nlc3Njb250cm9sLndpbmRvd3MubmV0MB4XDTIwMTIyMTIwNTAxN1oXDTI1MTIyMDIwNTAxN1owLTErMCkGA1UEAxMiYWNjb3VudHMuYWNjZXNzY29udHJvbC53aW5kb3dzLm5ldDCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAKGiy0/YZHEo9rRn2bI27u189Sq7NKhInFz5hLCSjgUB2rmf5ETNR3RJIDiW1M51LKROsbrjkl45cxK6gcVwLuEgr3L1TgmBtr/Rt/riKyxeXbLQ9LGBwaNVaJrSsc"]}',
  None),
 ('{\n'
  '  "value": [],\n'
  '  "nextLink": '
  '"https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/resources?api-version=2021-04-01&%24skiptoken=eyJuZXh0UGFydGl0aW9uS2V5IjoiMSExMiFNakF5TVMwd05TMHlNQSIsIm5leHRSb3dLZXkiOiIxITgwIU5USXdNVFUyTURjM05ERTNOREUyTVRBd05qZzBNVEF5T0RZME1qQTBOamN6TnpNNE1EQTIifQ%3d%3d"\n'
  '}',
  None),
 ('[\n'
  '  {\n'
  '    "name": "DbPassword",\n'
  '    "slotSetting": false,\n'
  '    "value": "@Microsoft.KeyVault(SecretUri=https://myvault.vault.azure.net/secrets/mysecret/)"\n'
  '  }\n'
  ']',
  'az webapp config appsettings list -g rg -n app'),
 ('{"thumbprint": "3BDAD6D4E1E5C5A5B5B4F6C8F9E0D1C2B3A4F5E6", "x509ThumbprintHex": '
  '"3BDAD6D4E1E5C5A5B5B4F6C8F9E0D1C2B3A4F5E6", "x509Thumbprint": "O9rW1OHlxaW1tPbI-eDRwrOk9eY"}',
  None),
 ('sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945\n', None),
 ('"contentMd5": "1B2M2Y8AsgTpgAmY7PhCfg==",\n'
  '"contentHash": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",\n',
  None),
 ('WARNING: \n'
  'There are no credentials provided in your command and environment, we will query for account key for your '
  'storage account.\n'
  'ERROR: The specified blob does not exist.\n'
  'RequestId:5e1c0f3c-801e-0031-6c1a-7b1c2e000000\n'
  'Time:2024-05-22T11:42:07.1234567Z\n'
  'ErrorCode:BlobNotFound\n',
  'az storage blob download --account-name st -c cap -n x.pcap -f x.pcap --auth-mode key'),
 ('-----BEGIN CERTIFICATE-----\n'
  'MIIDBTCCAe2gAwIBAgIQN33ROaIJ6bJBWDCxtmJEbjANBgkqhkiG9w0BAQsFADAt\n'
  'MSswKQYDVQQDEyJhY2NvdW50cy5hY2Nlc3Njb250cm9sLndpbmRvd3MubmV0MB4X\n'
  'DTIwMTIyMTIwNTAxN1oXDTI1MTIyMDIwNTAxN1owLTErMCkGA1UEAxMiYWNjb3Vu\n'
  '-----END CERTIFICATE-----\n',
  None),
 ('interface: wg0\n'
  '  public key: 1Jnlxfv0fYC0nb0PYc2LDIRjrdbDqvjlf/gbSKr8vDQ=\n'
  '  private key: (hidden)\n'
  '  listening port: 51820\n',
  'wg show'),
 ('Packets pass through the firewall; the pass rate is 98%.\n'
  'PASS  src/app.test.js\n'
  'Login succeeded for user jdoe.\n',
  None),
 ('key 1\n  cryptographic-algorithm hmac-sha-256\n  key-string 7 <removed>\n', None),
 ('Jan 12 10:11:12 vm1 sshd[1234]: Failed password for invalid user admin from 203.0.113.9 port 52234 ssh2\n'
  'Jan 12 10:11:13 vm1 sshd[1234]: Accepted publickey for azureuser from 10.0.0.4 port 50022 ssh2: RSA '
  'SHA256:AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg\n',
  None),
 ('auth    required    pam_env.so\n'
  'auth    sufficient  pam_unix.so nullok try_first_pass\n'
  'password requisite pam_pwquality.so retry=3\n'
  'session required pam_limits.so\n',
  'cat /etc/pam.d/common-auth'),
 ('pass out all keep state\npass in on em0 proto tcp to port 22\nblock in all\npass out\n',
  'cat /etc/pf.conf'),
 ('Data\n====\npassword:  12 bytes\nusername:  5 bytes\n', 'kubectl describe secret db'),
 ('NAME        TYPE     DATA   AGE\n'
  'db-secret   Opaque   2      5d\n'
  'tls-cert    kubernetes.io/tls   2   30d\n',
  'kubectl get secrets'),
 ('  + admin_password = (sensitive value)\n'
  '  + admin_username = "azureuser"\n'
  '  + custom_data    = (sensitive value)\n',
  None),
 ('{\n'
  '  "attributes": {\n'
  '    "enabled": true,\n'
  '    "recoveryLevel": "Recoverable+Purgeable"\n'
  '  },\n'
  '  "contentType": "password",\n'
  '  "id": "https://kv-ghost.vault.azure.net/secrets/db",\n'
  '  "name": "db"\n'
  '}\n',
  'az keyvault secret list --vault-name kv-ghost'),
 ('Community Index: cisco0\nCommunity SecurityName: ILMI\nstorage-type: read-only   active\n', None),
 ('interface GigabitEthernet0/1\n'
  ' ip ospf authentication message-digest\n'
  ' standby 1 authentication md5 key-chain HSRP-KEYS\n'
  ' vrrp 2 authentication text\n'
  '!\n'
  'no enable password\n'
  'password encryption aes\n'
  'key config-key password-encrypt\n',
  None),
 ('The NSG allows traffic to pass through port 443; token refresh happened at 11:42. The key insight: '
  'retransmissions dropped.\n'
  "Set name to 'web' and secret scanning to enabled.\n",
  None),
 ('set system login password format sha512\n'
  'set system authentication-order [ radius password ]\n'
  'set system services ssh root-login deny-password\n',
  None),
 ('config system global\n'
  '    set admin-sport 8443\n'
  '    set admintimeout 30\n'
  'end\n'
  'config system password-policy\n'
  '    set status enable\n'
  '    set minimum-length 12\n'
  'end\n',
  None),
 ('WWW-Authenticate: Bearer realm="", error="invalid_token", error_description="The access token expired"\n'
  'x-ms-failure-cause: InvalidAuthenticationToken\n',
  None),
 ('{\n'
  '  "authenticationType": "password",\n'
  '  "disablePasswordAuthentication": false,\n'
  '  "passwordProfile": {"forceChangePasswordNextSignIn": true},\n'
  '  "keyVaultId": "/subscriptions/x/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/kv",\n'
  '  "keyName": "cmk",\n'
  '  "tokenLifetime": 3600\n'
  '}\n',
  None),
 ('token: 4.5s\nsecret_ttl: 30d\npassword_age: 90d\nkey_size: 2048\nauth: v2\n', None),
 ('Please login with your corporate account.\nUser login root 10.0.0.4 failed\n', None),
 ('AUTH=PLAIN AUTH=LOGIN SASL-IR IMAP4rev1\n250-AUTH LOGIN PLAIN\n250 AUTH=LOGIN\n', None),
 ('Cookie: lang=en; x=1\nVary: Cookie\n', None),
 ('snmp-server location Building 4\n'
  'snmp-server contact noc@contoso.com\n'
  'snmp-server enable traps config\n'
  'snmp-server ifindex persist\n',
  None),
 ('ip ssh pubkey-chain\n'
  '  username netops\n'
  '   key-string\n'
  '    AAAAB3NzaC1yc2EAAAADAQABAAABAQDb3gmOQmvB5hPCkgQ4pZ9U0dLkB8wQ3Y8F7W0tKz1vN9eX5c2\n'
  '    exit\n',
  None),
 ('   4 2024-05-22 11:42:07.123 10.0.0.4 → 168.63.129.16 DNS 98 Standard query 0x1234 A '
  'login.microsoftonline.com\n'
  '   5 2024-05-22 11:42:07.130 168.63.129.16 → 10.0.0.4 DNS 180 Standard query response 0x1234 A '
  'login.microsoftonline.com CNAME ...\n',
  None),
 ('SHA256 '
  'Fingerprint=5E:FF:56:A2:AF:15:88:25:53:26:9A:79:E7:2F:6E:71:33:0C:3F:89:E3:A3:EC:3F:8D:2D:7F:D7:10:8F:76:FA\n'
  'Serial Number: 33000000d7:b7ed0aa2e1b9e5f4c6000000000000d7\n',
  None),
 ('CLIENT_RANDOM lines are written when SSLKEYLOGFILE is set.\nexport SSLKEYLOGFILE=$HOME/keys.log\n', None),
 ('Resource Graph query returned 1000 rows; $skipToken present, fetching next page.\n', None),
 ('  "primaryKey": null,\n  "secondaryKey": null,\n  "keyName": "RootManageSharedAccessKey",\n', None)]


@pytest.mark.parametrize(("text", "command", "secrets", "keep"), SECRET_CASES)
def test_secret_is_gone_and_its_context_stays(text: str, command: str | None, secrets: list[str], keep: list[str]) -> None:
    out = redact(text, command=command)
    assert [s for s in secrets if s in out.text] == []
    assert [k for k in keep if k not in out.text] == []
    assert redact(out.text, command=command).text == out.text


@pytest.mark.parametrize(("text", "command"), BENIGN_CASES)
def test_secret_free_output_is_unchanged(text: str, command: str | None) -> None:
    assert redact(text, command=command).text == text


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["mysql", "-h", "db", "-P", "3306", "-u", "app", "-p", "orders"], None),  # -p then a database: a prompt
        (["docker", "run", "-d", "-p", "8080:80", "nginx"], None),
        (["ssh", "-p", "2222", "azureuser@10.0.0.4"], None),
        (["az", "deployment", "group", "create", "-g", "rg", "-f", "main.bicep", "-p", "params.json"], None),
        (["az", "sql", "server", "create", "-n", "s", "-u", "sqladmin", "-p", "Xy12!abc"], 9),
        (["sqlcmd", "-S", "srv", "-U", "sa", "-P", "Sq1!pw"], 6),
        (["mysql", "-uroot", "-pS3cr3t", "db"], 2),
        (["openssl", "pkcs12", "-in", "c.pfx", "-passin", "env:PFX_PASSWORD", "-nokeys"], None),
        (["openssl", "pkcs12", "-in", "c.pfx", "-passin", "pass:Pfx!2024", "-nokeys"], 5),
    ],
)
def test_a_flag_means_a_password_only_for_the_tool_that_reads_it(argv: list[str], shown: int | None) -> None:
    out = redact_argv(argv)[0]
    changed = [i for i, (a, b) in enumerate(zip(argv, out, strict=True)) if a != b]
    assert changed == ([] if shown is None else [shown])


# What azure-cli 2.91 prints on stderr for a key-mode download of a missing blob (captured from the real
# az, `az storage blob download ... --auth-mode key`, and the storage error format of a BlobNotFound).
KEY_MODE_STDERR = (
    "WARNING: \nThere are no credentials provided in your command and environment, we will query for account key "
    "for your storage account.\nIt is recommended to provide --connection-string, --account-key or --sas-token in "
    "your command as credentials.\n\nYou also can add `--auth-mode login` in your command to use Azure Active "
    "Directory (Azure AD) for authorization if your login account is assigned required RBAC roles.\nFor more "
    "information about RBAC roles in storage, visit "
    "https://learn.microsoft.com/azure/storage/common/storage-auth-aad-rbac-cli.\n\nIn addition, setting the "
    "corresponding environment variables can avoid inputting credentials in your command. Please use --help to get "
    "more information about environment variable usage.\nERROR: The specified blob does not exist.\n"
    "RequestId:6ceb68b8-e3fb-4876-8794-1335e6002547\nTime:2026-03-17T03:38:00.0000000Z\nErrorCode:BlobNotFound\n"
)
KEY_MODE_COMMAND = "az storage blob download --account-name ghoststore -c captures -n x.pcap -f x.pcap --auth-mode key"


def test_key_mode_warning_and_the_error_under_it_are_not_secrets() -> None:
    """``--auth-mode key`` asks az to fetch a key; it does not print one. The command was judged secret-emitting
    by the word ``key`` (an option's value), so the lone ``WARNING:`` line and any bare token became
    ``[REDACTED:command_secret]`` and the user never saw why the download failed."""
    assert redact(KEY_MODE_STDERR, command=KEY_MODE_COMMAND).text == KEY_MODE_STDERR


def test_key_mode_warning_reaches_the_user_through_the_shell(tmp_path: Path) -> None:
    """The default path: the shell redacts a command's stderr with the command as context."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (tmp_path / "stderr.txt").write_text(KEY_MODE_STDERR)
    (bindir / "az").write_text(f"#!/bin/sh\ncat '{tmp_path / 'stderr.txt'}' >&2\nexit 3\n")
    (bindir / "az").chmod(0o755)
    with SafeExecShell(
        "s1",
        Recorder([HitlDecision.approve()]),
        audit_dir=tmp_path / "audit",
        classifier=table_classify,  # type: ignore[arg-type]
        cwd=tmp_path,
        path=f"{bindir}{os.pathsep}/usr/bin:/bin",
    ) as shell:
        res = shell.execute({"command": KEY_MODE_COMMAND, "reasoning": "fetch the capture"})
    assert res["exit_code"] == 3
    assert "REDACTED" not in res["stderr"]
    assert "There are no credentials provided" in res["stderr"]
    assert "ErrorCode:BlobNotFound" in res["stderr"]


@pytest.mark.parametrize("text", ['{"clientSecret": "CRAM-MD5"}', "DB_PASSWORD=digest-md5", 'api_token: "oauthbearer"'])
def test_a_mechanism_name_under_a_secret_name_is_that_secret(text: str) -> None:
    """A SASL mechanism's name is not a secret where a name only mentions authentication (AUTH=LOGIN), but
    under a name that says the value IS the secret it is the secret (found by the labelled-secret property)."""
    assert "[REDACTED" in redact(text).text


def test_a_mechanism_name_under_an_auth_name_stays() -> None:
    text = "* OK [CAPABILITY IMAP4rev1 SASL-IR AUTH=PLAIN AUTH=LOGIN] Dovecot ready."
    assert redact(text).text == text
