"""Process environment changed for a block and put back afterwards: every variable the block set or removed gets
its previous value (or its absence) back, however the block ends. Benchmarks and test fixtures use it to point a
runtime at a temporary data dir, a test bucket or a private vhost."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def environment(values: Mapping[str, str] | None = None, *, defaults: Mapping[str, str] | None = None,
                unset: Iterable[str] = ()) -> Iterator[None]:
    """Set `values`, set each of `defaults` only where the variable is not set yet, remove `unset`; restore all."""
    values, defaults, unset = dict(values or {}), dict(defaults or {}), tuple(unset)
    names = {*values, *defaults, *unset}
    saved = {name: os.environ.get(name) for name in names}
    try:
        for name in unset:
            os.environ.pop(name, None)
        for name, value in defaults.items():
            os.environ.setdefault(name, value)
        os.environ.update(values)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
