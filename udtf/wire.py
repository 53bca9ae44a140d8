"""JSON encoding of the typed records that travel from the driver to the workers.

A record type (NamedTuple) or enum registered with ``@record`` is encoded as a one-key
object ``{"TypeName": [fields...]}`` / ``{"TypeName": value}``; tuples become lists and come
back as tuples; None, booleans, numbers and strings stay as they are.  Decoding rebuilds the
same objects, so ``decode(encode(x)) == x`` for every value built from these parts.
"""
from __future__ import annotations

from enum import Enum

_TYPES: dict = {}


def record(cls):
    """Register a NamedTuple or Enum class for the wire (names must be unique)."""
    if _TYPES.setdefault(cls.__name__, cls) is not cls:
        raise TypeError(f"two wire types are named {cls.__name__}")
    return cls


def encode(value):
    """JSON-ready form of ``value``."""
    if isinstance(value, Enum):
        return {type(value).__name__: value.value}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {type(value).__name__: [encode(v) for v in value]}
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot put a {type(value).__name__} on the wire")


def decode(data):
    """The value ``encode`` turned into ``data``."""
    if isinstance(data, list):
        return tuple(decode(v) for v in data)
    if isinstance(data, dict):
        ((name, body),) = data.items()
        cls = _TYPES[name]
        if issubclass(cls, Enum):
            return cls(body)
        return cls(*(decode(v) for v in body))
    return data
