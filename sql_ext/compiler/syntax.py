"""The Spark parts of a MATCH_RECOGNIZE, read by Spark's own parser.

The rewrite re-emits the clause's expressions from sqlglot's trees, and sqlglot reads more than
Spark's grammar does (``x > > 1`` as ``x >> 1``, ``f(, x)``, ``()``, ``INTERVAL '1'``, ...).  So
before a clause is analysed, its Spark expressions - PARTITION BY, ORDER BY, MEASURES with their
names, DEFINE and UNTIL conditions, the WITHIN interval, and those of each LAYER and PERIOD - are sent as the user wrote them, in one
plain SELECT, to the session's SQL parser: what it rejects is an error at the user's line:column
with Spark's message.  RUNNING and FINAL (the standard's modifiers) are blanked out of that text;
the rest of the clause (PATTERN, SUBSET, AFTER MATCH SKIP, ROWS PER MATCH, the variable names) is
SQL:2016's grammar, which ``parse`` reads.
"""
from __future__ import annotations

from typing import NamedTuple

from udtf.errors import MatchRecognizeError, line_col

from .analyze import error
from .parse import Final, MatchRecognizeClause, Running


class Piece(NamedTuple):
    at: int  # offset in the probe's text
    source: int  # offset in the user's SQL
    length: int


class Probe(NamedTuple):
    """``SELECT <expressions> FROM __sparkcep_syntax [ORDER BY <keys>]``, each expression the user's
    text, in parentheses but a measure's, which has its name (``pieces`` place it in the user's SQL)."""
    text: str
    pieces: tuple

    def source(self, offset: int) -> int | None:
        """The offset in the user's SQL of ``offset`` in the text: in a piece, its character; in
        the text between two pieces, the end of the first; before any piece, None."""
        found = None
        for piece in self.pieces:
            if piece.at <= offset:
                found = piece.source + min(offset - piece.at, max(piece.length - 1, 0))
        return found


def probe(sql: str, clause: MatchRecognizeClause) -> Probe:
    """The Spark query of ``clause`` (parsed from ``sql``) that Spark's parser must read."""
    text, pieces = "SELECT ", []

    def add(node, suffix=None, enclose: bool = False) -> None:
        nonlocal text
        start, end = node.meta["span"]
        chars = list(sql[start:end])
        for modifier in node.find_all(Running, Final):
            first, last = modifier.meta["start"], modifier.meta["end"]
            chars[first - start:last + 1 - start] = " " * (last + 1 - first)
        text += "(" if enclose else ""
        pieces.append(Piece(len(text), start, end - start))
        text += "".join(chars) + (")" if enclose else "")
        if suffix:
            name_start, name_end = suffix
            pieces.append(Piece(len(text) + 4, name_start, name_end - name_start))
            text += " AS " + sql[name_start:name_end]

    items = []
    for body in (*clause.layers, clause):  # (a LAYER's, docs/hierarchies.md)
        items += [(e, None) for e in body.partition_by]
        items += [(m.this, m.args["alias"].meta.get("span")) for m in body.measures]
        # (``v FROM layer`` without AS: a TRUE the user did not write)
        items += [(e, None) for d in body.definitions for e in (d.condition, d.until) if e is not None
                  and "span" in e.meta]
        items += [(body.within, None)] if body.within is not None else []
    if clause.period is not None:
        items += [(clause.period.this, None), (clause.period.expression, None)]
    for k, (node, name) in enumerate(items):
        if k:
            text += ", "
        # (an item without its name in parentheses: Spark would read a word the user wrote
        # after it, ``x > 1 IN``, as its alias, where sqlglot reads an empty ``IN``)
        add(node, name, enclose=name is None)
    if not items:
        text += "1"
    text += " FROM __sparkcep_syntax"
    for k, key in enumerate(clause.order):
        text += ", " if k else " ORDER BY "
        add(key)
    return Probe(text, tuple(pieces))


def check(sql: str, clause: MatchRecognizeClause, catalog) -> None:
    """Raise Spark's syntax error of ``clause``'s Spark expressions at the user's line:column."""
    spark_probe = probe(sql, clause)
    found = catalog.syntax_error(spark_probe.text)
    if found is None:
        return
    message, offset = found
    source = None if offset is None else spark_probe.source(offset)
    if source is None:
        raise error(message, clause)
    raise MatchRecognizeError(message, *line_col(sql, source))
