"""TLS credentials for the control channel: a testbed CA and an identity per party.

``make(DIR, hosts)`` writes, each certificate with its own key and all signed by
one private certificate authority made for this testbed:

- ``ca.pem``: the CA's certificate (every host and the controller need it);
- ``controller.pem`` and ``controller-key.pem``: the controller's identity;
- ``scheduler.pem`` and ``scheduler-key.pem``: the scheduler's, for the host whose
  daemon hosts it (the one started without ``--scheduler``);
- ``daemon-NAME.pem`` and ``daemon-NAME-key.pem`` for every host NAME: that
  daemon's own.

A certificate names its party's role in its subject's organizational unit
(``controller``, ``scheduler``, ``daemon``) and, for a daemon, its host in the
common name. Dask's TLS requires a certificate from both ends (mutual TLS), so a
peer without one signed by this CA cannot connect; which signed peer may do what
is the daemon's check of these names (``guard``). The CA's own key is not kept:
nobody can sign another certificate for this set, and a new set replaces it
wholesale. Copy each host only what it needs: ``ca.pem`` and its own daemon files
(and the scheduler's, on the host that runs it); the controller ``ca.pem`` and the
controller's files.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

CA_FILE = "ca.pem"
#: How long the certificates hold.
VALID_DAYS = 365
ROLES = ("controller", "scheduler", "daemon")
#: A daemon's host name as a certificate carries it (the experiment language's names).
HOST_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,62}")


class CredentialsError(ValueError):
    """Missing or unreadable credentials: a usage error."""


def files(role: str, name: str | None = None) -> tuple[str, str]:
    """The certificate and key file names of a party."""
    stem = f"daemon-{name}" if role == "daemon" else role
    return f"{stem}.pem", f"{stem}-key.pem"


def check_host_name(name: str) -> str:
    if not HOST_NAME.fullmatch(name):
        raise CredentialsError(
            f"host name {name!r}: expected a testbed host's name (letters, digits, _ . -)"
        )
    return name


def make(directory: str | os.PathLike, hosts: list[str]) -> list[Path]:
    """Write the CA's certificate and every party's certificate and key (keys 0600)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if not hosts:
        raise CredentialsError(
            "--make-credentials needs --hosts NAME,... (a certificate for each host's daemon)"
        )
    for h in hosts:
        check_host_name(h)
    if len(set(hosts)) != len(hosts):
        dup = next(h for h in hosts if hosts.count(h) > 1)
        raise CredentialsError(f"--hosts names {dup} twice")
    d = Path(directory)
    parties = [("controller", None), ("scheduler", None)] + [("daemon", h) for h in hosts]
    paths = [d / CA_FILE] + [d / f for role, name in parties for f in files(role, name)]
    existing = [p for p in paths if p.exists()]
    if existing:
        raise CredentialsError(f"{existing[0]} exists: not overwriting credentials")
    d.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    until = now + dt.timedelta(days=VALID_DAYS)
    pem = serialization.Encoding.PEM

    def subject(role: str | None, cn: str):
        attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "cellbench")]
        if role:
            attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, role))
        return x509.Name(attrs + [x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(subject(None, "cellbench testbed CA"))
        .issuer_name(subject(None, "cellbench testbed CA"))
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
    paths[0].write_bytes(ca.public_bytes(pem))
    for role, name in parties:
        key = ec.generate_private_key(ec.SECP256R1())
        # The controller only connects; the scheduler and the daemons listen and connect.
        usage = [ExtendedKeyUsageOID.CLIENT_AUTH]
        if role != "controller":
            usage.append(ExtendedKeyUsageOID.SERVER_AUTH)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject(role, name or f"cellbench {role}"))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(until)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        cert_file, key_file = files(role, name)
        (d / cert_file).write_bytes(cert.public_bytes(pem))
        fd = os.open(d / key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(
                key.private_bytes(
                    pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
                )
            )
    return paths


def _read(d: Path, f: str, directory, what: str) -> str:
    try:
        return (d / f).read_text()
    except OSError:
        raise CredentialsError(
            f"--credentials {directory}: found no readable {f} ({what}), expected the files "
            "`cellbench daemon --make-credentials DIR --hosts ...` writes"
        ) from None


def security(
    directory: str | os.PathLike,
    role: str = "controller",
    name: str | None = None,
    scheduler: bool = False,
):
    """Dask's Security for one party: TLS required, both ends authenticated. ``role``
    ``controller`` (a client), or ``daemon`` with its host ``name`` (a worker, and the
    scheduler too when ``scheduler``). The files are read here, once: the daemon
    needs none of them after it dropped its privileges."""
    from distributed import Security

    d = Path(directory)
    ca = _read(d, CA_FILE, directory, "the testbed CA's certificate")
    kw = {}
    if role == "controller":
        cert, key = (_read(d, f, directory, "the controller's") for f in files("controller"))
        kw |= {"tls_client_cert": cert, "tls_client_key": key}
    else:
        what = f"the daemon of host {name}'s"
        cert, key = (_read(d, f, directory, what) for f in files("daemon", name))
        kw |= {"tls_worker_cert": cert, "tls_worker_key": key}
        if scheduler:
            what = "the scheduler's, for the daemon that hosts it"
            cert, key = (_read(d, f, directory, what) for f in files("scheduler"))
            kw |= {"tls_scheduler_cert": cert, "tls_scheduler_key": key}
    return Security(require_encryption=True, tls_ca_file=ca, **kw)


def peer_identity(peercert: dict | None) -> tuple[str, str] | None:
    """(role, name) from a verified peer certificate (``ssl.getpeercert()``), or None
    when it names no role of this scheme."""
    if not peercert:
        return None
    fields: dict[str, str] = {}
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            fields.setdefault(key, value)
    role = fields.get("organizationalUnitName")
    if fields.get("organizationName") != "cellbench" or role not in ROLES:
        return None
    return role, fields.get("commonName", "")
