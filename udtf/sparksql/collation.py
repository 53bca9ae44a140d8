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


# ---- UTF8_LCASE string search (Spark's CollationAwareUTF8String.lowercase*) ------------------
# A match is a run of whole code points of the target whose lower-cased code points (each as
# ``_lcase`` maps it alone) spell the lower-cased pattern: "İ" (lower "i" + U+0307) contains
# neither "i" nor U+0307, and "ς" matches "Σ" and "σ".

def _match_length(target: str, pattern: str, start: int) -> int | None:
    """The number of code points of ``target`` from ``start`` that match the lower-cased
    ``pattern`` (0 for an empty one), or None."""
    acc = ""
    if acc == pattern:
        return 0
    for j in range(start, len(target)):
        acc += _lcase(target[j])
        if acc == pattern:
            return j - start + 1
        if not pattern.startswith(acc):
            return None
    return None


def lcase_find(target: str, pattern: str, start: int = 0) -> int:
    """The first code point position >= ``start`` where ``pattern`` matches under UTF8_LCASE, or -1."""
    lowered = _lcase(pattern)
    for i in range(start, len(target) + 1):
        if _match_length(target, lowered, i) is not None:
            return i
    return -1


def lcase_starts_with(target: str, pattern: str) -> bool:
    return _match_length(target, _lcase(pattern), 0) is not None


def lcase_ends_with(target: str, pattern: str) -> bool:
    lowered = _lcase(pattern)
    return any(_match_length(target, lowered, i) == len(target) - i for i in range(len(target) + 1))


def lcase_replace(target: str, search: str, replacement: str) -> str:
    """Every match of ``search``, left to right and not overlapping, replaced (Spark's
    ``lowercaseReplace``; an empty target or search leaves the target)."""
    if not target or not search:
        return target
    lowered = _lcase(search)
    out, start = [], 0
    at = lcase_find(target, search, start)
    while at != -1:
        out += [target[start:at], replacement]
        start = at + _match_length(target, lowered, at)
        at = lcase_find(target, search, start)
    out.append(target[start:])
    return "".join(out)
