"""Exceptions raised by the store. Callers translate them to messages only at the CLI/API edge."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class BlockFormatError(StoreError):
    """The bytes are not a well-formed kvgraft block (bad magic, version, header or size)."""


class BlockIntegrityError(StoreError):
    """A block's payload or identity does not hash to what it claims: tampered, truncated or mislabelled."""


class BlockAuthError(BlockIntegrityError):
    """A block lacks a valid HMAC while a deployment key is configured."""


class BlockKeyError(BlockAuthError):
    """A block encrypted under a key this process does not hold, or one that does not decrypt under it."""


class BlockKeyMissingError(BlockKeyError):
    """A block encrypted under a key id this process does not hold (not damaged: another deployment's, or a retired
    key): never re-derived or quarantined over, since that would destroy a block its owner can read."""


class BlockUnsealedError(BlockAuthError):
    """A block stored in the clear read while a keyring is configured (encryption is required): never used, since
    whoever can write the bucket could have put it there with any header; `kvgraft blocks rekey` seals the clear
    blocks a deployment wrote before it had a keyring."""


class BlockNotFoundError(StoreError):
    """No object is stored under the requested key."""


class ObjectStoreUnavailableError(StoreError):
    """The object store could not be reached or answered with a server error; the operation may be retried."""


class InvalidObjectKeyError(StoreError):
    """An object key is empty, absolute, or escapes the store's root (`..`)."""


class SchemaBehindError(StoreError):
    """The database schema is older than this build's migrations; run `kvgraft db upgrade`."""


class SchemaAheadError(StoreError):
    """The database was migrated by a newer build: its schema revision is unknown to this one."""


class UnknownRoleError(StoreError):
    """An API token role other than submitter, operator or auditor was requested."""


def database_error() -> type[Exception]:
    """The error the database layer raises when the database cannot be reached or refuses the connection
    (SQLAlchemy's OperationalError), for the CLI's one-line messages; imported only when asked for."""
    from sqlalchemy.exc import OperationalError

    return OperationalError
