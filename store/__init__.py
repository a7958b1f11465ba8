"""What a block is and where it lives: the block file format, object stores, the database and the audit bundle.

Imports nothing from engine/, workers/ or services/: a fingerprint is an opaque string and a profile an opaque dict.
"""
