"""Spark's session time zone in pure Python: zone ids as Spark reads them, and the conversions
between instants (TIMESTAMP: microseconds since 1970-01-01T00:00Z) and local wall clocks
(TIMESTAMP_NTZ: microseconds since 1970-01-01T00:00, no zone) with java.time's rules.

``resolve(zone_id)`` is None for a zone whose offset is always zero (``UTC``, ``Z``, ``GMT``,
``+00:00`` ...): callers keep their UTC code, whose results are the same.  Otherwise it is a
``tzinfo`` (``datetime.timezone`` for fixed offsets, ``zoneinfo.ZoneInfo`` for regions), or
``ZoneError`` when this Python cannot load the zone.

Local -> instant follows ``ZonedDateTime.ofLocal``: a wall clock in a gap (spring forward) is
moved later by the gap's length, one in an overlap (fall back) takes the earlier offset unless
a preferred offset (the one a timestamp had before month arithmetic) is valid there.  Region
rules come from the IANA database Python loads (the system's or the ``tzdata`` package); they
agree with the JVM's wherever both databases have the same version.
"""
from __future__ import annotations

import datetime as _dt
import functools
import re

__all__ = ["ZoneError", "resolve", "is_utc", "local_micros", "instant_micros", "start_of_day"]

_US_PER_DAY = 86_400_000_000
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1)
# 400 Gregorian years: the calendar, weekdays included, and so every recurring DST rule repeat
_CYCLE_US = 146_097 * _US_PER_DAY
_MIN_US = (_dt.datetime(2, 1, 1) - _EPOCH) // _dt.timedelta(microseconds=1)
_MAX_US = (_dt.datetime(9998, 12, 31) - _EPOCH) // _dt.timedelta(microseconds=1)

# java.time.ZoneId.SHORT_IDS, which Spark's DateTimeUtils.getZoneId passes to ZoneId.of
_SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago",
    "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia", "NET": "Asia/Yerevan", "NST": "Pacific/Auckland", "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}
# ZoneOffset.of: ±h, ±hh, ±hh:mm, ±hhmm, ±hh:mm:ss, ±hhmmss
_OFFSET_RE = re.compile(r"([+-])(\d{1,2}|\d{2}:\d{2}|\d{4}|\d{2}:\d{2}:\d{2}|\d{6})")
_PREFIX_RE = re.compile(r"(UTC|GMT|UT)(?=[+-]|$)")
_REGION_RE = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+")


class ZoneError(ValueError):
    """A zone id Spark accepts but this Python cannot load (or one that is no zone id)."""


def _offset(text: str) -> _dt.timezone | None:
    """ZoneOffset.of(``text``) (None when malformed or beyond ±18:00)."""
    m = _OFFSET_RE.fullmatch(text)
    if not m:
        return None
    digits = m.group(2).replace(":", "")
    if len(digits) <= 2:
        h, mi, s = int(digits), 0, 0
    else:
        h, mi, s = int(digits[:2]), int(digits[2:4]), int(digits[4:] or 0)
    if mi > 59 or s > 59:
        return None
    seconds = (h * 3600 + mi * 60 + s) * (-1 if m.group(1) == "-" else 1)
    if abs(seconds) > 18 * 3600:
        return None
    return _dt.timezone(_dt.timedelta(seconds=seconds))


@functools.lru_cache(maxsize=64)
def resolve(zone_id: str) -> _dt.tzinfo | None:
    """DateTimeUtils.getZoneId(``zone_id``) as a Python tzinfo; None for a zone whose offset is
    always zero.  ``ZoneError`` when the id is malformed or its rules cannot be loaded."""
    text = re.sub(r"([+-])(\d):", r"\g<1>0\2:", zone_id, count=1)
    text = re.sub(r"([+-])(\d\d):(\d)$", r"\g<1>\2:0\3", text, count=1)
    text = _SHORT_IDS.get(text, text)
    prefix = _PREFIX_RE.match(text)
    if text == "Z" or prefix:
        rest = text[prefix.end():] if prefix else ""
        tz = _offset(rest) if rest else _UTC
    elif text[:1] in "+-":
        tz = _offset(text)
    elif _REGION_RE.fullmatch(text):
        tz = _region(text)
    else:
        tz = None
    if tz is None:
        raise ZoneError(f"unknown time zone {zone_id!r}")
    return None if tz.utcoffset(None) == _dt.timedelta(0) else tz


def _region(name: str) -> _dt.tzinfo:
    try:
        from zoneinfo import ZoneInfo
        return ZoneInfo(name)
    except Exception as e:  # ZoneInfoNotFoundError, or a malformed key
        raise ZoneError(f"cannot load the rules of time zone {name!r} (install the tzdata "
                        f"package): {e}") from None


def is_utc(zone_id: str) -> bool:
    """Does ``zone_id`` name a zone whose offset is always zero?  (Raises ``ZoneError``.)"""
    return resolve(zone_id) is None


def _in_range(us: int) -> int:
    """``us`` moved by whole 400-year cycles into Python's datetime range (same offsets)."""
    if us < _MIN_US:
        return us + -((us - _MIN_US) // _CYCLE_US) * _CYCLE_US
    if us > _MAX_US:
        return us - ((us - _MAX_US - 1) // _CYCLE_US + 1) * _CYCLE_US
    return us


def _micros(delta: _dt.timedelta) -> int:
    return delta // _dt.timedelta(microseconds=1)


def _offset_at(tz: _dt.tzinfo, instant: int) -> int:
    """The zone's UTC offset (µs) at ``instant``."""
    us = _in_range(instant)
    utc = (_EPOCH + _dt.timedelta(microseconds=us)).replace(tzinfo=_UTC)
    return _micros(utc.astimezone(tz).utcoffset())


def local_micros(instant: int, tz: _dt.tzinfo) -> int:
    """The wall clock of ``instant`` in ``tz`` (``microsToLocalDateTime``)."""
    return instant + _offset_at(tz, instant)


def _offsets(local: int, tz: _dt.tzinfo) -> tuple[int, int]:
    """(offset before, offset after) a transition at wall clock ``local`` (equal outside one)."""
    us = _in_range(local)
    wall = _EPOCH + _dt.timedelta(microseconds=us)
    return (_micros(wall.replace(tzinfo=tz, fold=0).utcoffset()),
            _micros(wall.replace(tzinfo=tz, fold=1).utcoffset()))


def instant_micros(local: int, tz: _dt.tzinfo, prefer: int | None = None) -> int:
    """``ZonedDateTime.ofLocal(local, tz, prefer)`` as an instant: in a gap the wall clock moves
    later by the gap, in an overlap ``prefer`` (an offset in µs) when valid, else the earlier
    offset."""
    before, after = _offsets(local, tz)
    if before > after and prefer == after:  # an overlap where the later offset is preferred
        return local - after
    return local - before


def start_of_day(days: int, tz: _dt.tzinfo) -> int:
    """``LocalDate.atStartOfDay(tz)`` as an instant: local midnight, or the end of the gap
    (the transition instant) when midnight falls in one."""
    midnight = days * _US_PER_DAY
    before, after = _offsets(midnight, tz)
    if before >= after:  # no gap: an overlap takes the earlier offset
        return midnight - before
    lo, hi = midnight - after, midnight - before  # the transition lies in (lo, hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _offset_at(tz, mid) == before:
            lo = mid
        else:
            hi = mid
    return hi
