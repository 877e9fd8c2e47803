"""Ed25519 keys and signatures over the tag manifest (cryptography).

Keys are PEM files: PKCS#8 private key (mode 0600) and SubjectPublicKeyInfo
public key, the forms ``openssl pkeyutl`` reads, so a signature can be checked
without aitrail:

    openssl pkeyutl -verify -pubin -inkey signer.pub -rawin \
        -in tagmanifest-sha256.txt -sigfile aitrail/signature.ed25519
"""

from __future__ import annotations

import hashlib
import os
import re
import stat as stat_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

# cryptography is imported by the functions that use it, not here: every
# `aitrail collect` imports this module, and most runs sign nothing (the import
# is about 10 ms of a run's start).


class SigningKeyError(ValueError):
    """A key file that is not an Ed25519 key of the expected kind."""


KEY_FILE_MAX = 16 * 1024  # a PEM Ed25519 key is a few hundred bytes
FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")


def is_fingerprint(text: str) -> bool:
    """True for ``sha256:<64 hex digits>``: a signer named by the fingerprint printed at collection."""
    return FINGERPRINT.fullmatch(text.lower()) is not None


def read_key_file(path: str) -> bytes:
    """A key file's bytes: a regular file of at most KEY_FILE_MAX bytes, or SigningKeyError.

    Opened without blocking, so a FIFO named as a key cannot hang the command,
    and read within the limit, so ``/dev/zero`` cannot be read without end.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SigningKeyError(f"{path}: cannot be opened ({exc.strerror})") from exc
    try:
        info = os.fstat(fd)
        if not stat_module.S_ISREG(info.st_mode):
            raise SigningKeyError(f"{path}: not a regular file")
        data = os.read(fd, KEY_FILE_MAX + 1)
    finally:
        os.close(fd)
    if len(data) > KEY_FILE_MAX:
        raise SigningKeyError(f"{path}: over {KEY_FILE_MAX} bytes, not a key")
    return data


def one_time_key() -> Ed25519PrivateKey:
    """A key made for one collection: held in memory only, never written, gone when the run ends."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate()


def generate(private_path: str, public_path: str) -> str:
    """Write a new key pair (refusing to overwrite); return the public key's fingerprint."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(private_pem)
    fd = os.open(public_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(public_pem(key.public_key()))
    return fingerprint(key.public_key())


def public_pem(key: Ed25519PublicKey) -> bytes:
    """The public key as PEM (SubjectPublicKeyInfo)."""
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def fingerprint(key: Ed25519PublicKey) -> str:
    """``sha256:<hex>`` of the raw 32-byte public key."""
    from cryptography.hazmat.primitives import serialization

    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def load_private(path: str) -> Ed25519PrivateKey:
    """Load an unencrypted Ed25519 private key (PEM); SigningKeyError says what is wrong."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = read_key_file(path)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise SigningKeyError(f"{path}: not an unencrypted PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path}: not an Ed25519 private key")
    return key


def load_public(data: bytes, origin: str) -> Ed25519PublicKey:
    """Load an Ed25519 public key from PEM bytes; ``origin`` names them in errors."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise SigningKeyError(f"{origin}: not a PEM public key ({exc})") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(f"{origin}: not an Ed25519 public key")
    return key


def sign(key: Ed25519PrivateKey, message: bytes) -> bytes:
    """The Ed25519 signature of ``message``."""
    return key.sign(message)


def check(key: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
    """True when ``signature`` is ``key``'s signature of ``message``."""
    from cryptography.exceptions import InvalidSignature

    try:
        key.verify(signature, message)
    except InvalidSignature:
        return False
    return True
