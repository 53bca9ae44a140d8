"""Spark's string collations as keys: two strings are equal under a collation iff their keys
are, and they order as their keys do (Python's order of strings: code points, which is the
order of UTF-8 bytes Spark compares).

* ``UTF8_BINARY`` (written ''): the string itself;
* ``UTF8_LCASE``: the string lower-cased code point by code point (ICU's simple case mapping,
  with U+0130 as "i" + U+0307 and the final sigma as sigma: Spark's
  ``CollationAwareUTF8String.lowerCaseCodePoints``);
* the ``_RTRIM`` variants of both: the same, trailing spaces (U+0020) ignored.

The ICU collations (``UNICODE``, ``UNICODE_CI``, ``de_CI_AI``, ...) need ICU's collation keys,
which this Python does not have: ``key`` returns None for them, and whatever depends on their
order or equality is refused where it is planned.
"""
from __future__ import annotations

from typing import Callable


def key(collation: str) -> Callable[[str], str] | None:
    """The key function of ``collation`` (Spark's name, any case), or None for an ICU one."""
    name = collation.upper()
    rtrim = name.endswith("_RTRIM")
    base = name[:-len("_RTRIM")] if rtrim else name
    if base in ("", "UTF8_BINARY"):
        return _rtrim if rtrim else _same
    if base == "UTF8_LCASE":
        return _lcase_rtrim if rtrim else _lcase
    return None


def binary(collation: str) -> bool:
    """Does ``collation`` compare strings as they are (UTF8_BINARY)?"""
    return collation.upper() in ("", "UTF8_BINARY")


def _same(s: str) -> str:
    return s


def _rtrim(s: str) -> str:
    return s.rstrip(" ")


def _lcase(s: str) -> str:
    # str.lower() is the full lower-case mapping, which differs from the simple one per code
    # point only for U+0130 (the same "i" + U+0307 as Spark's) and in mapping a final capital
    # sigma to the final sigma, which Spark maps to sigma
    return s.lower().replace("\u03c2", "\u03c3")


def _lcase_rtrim(s: str) -> str:
    return _lcase(s.rstrip(" "))
