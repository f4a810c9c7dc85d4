"""TLS credentials for the control channel (Dask's TLS security).

``make(DIR)`` writes a private certificate authority's certificate and one
certificate and key it signed. Every daemon, the scheduler and the controller
load the same three files; Dask's TLS requires a certificate from both ends
(mutual TLS), so a peer without one signed by this CA cannot connect. The CA's
own key is not kept: nobody can sign another certificate for this set, and a
new set replaces it wholesale.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

CA_FILE = "ca.pem"
CERT_FILE = "cellbench.pem"
KEY_FILE = "cellbench-key.pem"
#: How long the certificates hold.
VALID_DAYS = 365


class CredentialsError(ValueError):
    """Missing or unreadable credentials: a usage error."""


def make(directory: str | os.PathLike) -> list[Path]:
    """Write ca.pem, cellbench.pem and cellbench-key.pem (0600) into ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    d = Path(directory)
    paths = [d / CA_FILE, d / CERT_FILE, d / KEY_FILE]
    existing = [p for p in paths if p.exists()]
    if existing:
        raise CredentialsError(f"{existing[0]} exists: not overwriting credentials")
    d.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    until = now + dt.timedelta(days=VALID_DAYS)

    def name(cn: str):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("cellbench control CA"))
        .issuer_name(name("cellbench control CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name("cellbench"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(cert.public_bytes(pem))
    fd = os.open(paths[2], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(
            key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        )
    return paths


def security(directory: str | os.PathLike):
    """Dask's Security for these credentials: TLS required, both ends authenticated."""
    from distributed import Security

    d = Path(directory)
    for f in (CA_FILE, CERT_FILE, KEY_FILE):
        if not (d / f).is_file():
            raise CredentialsError(
                f"--credentials {directory}: found no {f}, expected the files "
                "`cellbench daemon --make-credentials DIR` writes"
            )
    ca, cert, key = (str(d / f) for f in (CA_FILE, CERT_FILE, KEY_FILE))
    return Security(
        require_encryption=True,
        tls_ca_file=ca,
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
    )
