#!/usr/bin/env python3
"""Makes the certificates of Courier's TLS tests: a private CA and three server certificates it
signs for 127.0.0.1 and localhost: one valid, one expired, one for another host; a client
certificate it signs (for mutual TLS); and a self-signed server certificate for 127.0.0.1 and
localhost that no CA signed.

Usage: make_test_certificates.py DIRECTORY. Writes ca.pem; NAME.pem with NAME.key for valid,
expired, wrong-host and self-signed; NAME.pin for each of them, its public key pin (the base64
SHA-256 of its SubjectPublicKeyInfo, as curl's CURLOPT_PINNEDPUBLICKEY takes it); client.pem with
client.key, and client-encrypted.key, the same key encrypted with the password "courier".
Needs the `cryptography` package (Scripts/test.sh installs it).
"""
import base64
import datetime
import hashlib
import ipaddress
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def write(path, data):
    with open(path, "wb") as file:
        file.write(data)


def pin(key):
    """The base64 SHA-256 of the public key's SubjectPublicKeyInfo (DER)."""
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def write_key(path, key, password=None):
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    write(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption))


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder()
          .subject_name(name("Courier Test CA")).issuer_name(name("Courier Test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    write(os.path.join(directory, "ca.pem"), ca.public_bytes(serialization.Encoding.PEM))

    local_names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    servers = {
        "valid": (local_names, now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)),
        "expired": (local_names, now - datetime.timedelta(days=30), now - datetime.timedelta(days=1)),
        "wrong-host": ([x509.DNSName("courier.invalid")], now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)),
    }
    for server, (names, not_before, not_after) in servers.items():
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = (x509.CertificateBuilder()
                       .subject_name(name(f"Courier test server ({server})")).issuer_name(ca.subject)
                       .public_key(key.public_key()).serial_number(x509.random_serial_number())
                       .not_valid_before(not_before).not_valid_after(not_after)
                       .add_extension(x509.SubjectAlternativeName(names), critical=False)
                       .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                       .sign(ca_key, hashes.SHA256()))
        write(os.path.join(directory, f"{server}.pem"), certificate.public_bytes(serialization.Encoding.PEM))
        write_key(os.path.join(directory, f"{server}.key"), key)
        write(os.path.join(directory, f"{server}.pin"), pin(key).encode())

    # A server certificate that signs itself, for 127.0.0.1 and localhost: no CA vouches for it.
    key = ec.generate_private_key(ec.SECP256R1())
    self_signed = (x509.CertificateBuilder()
                   .subject_name(name("Courier test server (self-signed)")).issuer_name(name("Courier test server (self-signed)"))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                   .add_extension(x509.SubjectAlternativeName(local_names), critical=False)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    write(os.path.join(directory, "self-signed.pem"), self_signed.public_bytes(serialization.Encoding.PEM))
    write_key(os.path.join(directory, "self-signed.key"), key)
    write(os.path.join(directory, "self-signed.pin"), pin(key).encode())

    # A client certificate of the CA, for mutual TLS.
    key = ec.generate_private_key(ec.SECP256R1())
    client = (x509.CertificateBuilder()
              .subject_name(name("Courier test client")).issuer_name(ca.subject)
              .public_key(key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
              .sign(ca_key, hashes.SHA256()))
    write(os.path.join(directory, "client.pem"), client.public_bytes(serialization.Encoding.PEM))
    write_key(os.path.join(directory, "client.key"), key)
    write_key(os.path.join(directory, "client-encrypted.key"), key, b"courier")


if __name__ == "__main__":
    main()
