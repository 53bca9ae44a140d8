"""Which output columns of a MATCH_RECOGNIZE the rest of its statement can read.

A relation's columns are read by the SELECT whose FROM or JOIN holds it: by name, through any
identifier in that SELECT (its subqueries included), and all at once through a star.  A plain
``*`` or ``alias.*`` in the SELECT list of a derived table passes the question on to the SELECT
reading that derived table; every other star, and a SELECT anywhere else (the statement's
result, a CTE, a set operation, an INSERT, a subquery expression, the input of another
MATCH_RECOGNIZE), may read every column, as may a SELECT naming columns by position (ORDER BY
2, ALL) or by a string (IDENTIFIER).  Names are compared case-insensitively and every
identifier counts, so the answer is a superset of what Spark resolves: dropping the other
columns never changes a result (Trino prunes pattern recognition's columns the same way).
"""
from __future__ import annotations

import re

from sqlglot import exp

from .parse import MatchRecognizeClause, Verbatim

_PLAIN = re.compile(r"\w+")  # a quoted name beyond this may be a regex (quotedRegexColumnNames)
# keywords Spark reads as a column when there is one of that name (spark.sql.ansi.enforceReservedKeywords off)
_COLUMN_OR_FUNCTION = {exp.CurrentDate: "current_date", exp.CurrentTimestamp: "current_timestamp",
                       exp.CurrentUser: "current_user", exp.SessionUser: "session_user"}


def demanded(relation: exp.Expression) -> frozenset[str] | None:
    """The lower-cased names of the output columns of ``relation`` (a MatchRecognizeClause, or
    a derived table holding one) its statement can read; None when it can read them all."""
    holder = relation.parent
    if isinstance(holder, exp.Join) and holder.this is relation:
        holder = holder.parent
    elif isinstance(holder, exp.From):
        holder = holder.parent
    else:
        return None
    if not isinstance(holder, exp.Select):
        return None
    table_alias = relation.args.get("alias")
    if table_alias is not None and table_alias.columns or relation.args.get("pivots"):
        return None  # AS m(a, b, ...) names the columns by position; PIVOT groups by the others
    wrapper = holder.parent
    while isinstance(wrapper, exp.Subquery) and not wrapper.alias:
        if any(wrapper.args.get(key) for key in ("order", "sort", "cluster", "distribute")):
            return None  # (SELECT s FROM m) ORDER BY e: Spark finds e below the SELECT list
        wrapper = wrapper.parent
    alias = relation.alias.lower() or None
    names: set[str] = set()
    passes_on = False
    for node in holder.walk(prune=lambda n: n is relation):
        if node is relation:
            continue
        if isinstance(node, (Verbatim, MatchRecognizeClause, exp.Pivot)):
            return None
        if isinstance(node, exp.Join) and node.args.get("method"):  # NATURAL: reads the common names
            return None
        if isinstance(node, exp.Anonymous) and node.name.lower() == "identifier":
            return None  # IDENTIFIER('e'): a column named by a string
        if isinstance(node, (exp.Order, exp.Group, exp.Distribute)) and any(map(_positional, node.expressions)):
            return None  # ORDER BY 2 / ALL (and a pipe's |> ordinals, which sqlglot flattens) count columns
        if type(node) in _COLUMN_OR_FUNCTION:
            names.add(_COLUMN_OR_FUNCTION[type(node)])
        if isinstance(node, exp.Identifier):
            if isinstance(node.parent, (exp.Alias, exp.TableAlias)):
                continue  # names what the SELECT makes, reads nothing
            if node.quoted and not _PLAIN.fullmatch(node.name):
                return None
            names.add(node.name.lower())
        elif isinstance(node, exp.Var):
            names.add(node.name.lower())
        elif _star(node, alias):
            if _scope(node) is not holder:  # a subquery's own *, or LATERAL (SELECT m.*): the outer m's
                if isinstance(node, exp.Column):
                    return None
            elif node.parent is not holder or holder.args.get("distinct") or holder.args.get("group"):
                return None  # the star's columns are read together (struct(*), DISTINCT *, ...)
            else:
                passes_on = True
    if passes_on:
        outer = holder.parent
        rest = demanded(outer) if isinstance(outer, exp.Subquery) else None
        if rest is None:
            return None
        names |= rest
    return frozenset(names)


def _star(node: exp.Expression, alias: str | None) -> bool:
    """``node`` expands to every column of the relation named ``alias`` (COUNT(*) reads none)."""
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
        return alias is None or node.table.lower() == alias
    return isinstance(node, exp.Star) and not isinstance(node.parent, (exp.Count, exp.Column))


def _scope(node: exp.Expression) -> exp.Expression | None:
    return node.find_ancestor(exp.Select)


def _positional(key: exp.Expression) -> bool:
    """``key`` of an ORDER / GROUP BY names a column by its position (an integer, or ALL)."""
    key = key.this if isinstance(key, exp.Ordered) else key
    return isinstance(key, exp.Literal) and not key.is_string or \
        isinstance(key, (exp.Column, exp.Var)) and key.name.lower() == "all"
