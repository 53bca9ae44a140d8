"""Interval literals read without Spark.

``within_micros``: the length of a WITHIN interval, in microseconds.  Accepted are Spark's
day-time interval literals: ``INTERVAL '10' SECOND``, ``INTERVAL 10 SECONDS``, ``INTERVAL
'1.5' SECOND``, ``INTERVAL 1 HOUR 30 MINUTES``, ``INTERVAL '1 day 2 hours'``, ``INTERVAL '1
10:00:00' DAY TO SECOND`` (and the other ``X TO Y`` spans).  Year-month intervals have no fixed
length and are refused there.

``year_month``: a year-month interval literal as Spark types and stores it (months), for the
engine's expressions: Spark's Arrow conversion cannot carry such a value into the UDTF.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from .analyze import error

_MICROS = {"WEEK": 604_800_000_000, "DAY": 86_400_000_000, "HOUR": 3_600_000_000, "MINUTE": 60_000_000,
           "SECOND": 1_000_000, "MILLISECOND": 1_000, "MICROSECOND": 1}
_SPAN_FIELDS = ("DAY", "HOUR", "MINUTE", "SECOND")
_SPAN = re.compile(r"^\s*([+-])?\s*(?:(\d+)\s+)?(\d+(?::\d+)*(?:\.\d+)?)\s*$")
_WORDS = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)\s*([a-zA-Z]+)")
_YEAR_MONTH_FIELD = re.compile(r"\s*([+-])?\s*(\d+)\s*")  # INTERVAL '-3' YEAR, '+ 1' MONTH
_YEAR_TO_MONTH = re.compile(r"\s*([+-])?(\d+)-(\d+)\s*")  # INTERVAL '-1-11' YEAR TO MONTH
_INT_MAX = (1 << 31) - 1


def within_micros(node) -> int:
    """Microseconds of the WITHIN interval ``node`` (an ``exp.Interval`` or a sum of them)."""
    micros = _micros(node)
    if micros < 0:
        raise error("WITHIN must not be negative", node)
    return micros


def _micros(node) -> int:
    if isinstance(node, exp.Paren):
        return _micros(node.this)
    if isinstance(node, exp.Add):
        return _micros(node.this) + _micros(node.expression)
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        raise error("WITHIN must be a day-time interval literal such as INTERVAL '10' SECOND", node)
    text, unit = node.this.name, node.args.get("unit")
    if unit is None:
        return _words(text, node)
    if isinstance(unit, exp.IntervalSpan):
        return _span(text, _unit(unit.this, node), _unit(unit.expression, node), node)
    return _amount(text, _unit(unit, node), node)


def _unit_name(var) -> str | None:
    """The singular unit of ``var`` (``SECONDS`` -> ``SECOND``), None if not a day-time unit."""
    name = var.name.upper()
    name = name[:-1] if name.endswith("S") and name[:-1] in _MICROS else name
    return name if name in _MICROS else None


def _unit(var, node) -> str:
    name = _unit_name(var)
    if name is None:
        raise error(f"WITHIN must be a day-time interval; {var.name} is not a day-time unit "
                    "(WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND)", node)
    return name


def _amount(text: str, unit: str, node) -> int:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise error(f"WITHIN: {text!r} is not a number of {unit.lower()}s", node) from None
    return int(value * _MICROS[unit])


def _words(text: str, node) -> int:
    """``'1 day 2 hours'``: amounts each followed by a unit."""
    total, position = 0, 0
    for match in _WORDS.finditer(text):
        if text[position:match.start()].strip():
            break
        total += _amount(match.group(1), _unit(exp.var(match.group(2)), node), node)
        position = match.end()
    if position == 0 or text[position:].strip():
        raise error(f"WITHIN: cannot read the interval {text!r}", node)
    return total


def _span(text: str, first: str, last: str, node) -> int:
    """``'1 10:00:00'`` DAY TO SECOND and the like."""
    if first not in _SPAN_FIELDS or last not in _SPAN_FIELDS or \
            _SPAN_FIELDS.index(first) >= _SPAN_FIELDS.index(last):
        raise error(f"WITHIN: INTERVAL ... {first} TO {last} is not a day-time interval span", node)
    match = _SPAN.match(text)
    fields = _SPAN_FIELDS[_SPAN_FIELDS.index(first):_SPAN_FIELDS.index(last) + 1]
    parts = [] if match is None else ([match.group(2)] if match.group(2) else []) + match.group(3).split(":")
    if match is None or len(parts) != len(fields) or (match.group(2) and first != "DAY"):
        raise error(f"WITHIN: {text!r} does not fit INTERVAL {first} TO {last}", node)
    total = sum(int(Decimal(part) * _MICROS[field]) for part, field in zip(parts, fields))
    return -total if match.group(1) == "-" else total


def day_time(node) -> tuple[int, str] | None:
    """(microseconds, Spark type) of ``INTERVAL 'n' DAY|HOUR|MINUTE|SECOND`` (also plural, ``n``
    an integer, for SECOND with up to 6 decimals); None for any other node (Spark types it)."""
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal) or \
            not isinstance(node.args.get("unit"), exp.Var):
        return None
    name = _unit_name(node.args["unit"])
    digits = r"\s*[+-]?\d{1,9}(\.\d{1,6})?\s*" if name == "SECOND" else r"\s*[+-]?\d{1,9}\s*"
    if name not in ("DAY", "HOUR", "MINUTE", "SECOND") or not re.fullmatch(digits, node.this.name):
        return None
    return _amount(node.this.name, name, node), f"interval {name.lower()}"


def year_month(node) -> tuple[int, str] | None:
    """(months, Spark type) of ``INTERVAL 'n' YEAR|MONTH`` (also ``YEARS``/``MONTHS``, unquoted
    ``n``) or ``INTERVAL 'y-m' YEAR TO MONTH``; None for any other node, or a value Spark would
    refuse (Spark then types and reports it)."""
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        return None
    unit, text = node.args.get("unit"), node.this.name
    if isinstance(unit, exp.IntervalSpan):
        if (unit.this.name.upper(), unit.expression.name.upper()) != ("YEAR", "MONTH"):
            return None
        match = _YEAR_TO_MONTH.fullmatch(text)
        if match is None or int(match.group(3)) > 11:
            return None
        months, type_ = int(match.group(2)) * 12 + int(match.group(3)), "interval year to month"
    else:
        name = unit.name.upper() if unit is not None else ""
        name = name[:-1] if name in ("YEARS", "MONTHS") else name
        match = _YEAR_MONTH_FIELD.fullmatch(text)
        if name not in ("YEAR", "MONTH") or match is None:
            return None
        months = int(match.group(2)) * (12 if name == "YEAR" else 1)
        type_ = f"interval {name.lower()}"
    if months > _INT_MAX:
        return None
    return (-months if match.group(1) == "-" else months), type_
