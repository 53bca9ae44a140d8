"""Spark's text forms of values: casts from and to STRING for numbers, dates and timestamps.

Pure functions over the engine representation (``sqltypes``).  ``parse_*`` return ``None`` for
malformed input (the caller decides between NULL and ``[CAST_INVALID_INPUT]``).  Timestamps are
printed as wall clocks (the caller converts an instant to the session zone's, ``zone``); a
timestamp string without a zone is read in the zone the caller passes.
"""
from __future__ import annotations

import datetime as _dt
import re
from decimal import Decimal, InvalidOperation

from . import zone as _zone
from .types import round_float32

__all__ = ["double_to_string", "float_to_string", "decimal_to_string", "date_to_string",
           "timestamp_to_string", "parse_date", "parse_timestamp", "parse_timestamp_ntz", "parse_double",
           "parse_float", "parse_integral", "parse_decimal", "parse_boolean", "trim_spaces",
           "decimal_to_float32", "int_to_float32"]

_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()
_US_PER_DAY = 86_400_000_000


def trim_spaces(s: str) -> str:
    """UTF8String.trimAll: strips whitespace and ISO control characters (code points <= 32)."""
    return s.strip("".join(chr(c) for c in range(33)))


_WS = "".join(chr(c) for c in range(33))


# ---- numbers -> string ------------------------------------------------------------------

def _java_format(digits: str, exp10: int, negative: bool) -> str:
    """Java's Double.toString layout of the decimal ``0.<digits> * 10**exp10``."""
    sign = "-" if negative else ""
    # value = d1.d2d3... * 10**(exp10-1)
    e = exp10 - 1
    if -3 <= e < 7:
        if e >= 0:
            ip = digits[: e + 1].ljust(e + 1, "0")
            fp = digits[e + 1:] or "0"
        else:
            ip = "0"
            fp = "0" * (-e - 1) + digits
        return f"{sign}{ip}.{fp}"
    fp = digits[1:] or "0"
    return f"{sign}{digits[0]}.{fp}E{e}"


def _shortest_digits(text: str) -> tuple[str, int]:
    """(digits, exp10) of the shortest decimal text of a float: value = 0.digits * 10**exp10."""
    d = Decimal(text)
    _, digs, exp = d.as_tuple()
    ds = "".join(map(str, digs)).rstrip("0") or "0"
    return ds, len(digs) + exp


def double_to_string(x: float) -> str:
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    digits, e = _shortest_digits(repr(abs(x)))
    return _java_format(digits, e, x < 0)


def float_to_string(x: float) -> str:
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    import numpy as np
    text = np.format_float_scientific(np.float32(abs(x)), unique=True, trim="-")
    digits, e = _shortest_digits(text)
    return _java_format(digits, e, x < 0)


def decimal_to_string(d: Decimal, plain: bool) -> str:
    """ANSI mode prints ``toPlainString``; non-ANSI prints Java ``BigDecimal.toString``
    (scientific when the adjusted exponent is below -6, e.g. ``1E-7``)."""
    if plain:
        return format(d, "f")
    sign, digits, exp = d.as_tuple()
    unscaled = "".join(map(str, digits))
    adjusted = exp + len(unscaled) - 1
    if exp <= 0 and adjusted >= -6:
        return format(d, "f")
    # Java scientific notation: d.dddE±n
    mant = unscaled[0] + ("." + unscaled[1:] if len(unscaled) > 1 else "")
    return ("-" if sign else "") + mant + "E" + ("+" if adjusted > 0 else "") + str(adjusted)


def civil_from_days(days: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (year, month, day) of a day number, for any int (H. Hinnant)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (m <= 2), m, d)


def date_to_string(days: int) -> str:
    y, m, d = civil_from_days(days)
    if y > 9999:
        ys = f"+{y}"
    elif y < 0:
        ys = f"-{-y:04d}"
    else:
        ys = f"{y:04d}"
    return f"{ys}-{m:02d}-{d:02d}"


def timestamp_to_string(us: int) -> str:
    days, rem = divmod(us, _US_PER_DAY)
    secs, frac = divmod(rem, 1_000_000)
    h, r = divmod(secs, 3600)
    m, s = divmod(r, 60)
    out = f"{date_to_string(days)} {h:02d}:{m:02d}:{s:02d}"
    if frac:
        out += "." + f"{frac:06d}".rstrip("0")
    return out


# ---- string -> numbers ------------------------------------------------------------------

_INT_RE = re.compile(r"([+-]?)(\d+)")
_INT_FRAC_RE = re.compile(r"([+-]?)(\d*)\.(\d*)")
_FLOAT_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?")
_SPECIAL = {"inf": float("inf"), "+inf": float("inf"), "infinity": float("inf"),
            "+infinity": float("inf"), "-inf": float("-inf"), "-infinity": float("-inf"),
            "nan": float("nan"), "+nan": float("nan"), "-nan": float("nan")}


def parse_integral(s: str, lo: int, hi: int, ansi: bool) -> int | None:
    """UTF8String.toLong/toInt...: trimmed, optional sign, digits; non-ANSI also accepts and
    truncates a fractional part (``'1.9'`` -> 1).  None: malformed or out of range."""
    t = s.strip(_WS)
    m = _INT_RE.fullmatch(t) or (None if ansi else _INT_FRAC_RE.fullmatch(t))
    if m is None or not m.group(2):
        return None
    if m.re is _INT_FRAC_RE and not m.group(3).isdigit() and m.group(3) != "":
        return None
    v = int(m.group(2))
    if m.group(1) == "-":
        v = -v
    return v if lo <= v <= hi else None


def parse_double(s: str) -> float | None:
    t = s.strip(_WS)
    sp = _SPECIAL.get(t.lower())
    if sp is not None:
        return sp
    if t in ("NaN", "Infinity", "+Infinity", "-Infinity"):
        return float(t)
    if not _FLOAT_RE.fullmatch(t):
        return None
    if t[-1] in "fFdD":
        t = t[:-1]
    return float(t)


def parse_float(s: str) -> float | None:
    t = s.strip(_WS)
    sp = _SPECIAL.get(t.lower())
    if sp is not None:
        return sp
    if not _FLOAT_RE.fullmatch(t):
        return None
    if t[-1] in "fFdD":
        t = t[:-1]
    return decimal_to_float32(Decimal(t))


def parse_decimal(s: str) -> Decimal | None:
    """Java BigDecimal syntax after trimming (no NaN/Infinity, no suffixes)."""
    t = s.strip(_WS)
    if not re.fullmatch(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", t):
        return None
    try:
        return Decimal(t)
    except InvalidOperation:
        return None


_TRUE = frozenset(("t", "true", "y", "yes", "1"))
_FALSE = frozenset(("f", "false", "n", "no", "0"))


def parse_boolean(s: str) -> bool | None:
    t = s.strip(_WS).lower()
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    return None


def _f32_round_exact(x: float, exact) -> float:
    """Correctly rounded float32 of the exact value ``exact`` (Decimal or int) whose nearest
    double is ``x``: avoids double rounding (exact -> double -> float32)."""
    import numpy as np
    y = round_float32(x)
    if y == x or y != y or abs(y) == float("inf"):
        return y
    f = np.float32(y)
    ex = Decimal(exact)
    best, best_err = y, abs(Decimal(y) - ex)
    for n in (np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))):
        c = float(n)
        if abs(c) == float("inf"):
            continue
        err = abs(Decimal(c) - ex)
        if err < best_err or (err == best_err and (int(np.float32(c).view(np.uint32)) & 1) == 0):
            best, best_err = c, err
    return best


def decimal_to_float32(d: Decimal) -> float:
    """BigDecimal.floatValue: the float32 nearest to ``d`` (no double rounding)."""
    return _f32_round_exact(float(d), d)


def int_to_float32(v: int) -> float:
    """Java ``(float) long``: correctly rounded."""
    if abs(v) <= 1 << 24:
        return float(v)
    return _f32_round_exact(float(v), v)


# ---- string -> date / timestamp ---------------------------------------------------------

_DATE_RE = re.compile(r"([+-]?)(\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")
_TIME_RE = re.compile(r"(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?")
_ZONE_RE = re.compile(r"(?:Z|UTC|GMT|UT|(?:(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?))",
                      re.IGNORECASE)


def _days(year: int, month: int, day: int) -> int | None:
    try:
        return _dt.date(year, month, day).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        return None


def parse_date(s: str) -> int | None:
    """DateTimeUtils.stringToDate: ``yyyy[-m[m][-d[d]]]`` then optionally ' ' or 'T' and
    anything."""
    t = s.strip(_WS)
    m = _DATE_RE.match(t)
    if not m:
        return None
    rest = t[m.end():]
    if rest and (m.group(4) is None or rest[0] not in " T"):
        return None
    year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    return _days(year, int(m.group(3) or 1), int(m.group(4) or 1))


def parse_timestamp(s: str, tz: _dt.tzinfo | None = None) -> int | None:
    """DateTimeUtils.stringToTimestamp: the instant of ``s``; a string without a zone is a wall
    clock in the session zone ``tz`` (None: UTC)."""
    parts = _timestamp_parts(s)
    if parts is None:
        return None
    local, zone = parts
    zone = zone or tz
    return local if zone is None else _zone.instant_micros(local, zone)


def parse_timestamp_ntz(s: str) -> int | None:
    """DateTimeUtils.stringToTimestampWithoutTimeZone: the wall clock of ``s`` (a zone in the
    string is read and ignored)."""
    parts = _timestamp_parts(s)
    return None if parts is None else parts[0]


def _timestamp_parts(s: str) -> tuple[int, _dt.tzinfo | None] | None:
    """(wall clock, the string's zone or None) of date, optional ``[T ]h:m[:s[.f]]`` and an
    optional zone (``Z``, ``±h[h][:mm]``, ``UTC``/``GMT`` prefixes, a zone id)."""
    t = s.strip(_WS)
    m = _DATE_RE.match(t)
    if not m:
        return None
    year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    days = _days(year, int(m.group(3) or 1), int(m.group(4) or 1))
    if days is None:
        return None
    rest = t[m.end():]
    us = 0
    zone = None
    if rest:
        if m.group(4) is None or rest[0] not in " T":
            return None
        rest = rest[1:]
        tm = _TIME_RE.match(rest)
        if tm:
            h, mi, sec = int(tm.group(1)), int(tm.group(2)), int(tm.group(3) or 0)
            if h > 23 or mi > 59 or sec > 59:
                return None
            frac = (tm.group(4) or "")[:6].ljust(6, "0")
            if tm.group(4) is not None and len(tm.group(4)) > 9:
                return None
            us = ((h * 60 + mi) * 60 + sec) * 1_000_000 + int(frac)
            rest = rest[tm.end():]
        elif rest.strip() == "":
            rest = ""
        if rest:
            zone = _string_zone(rest.strip() if rest.startswith(" ") else rest)
            if zone is None:
                return None
    return days * _US_PER_DAY + us, zone


def _string_zone(text: str) -> _dt.tzinfo | None:
    """The zone written in a timestamp string (None when it is none)."""
    zm = _ZONE_RE.fullmatch(text)
    if not zm:
        try:
            return _zone.resolve(text) or _dt.timezone.utc
        except _zone.ZoneError:
            return None
    if not zm.group(1):
        return _dt.timezone.utc
    hh, mm, ss = int(zm.group(2)), int(zm.group(3) or 0), int(zm.group(4) or 0)
    if hh > 18 or mm > 59 or ss > 59:
        return None
    off = _dt.timedelta(seconds=hh * 3600 + mm * 60 + ss)
    return _dt.timezone(off if zm.group(1) == "+" else -off)


def interval_to_string(v: int, year_month: bool, start: int, end: int) -> str:
    """ANSI interval literal text, as ``CAST(interval AS STRING)`` prints it."""
    sign = "-" if v < 0 else ""
    a = abs(v)
    if year_month:
        names = ("YEAR", "MONTH")
        if start == end:
            n = a // 12 if start == 0 else a
            return f"INTERVAL '{sign}{n}' {names[start]}"
        return f"INTERVAL '{sign}{a // 12}-{a % 12}' YEAR TO MONTH"
    names = ("DAY", "HOUR", "MINUTE", "SECOND")
    units = (86_400_000_000, 3_600_000_000, 60_000_000, 1_000_000)
    if start == end:
        if start == 3:
            secs, frac = divmod(a, 1_000_000)
            text = f"{secs:02d}" + (f".{frac:06d}".rstrip("0") if frac else "")
            return f"INTERVAL '{sign}{text}' SECOND"
        n = a // units[start]
        return f"INTERVAL '{sign}{n if start == 0 else f'{n:02d}'}' {names[start]}"
    parts = []
    rest = a
    for i in range(start, end + 1):
        if i == 3:
            secs, frac = divmod(rest, 1_000_000)
            parts.append(f"{secs:02d}" + (f".{frac:06d}".rstrip("0") if frac else ""))
        else:
            q, rest = divmod(rest, units[i])
            parts.append(str(q) if i == start else f"{q:02d}")
    head = parts[0]
    tail = ":".join(parts[1:]) if start > 0 else ":".join(parts[1:])
    text = head + (" " if start == 0 else ":") + tail if len(parts) > 1 else head
    return f"INTERVAL '{sign}{text}' {names[start]} TO {names[end]}"
