"""The lab's own certificate authority and the one server certificate lab ARM presents.

The real azure-cli verifies TLS against ``REQUESTS_CA_BUNDLE``; pointing it at a bundle holding only
this CA means it trusts the lab for Azure's host names and nothing else (a request that escaped the
lab could not be verified). Each lab state gets its own CA (``<state>/arm/ca.pem``); the CA's key is
never written anywhere (a new pair is made whenever the leaf is) and the leaf's stays in the state
directory (0600). EC P-256 keys: generated in
milliseconds, accepted by OpenSSL's default security level. The leaf carries the subject-alternative
names of every host the CLI reaches: ARM, the blob endpoints, the login hosts, the loopback address.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["SERVER_NAMES", "LabCertificates", "ensure_certificates"]

SERVER_NAMES = (
    "management.azure.com",
    "*.blob.core.windows.net",
    "login.microsoftonline.com",
    "graph.microsoft.com",
    "localhost",
)
"""The names the leaf certificate is valid for (plus IP 127.0.0.1)."""
_VALID = dt.timedelta(days=30)


@dataclass(frozen=True)
class LabCertificates:
    """Paths of the CA bundle the client trusts and the server's certificate chain and key."""

    ca: Path
    leaf: Path
    key: Path


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "netghost lab"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def ensure_certificates(directory: Path, *, now: dt.datetime | None = None) -> LabCertificates:
    """The lab's CA and server certificate in ``directory``, made when missing or expiring within a day.

    Raises:
        OSError: the directory cannot be written.
    """
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    certs = LabCertificates(directory / "ca.pem", directory / "leaf.pem", directory / "leaf.key")
    moment = now or dt.datetime.now(dt.UTC)
    if all(p.exists() for p in (certs.ca, certs.leaf, certs.key)):
        leaf = x509.load_pem_x509_certificate(certs.leaf.read_bytes())
        if leaf.not_valid_after_utc - moment > dt.timedelta(days=1):
            return certs
    start = moment - dt.timedelta(hours=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("netghost lab CA")
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(start + _VALID)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in SERVER_NAMES]
    names.append(x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")))
    leaf_cert = (
        x509.CertificateBuilder().subject_name(_name("management.azure.com")).issuer_name(ca_name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(start).not_valid_after(start + _VALID)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    _write_private(certs.key, key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    certs.leaf.write_bytes(leaf_cert.public_bytes(pem) + ca_cert.public_bytes(pem))
    certs.ca.write_bytes(ca_cert.public_bytes(pem))
    return certs
