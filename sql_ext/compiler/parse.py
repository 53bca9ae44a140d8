"""SQL front end: Spark SQL + SQL:2016 ``MATCH_RECOGNIZE`` (+ FlinkCEP extensions).

Built on sqlglot 30 by subclassing its Spark dialect (no fork, no eval/exec).
The ``SparkCep`` dialect accepts, wherever a table factor may stand (FROM, JOIN
operands, comma joins, derived tables, CTEs, CREATE [TEMP] VIEW ... AS, CTAS,
INSERT ... SELECT, and as the input of another MATCH_RECOGNIZE)::

    <table_primary> MATCH_RECOGNIZE (
      [PARTITION BY expr, ...]
      [ORDER BY expr [ASC|DESC] [NULLS FIRST|LAST], ...]
      [PERIOD ( start_expr , end_expr )]
      [LAYER name AS ( layer_body ), ...]
      [MEASURES expr AS name, ...]
      [ONE ROW PER MATCH | ALL ROWS PER MATCH [SHOW EMPTY MATCHES | OMIT EMPTY MATCHES
                                               | WITH UNMATCHED ROWS]]
      [AFTER MATCH SKIP PAST LAST ROW | AFTER MATCH SKIP TO NEXT ROW
       | AFTER MATCH SKIP TO FIRST v [ERROR ON MISS] | AFTER MATCH SKIP TO LAST v [ERROR ON MISS]
       | AFTER MATCH SKIP TO v [ERROR ON MISS] | AFTER MATCH NO SKIP]
      [SEMANTICS STANDARD | SEMANTICS FLINKCEP [DISTINCT]]
      PATTERN ( <raw pattern text> )
      [WITHIN <interval literal>]
      [WITH TIMEOUT ROWS [AS name]]
      [SUBSET u = (a, b), ...]
      [DEFINE v AS cond [UNTIL stop_cond] | v FROM layer [AS cond [UNTIL stop_cond]], ...]
    ) [AS] alias [(col, ...)]

    layer_body := [PARTITION BY ...] [MEASURES ...] [AFTER MATCH ...] [SEMANTICS ...]
                  PATTERN (...) [WITHIN ...] [SUBSET ...] [DEFINE ...]

PERIOD, LAYER, ``FROM layer`` in DEFINE and the interval functions EVENT_START(v),
EVENT_END(v), MATCH_START(), MATCH_END() are the event hierarchies of docs/hierarchies.md
(``Layer``, ``Period``, ``SpanCall``; ``Definition.source``): parsed here, checked by
``hierarchy``.

Clauses must appear in this order. ``WITHIN`` takes any Spark interval literal
(also ``INTERVAL 1 HOUR 30 MINUTES``, which sqlglot represents as an ``exp.Add`` of
intervals). No global keyword is added and the Spark tokenizer is unchanged:
``MATCH_RECOGNIZE`` is recognised by its text right after a table factor, and the
clause words (MEASURES, PATTERN, DEFINE, SUBSET, WITHIN, SEMANTICS, UNTIL, RUNNING,
FINAL, PREV/NEXT/FIRST/LAST, CLASSIFIER, MATCH_NUMBER, ...) only inside the clause
body, so ordinary Spark SQL that uses them as column/table/function names parses to
exactly the same tree as with sqlglot's Spark dialect. The only visible difference
outside MATCH_RECOGNIZE: the bare word ``MATCH_RECOGNIZE`` cannot be an implicit
table alias.

Public API
----------
``parse(sql) -> list[exp.Expr]``          every statement, SparkCep dialect
``parse_one(sql) -> exp.Expr``            exactly one statement
``split_statements(sql) -> list[str]``    the statements' own text
``statement_spans(sql)``                  their (start, end) offsets
``find_match_recognize(tree)``           list of MatchRecognizeClause, innermost first
``replace_match_recognize(clause, repl)`` swap clause *and its input* for ``repl``
``to_spark_sql(tree, pretty=False)``     generate SQL with the SparkCep generator
``position(node) -> (line, column)``     1-based, columns count characters
``line_col(sql, offset)``                offset -> (line, column)
``ParseError``                           subclass of udtf.errors.MatchRecognizeError
                                         (``message``, ``line``, ``column``); every
                                         syntax/token error is raised as this.

Tree shape (the planner's contract)
-----------------------------------
A ``MatchRecognizeClause`` node *replaces the table factor it applies to*: it is the
``this`` of an ``exp.From`` / ``exp.Join`` (or an element of a join list), and its own
``this`` is the input relation (``exp.Table`` with optional alias, ``exp.Subquery``,
...). Properties:

- ``input``            the input relation (arg ``this``)
- ``partition_by``     list of expressions                    (arg ``partition_by``)
- ``order``            list of ``exp.Ordered``                 (arg ``order``)
- ``measures``         list of ``Measure``                     (arg ``measures``)
- ``rows``             "ONE" | "ALL SHOW" | "ALL OMIT" | "ALL WITH UNMATCHED"
                       (arg ``rows`` is an ``exp.Var`` or None; default "ONE";
                       ``ALL ROWS PER MATCH`` alone means "ALL SHOW")
- ``skip``             ``SkipTo`` node or None                 (arg ``after``)
- ``skip_kind``        "PAST LAST ROW" (default) | "TO NEXT ROW" | "TO FIRST" |
                       "TO LAST" | "TO" | "NO SKIP"
- ``skip_variable``    ``exp.Identifier`` or None
- ``skip_error_on_miss`` ERROR ON MISS after the SKIP TO variable (SkipTo arg ``error_on_miss``)
- ``semantics``        "STANDARD" (default) | "FLINKCEP"     (arg ``semantics``: exp.Var)
- ``distinct``         SEMANTICS FLINKCEP DISTINCT            (arg ``distinct``: exp.Var or None)
- ``pattern``          ``Pattern`` node: ``text`` (exact user text between the
                       parentheses, surrounding whitespace excluded; "" for
                       ``PATTERN ()``), ``offset`` (0-based character offset of its
                       first character in the SQL), ``line``/``column``/``origin`` of
                       that character, ``code`` (the text up to the closing ')' with
                       SQL comments replaced by spaces, same line structure -- feed this to
                       ``udtf.pattern.parse_pattern(p.code, p.origin)``),
                       ``position_at(i)``. The positions live in ``meta`` (not
                       ``args``) so that layout does not affect tree equality.
- ``within``           interval expression (``exp.Interval`` / ``exp.Add`` of them) or None
- ``timeout``          ``TimeoutRows`` node (``WITH TIMEOUT ROWS [AS name]``) or None
- ``subsets``          list of ``SubsetDef``                   (arg ``subsets``)
- ``definitions``      list of ``Definition``                  (arg ``define``)
- ``period``           ``Period`` node (``PERIOD (start, end)``) or None
- ``layers``           list of ``Layer`` (``LAYER name AS (...)``: ``name``, and the
                       properties above from ``partition_by`` to ``definitions``)
- ``alias``            output alias name ("" if none); arg ``alias`` is an
                       ``exp.TableAlias`` (may carry column aliases)
- ``joins``            only set when the clause appears in UPDATE/DELETE-style
                       ``FROM ... JOIN`` lists parsed with joins attached to the table

Expression nodes used inside MEASURES / DEFINE:

- ``Measure(this=expr, alias=Identifier)``; ``.name`` / ``.alias`` the measure name
- ``Definition(this=Identifier(var), condition=expr, until=expr|None, source=Identifier|None)``;
  ``.variable``, ``.name``, ``.condition``, ``.until``, ``.source`` (``v FROM layer``; without
  ``AS`` the condition is TRUE)
- ``SpanCall(kind="EVENT_START"|"EVENT_END"|"MATCH_START"|"MATCH_END", this=Identifier|None)``
- ``SubsetDef(this=Identifier(name), expressions=[Identifier, ...])``; ``.variables``
- ``SkipTo(kind=str, this=Identifier|None)``
- ``Running(this=expr)`` / ``Final(this=expr)``: prefix modifiers; they bind like a
  unary operator, e.g. ``FINAL LAST(A.x) - RUNNING FIRST(A.x)`` is
  ``Sub(Final(Last(A.x)), Running(First(A.x)))``. ``RUNNING (expr)`` / ``FINAL (expr)``
  wrap an ``exp.Paren``. The modifier applies to the navigation functions and
  aggregates inside ``this`` that are not themselves wrapped by an inner modifier.
- ``Prev`` / ``Next`` / ``First`` / ``Last`` (base ``Navigation``, an ``exp.Func``):
  ``this`` (operand) and ``offset`` (second argument or None). ``Prev``/``Next``
  have ``physical = True``. Only inside MEASURES/DEFINE/UNTIL; elsewhere Spark's own
  ``first``/``last`` functions are untouched.
- ``ClassifierCall(this=Identifier|None)``, ``MatchNumberCall()`` (both ``exp.Func``)
- ``A.x`` is an ordinary ``exp.Column`` with ``table=A``; ``COUNT(A.*)`` is
  ``exp.Count(this=exp.Column(this=exp.Star(), table=A))``; ``COUNT(*)`` is
  ``exp.Count(this=exp.Star())``; SUM/AVG/MIN/MAX are sqlglot's aggregate classes.
- Pattern variable identifiers keep sqlglot's ``quoted`` flag: backticks and (in
  DEFINE / SUBSET / SKIP TO / CLASSIFIER only) Spark "double-quoted strings" give
  ``quoted=True``; case folding is the analyzer's job.

Positions: after ``parse()`` every node carrying a source token has
``meta["pos"] = (line, column)`` of its *first* character (sqlglot's own
``meta["col"]`` is the token's *last* column; do not use it). ``position(node)``
returns that, or for composite nodes (columns, binary operators, ...) the leftmost
descendant's position. Functions, literals, parenthesised expressions, unary
operators, Running/Final, navigation functions, Measure/Definition/SubsetDef,
SkipTo, Pattern and MatchRecognizeClause (the MATCH_RECOGNIZE keyword) all carry
their own position. Positions survive ``copy()`` and pickling.

Generation: ``to_spark_sql`` prints MATCH_RECOGNIZE back in the syntax above
(``parse(to_spark_sql(tree))`` gives an equal tree); once every clause has been
replaced, ``to_spark_sql(tree, dialect="spark")`` is plain Spark SQL (it raises
``ValueError`` from sqlglot if a MatchRecognizeClause/Running/Final is left).

Limitations
-----------
- ``EXPLAIN ...`` is kept by sqlglot's Spark parser as an opaque ``exp.Command``:
  a MATCH_RECOGNIZE inside it is not parsed (``find_match_recognize`` finds nothing).
- sqlglot's optimizer/scope code does not know MatchRecognizeClause as a source
  (``traverse_scope`` lists only the other sources); rewrite before optimizing.
- In expressions, Spark's ``"..."`` is a string literal, so a pattern variable with
  a quoted name must be written with backticks there (`` `a b`.price ``); DEFINE,
  SUBSET, SKIP TO and CLASSIFIER(...) also accept ``"a b"`` as a variable name.
- ``RUNNING``/``FINAL`` are modifiers only when followed by a function call, a
  qualified column or ``(``; otherwise they are column names (``running > 1``).
  So a UDF literally named ``running``/``final`` cannot be called inside the body.
- A ``TABLESAMPLE`` written after the clause's alias is parsed by sqlglot as a
  modifier of the enclosing SELECT, not of the clause.
"""
from __future__ import annotations

import re
import typing as t

from sqlglot import exp
from sqlglot.dialects.dialect import groupconcat_sql
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel
from sqlglot.errors import ParseError as _SqlglotParseError
from sqlglot.errors import TokenError as _SqlglotTokenError
from sqlglot.tokens import Token, TokenType

# The dialect's own classes (their module moved within sqlglot 30); the private parser methods
# overridden below forward whatever arguments sqlglot passes (their signatures change), and
# tests/test_parse.py checks that each still exists in the installed sqlglot.
SparkParser, SparkGenerator = Spark.Parser, Spark.Generator

from udtf.errors import MatchRecognizeError, line_col

from .calls import AGGREGATES_AS_WRITTEN, AS_WRITTEN
from .window_syntax import PatternWindow, WindowSyntax, pattern_window_sql

__all__ = [
    "ParseError",
    "SparkCep",
    "SparkCepParser",
    "SparkCepGenerator",
    "MatchRecognizeClause",
    "Measure",
    "Definition",
    "SubsetDef",
    "SkipTo",
    "Pattern",
    "Running",
    "Final",
    "Navigation",
    "Prev",
    "Next",
    "First",
    "Last",
    "ClassifierCall",
    "MatchNumberCall",
    "parse",
    "parse_one",
    "split_statements",
    "statement_spans",
    "Verbatim",
    "find_match_recognize",
    "find_nodes",
    "replace_match_recognize",
    "to_spark_sql",
    "position",
    "line_col",
]


class ParseError(MatchRecognizeError):
    """A syntax error in the user's SQL; ``line``/``column`` are 1-based."""


# --------------------------------------------------------------------------------------
# Positions
# --------------------------------------------------------------------------------------


def _pos_from_meta(meta: dict) -> tuple[int, int] | None:
    pos = meta.get("pos")
    if pos is not None:
        return (pos[0], pos[1])
    line, col = meta.get("line"), meta.get("col")
    if line is None or col is None:
        return None
    start, end = meta.get("start"), meta.get("end")
    if start is not None and end is not None:
        # sqlglot records the column of the token's last character
        col = max(1, col - (end - start))
    return (line, col)


def position(node: exp.Expr | None) -> tuple[int, int] | None:
    """(line, column) where ``node`` starts in the user's SQL, or None if unknown.

    Uses the node's own token position if it has one, otherwise the leftmost
    (smallest source offset) position among its descendants.
    """
    if node is None:
        return None
    own = node._meta
    if own and ("pos" in own or "line" in own):
        return _pos_from_meta(own)
    best: dict | None = None
    for n in node.walk():
        m = n._meta
        if m and "start" in m and (best is None or m["start"] < best["start"]):
            best = m
    return _pos_from_meta(best) if best is not None else None


def _annotate_positions(tree: exp.Expr, sql: str) -> None:
    for node in tree.walk():
        m = node._meta
        if m and "start" in m and m["start"] is not None:
            m["pos"] = line_col(sql, m["start"])


# --------------------------------------------------------------------------------------
# Expression nodes
# --------------------------------------------------------------------------------------

ROWS_SQL = {
    "ONE": "ONE ROW PER MATCH",
    "ALL SHOW": "ALL ROWS PER MATCH SHOW EMPTY MATCHES",
    "ALL OMIT": "ALL ROWS PER MATCH OMIT EMPTY MATCHES",
    "ALL WITH UNMATCHED": "ALL ROWS PER MATCH WITH UNMATCHED ROWS",
}
SEMANTICS = ("STANDARD", "FLINKCEP")


class _Body:
    """The properties a clause and a ``Layer`` share (the arguments of a pattern's body)."""

    @property
    def partition_by(self) -> list[exp.Expr]:
        return list(self.args.get("partition_by") or [])

    @property
    def measures(self) -> list[Measure]:
        return list(self.args.get("measures") or [])

    @property
    def skip(self) -> SkipTo | None:
        return self.args.get("after")

    @property
    def skip_kind(self) -> str:
        skip = self.args.get("after")
        return skip.kind if skip is not None else "PAST LAST ROW"

    @property
    def skip_variable(self) -> exp.Identifier | None:
        skip = self.args.get("after")
        return skip.variable if skip is not None else None

    @property
    def skip_error_on_miss(self) -> bool:
        skip = self.args.get("after")
        return skip is not None and bool(skip.args.get("error_on_miss"))

    @property
    def semantics(self) -> str:
        sem = self.args.get("semantics")
        return sem.name if sem is not None else "STANDARD"

    @property
    def distinct(self) -> exp.Var | None:
        return self.args.get("distinct")

    @property
    def pattern(self) -> Pattern:
        return self.args["pattern"]

    @property
    def within(self) -> exp.Expr | None:
        return self.args.get("within")

    @property
    def timeout(self) -> TimeoutRows | None:
        return self.args.get("timeout")

    @property
    def subsets(self) -> list[SubsetDef]:
        return list(self.args.get("subsets") or [])

    @property
    def definitions(self) -> list[Definition]:
        return list(self.args.get("define") or [])


class MatchRecognizeClause(_Body, exp.Expression):
    """``<input> MATCH_RECOGNIZE (...) [AS] alias``; stands where the input table stood."""

    arg_types = {
        "this": True,
        "partition_by": False,
        "order": False,
        "period": False,
        "layers": False,
        "measures": False,
        "rows": False,
        "after": False,
        "semantics": False,
        "distinct": False,
        "pattern": True,
        "within": False,
        "timeout": False,
        "subsets": False,
        "define": False,
        "alias": False,
        "joins": False,
    }

    @property
    def input(self) -> exp.Expr:
        return self.this

    @property
    def order(self) -> list[exp.Ordered]:
        return list(self.args.get("order") or [])

    @property
    def period(self) -> Period | None:
        return self.args.get("period")

    @property
    def layers(self) -> list[Layer]:
        return list(self.args.get("layers") or [])

    @property
    def rows(self) -> str:
        rows = self.args.get("rows")
        return rows.name if rows is not None else "ONE"


class Layer(_Body, exp.Expression):
    """``LAYER name AS (...)`` (docs/hierarchies.md): a named pattern over the clause's rows and
    the layers declared before it; each of its matches is one event for the variables that
    read it (``v FROM name`` in DEFINE)."""

    arg_types = {"this": True, "partition_by": False, "measures": False, "after": False, "semantics": False,
                 "distinct": False, "pattern": True, "within": False, "timeout": False, "subsets": False,
                 "define": False}


class Period(exp.Expression):
    """``PERIOD (start, end)``: the clause's rows are interval events (docs/hierarchies.md)."""

    arg_types = {"this": True, "expression": True}


class Measure(exp.Expression):
    """``expr AS name`` in MEASURES."""

    arg_types = {"this": True, "alias": True}

    @property
    def name(self) -> str:
        return self.alias

    @property
    def output_name(self) -> str:
        return self.alias


class Definition(exp.Expression):
    """``var [FROM layer] AS condition [UNTIL stop_condition]`` in DEFINE (``var FROM layer``
    alone: the condition is TRUE)."""

    arg_types = {"this": True, "condition": True, "until": False, "source": False}

    @property
    def variable(self) -> exp.Identifier:
        return self.this

    @property
    def condition(self) -> exp.Expr:
        return self.args["condition"]

    @property
    def until(self) -> exp.Expr | None:
        return self.args.get("until")

    @property
    def source(self) -> exp.Identifier | None:
        """The layer whose matches the variable ranges over (``FROM layer``), or None: rows."""
        return self.args.get("source")


class SubsetDef(exp.Expression):
    """``name = (var, ...)`` in SUBSET."""

    arg_types = {"this": True, "expressions": True}

    @property
    def variables(self) -> list[exp.Identifier]:
        return list(self.expressions)


class SkipTo(exp.Expression):
    """AFTER MATCH SKIP option; ``kind`` is PAST LAST ROW, TO NEXT ROW, TO FIRST, TO LAST, TO or
    NO SKIP, ``this`` the variable, ``error_on_miss`` True after ``ERROR ON MISS``."""

    arg_types = {"kind": True, "this": False, "error_on_miss": False}

    @property
    def kind(self) -> str:
        return self.args["kind"]

    @property
    def variable(self) -> exp.Identifier | None:
        return self.this


class TimeoutRows(exp.Expression):
    """``WITH TIMEOUT ROWS [AS name]``: ``this`` is the name's ``exp.Identifier`` or None."""

    arg_types = {"this": False}

    @property
    def column(self) -> exp.Identifier | None:
        return self.this


class Pattern(exp.Expression):
    """Raw PATTERN text (``this``) and where its first character sits in the user's SQL.

    Source positions live in ``meta`` (not in ``args``), so two trees that differ only
    in layout still compare equal: ``meta["start"]`` is the 0-based offset,
    ``meta["pos"]`` the (line, column), ``meta["code"]`` the comment-blanked text up to ')'.
    """

    arg_types = {"this": False}

    @property
    def text(self) -> str:  # type: ignore[override]
        return self.args.get("this") or ""

    @property
    def code(self) -> str:
        """The text up to the closing ')' (trailing whitespace included) with SQL comments
        replaced by spaces (newlines kept): an error at the pattern's end points at the ')'."""
        return self.meta.get("code") or self.text

    @property
    def offset(self) -> int | None:
        return self.meta.get("start")

    @property
    def origin(self) -> tuple[int, int]:
        return position(self) or (1, 1)

    @property
    def line(self) -> int:
        return self.origin[0]

    @property
    def column(self) -> int:
        return self.origin[1]

    def position_at(self, i: int) -> tuple[int, int]:
        """(line, column) in the user's SQL of character ``i`` of the pattern text."""
        return line_col(self.text, i, self.origin)


class Running(exp.Expression, exp.Condition):
    """``RUNNING <operand>``."""

    arg_types = {"this": True}


class Final(exp.Expression, exp.Condition):
    """``FINAL <operand>``."""

    arg_types = {"this": True}


class Navigation(exp.Expression, exp.Func):
    """Base of PREV/NEXT (physical) and FIRST/LAST (logical) navigation."""

    arg_types = {"this": True, "offset": False}
    physical: t.ClassVar[bool] = False
    sql_keyword: t.ClassVar[str] = ""

    @property
    def offset(self) -> exp.Expr | None:
        return self.args.get("offset")


class Prev(Navigation):
    physical = True
    sql_keyword = "PREV"


class Next(Navigation):
    physical = True
    sql_keyword = "NEXT"


class First(Navigation):
    sql_keyword = "FIRST"


class Last(Navigation):
    sql_keyword = "LAST"


class ClassifierCall(exp.Expression, exp.Func):
    """``CLASSIFIER()`` / ``CLASSIFIER(var)``."""

    arg_types = {"this": False}


class MatchNumberCall(exp.Expression, exp.Func):
    """``MATCH_NUMBER()``."""

    arg_types = {}


class SpanCall(exp.Expression, exp.Func):
    """``EVENT_START(v)`` / ``EVENT_END(v)`` (``this``: the variable) and ``MATCH_START()`` /
    ``MATCH_END()``: the interval of an event, of the match so far (docs/hierarchies.md)."""

    arg_types = {"kind": True, "this": False}


SPAN_FUNCTIONS = ("EVENT_START", "EVENT_END", "MATCH_START", "MATCH_END")


class Verbatim(exp.Expression):
    """SQL text generated as it is: a MATCH_RECOGNIZE already rewritten, inside a tree."""

    arg_types = {"this": True}


_NODE_CLASSES = (
    MatchRecognizeClause, Measure, Definition, SubsetDef, SkipTo, TimeoutRows, Pattern, Running, Final,
    Navigation, Prev, Next, First, Last, ClassifierCall, MatchNumberCall, Verbatim, Layer, Period, SpanCall,
)
# sqlglot derives ``key`` from the class name; keep ours distinct from exp.First/exp.Last/...
for _cls in _NODE_CLASSES:
    _cls.key = "mr_" + _cls.__name__.lower()

_NAVIGATION = {"PREV": Prev, "NEXT": Next, "FIRST": First, "LAST": Last}

# --------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------

_CLAUSE_ORDER = (
    "PARTITION BY, ORDER BY, PERIOD, LAYER, MEASURES, ROWS PER MATCH, AFTER MATCH SKIP, SEMANTICS, "
    "PATTERN, WITHIN, WITH TIMEOUT ROWS, SUBSET, DEFINE"
)

# Tokens that cannot occur in a row pattern: seeing one while looking for the
# PATTERN's closing parenthesis means the parentheses are unbalanced.
_PATTERN_STOP_TOKENS = frozenset(
    {
        TokenType.ALIAS,
        TokenType.EQ,
        TokenType.SEMICOLON,
        TokenType.DOT,
        TokenType.SELECT,
        TokenType.FROM,
        TokenType.WHERE,
        TokenType.ORDER_BY,
        TokenType.PARTITION_BY,
        TokenType.JOIN,
        TokenType.ON,
    }
)


def _blank_gaps(start: int, tokens: list[Token], text: str) -> str:
    """``text`` (= SQL[start:start+len]) with non-blank characters outside tokens (i.e.
    comments) replaced by spaces; whitespace, including newlines, is kept as is."""
    chars = list(text)
    covered = [False] * len(chars)
    for tok in tokens:
        for i in range(tok.start - start, tok.end - start + 1):
            if 0 <= i < len(chars):
                covered[i] = True
    for i, ch in enumerate(chars):
        if not covered[i] and not ch.isspace():
            chars[i] = " "
    return "".join(chars)


def _typed_literal(parser, literal, data_type):
    """``DATE '2020-01-01'`` and the like: a cast that remembers it was written as a typed
    literal, so that it is generated as one (Spark checks a typed literal when it parses it,
    a cast only when it runs, and without ANSI a bad cast is NULL)."""
    cast = parser.expression(exp.Cast(this=literal, to=data_type))
    cast.meta["typed_literal"] = True
    return cast


def _as_written(name: str, counts: tuple | None, otherwise):
    """A builder keeping Spark's function ``name`` as an ``exp.Anonymous`` call for the
    argument counts ``counts`` (None: any), as ``calls.AS_WRITTEN`` asks (sqlglot's Spark parser
    normalises ``log10(x)`` to ``LOG(10, x)``, ``date_add(d, n)`` to ``TS_OR_DS_ADD``,
    ``date_sub(d, n)`` to ``date_add(d, n * -1)``: other Spark functions, with other types,
    errors or ulps); other counts go to sqlglot's own builder ``otherwise``."""
    def build(args):
        if counts is None or len(args) in counts:
            return exp.Anonymous(this=name, expressions=args)
        return otherwise(args)
    return build


def _any_arity(name: str, builder):
    """``builder`` for a call Spark's parser reads with any number of arguments (its analysis
    checks the count): where sqlglot's builder cannot take them (``map(1)``: an IndexError,
    ``date_trunc()``: a ValueError), the call as written, for analysis to refuse."""
    def build(args, dialect):
        try:
            try:
                return builder(args)
            except TypeError:
                return builder(args, dialect=dialect)
        except (IndexError, TypeError, ValueError):
            return exp.Anonymous(this=name, expressions=args)
    return build


def _grouped(build):
    """``build`` of a call sqlglot writes back as an infix predicate (``like(a, b)`` as ``a LIKE
    b``, which Spark's grammar binds below comparisons): the call in parentheses, so that
    ``x = like(a, b)`` is written ``x = (a LIKE b)``, not ``(x = a) LIKE b``."""
    def grouped(args, dialect):
        node = build(args, dialect)
        return node if isinstance(node, exp.Anonymous) else exp.Paren(this=node)
    return grouped


# Spark functions sqlglot parses into infix predicates (``_grouped``)
_PREDICATE_CALLS = ("LIKE", "ILIKE", "RLIKE", "REGEXP_LIKE")


def _collate(parser, this, name):
    collate = parser.expression(exp.Collate(this=this, expression=name))
    parser._normalize_collate(collate)
    return collate


_INTERVAL_UNITS = {unit + plural for unit in ("NANOSECOND", "MICROSECOND", "MILLISECOND", "SECOND", "MINUTE",
                                               "HOUR", "DAY", "WEEK", "MONTH", "YEAR") for plural in ("", "S")}
_SQLGLOT_GENERIC = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]+'>|Invalid expression / Unexpected token")


class SparkCepParser(WindowSyntax, SparkParser):
    """Spark parser plus MATCH_RECOGNIZE as a table-factor suffix; Spark functions that
    sqlglot would rewrite into others are kept as written (``_as_written``); expressions are
    read with the precedence of Spark's grammar (``_parse_equality`` ... ``_parse_term``)."""

    FUNCTIONS = {name: (_grouped if name in _PREDICATE_CALLS else lambda b: b)(_any_arity(name, builder))
                 for name, builder in {
        **SparkParser.FUNCTIONS,
        **{name.upper(): _as_written(name.upper(), counts, SparkParser.FUNCTIONS[name.upper()])
           for name, counts in AS_WRITTEN.items() if name.upper() in SparkParser.FUNCTIONS},
        **{name.upper(): _as_written(name.upper(), None, None) for name in AGGREGATES_AS_WRITTEN},
    }.items()}
    FUNCTION_PARSERS = {name: parser for name, parser in SparkParser.FUNCTION_PARSERS.items()
                        if name.lower() not in AGGREGATES_AS_WRITTEN}
    # Spark has no ``ARRAY[...]`` / ``LIST[...]`` constructor: ``array[i]`` (``A.array[i]``,
    # ```array`[i]``) subscripts a column named array; sqlglot built ``array(i)`` of them
    ARRAY_CONSTRUCTORS: t.ClassVar = {}
    # Spark's any(DISTINCT x) is the aggregate (bool_or); sqlglot reads ANY as a predicate of
    # one operand, where DISTINCT cannot stand
    NO_PAREN_FUNCTION_PARSERS = {**SparkParser.NO_PAREN_FUNCTION_PARSERS,
                                 "ANY": lambda self: self._parse_mr_any()}

    TYPE_LITERAL_PARSERS = {
        **SparkParser.TYPE_LITERAL_PARSERS,
        **{kind: _typed_literal for kind in (exp.DType.DATE, exp.DType.TIMESTAMP, exp.DType.TIMESTAMPNTZ,
                                             exp.DType.TIMESTAMPLTZ, exp.DType.TIMESTAMPTZ)},
    }

    # -- Spark's expression grammar (SqlBaseParser.g4: booleanExpression, predicate,
    # valueExpression), which sqlglot's generic levels read differently: there ``a = b < c`` is
    # ``a = (b < c)``, ``a | b & c`` is ``(a | b) & c``, ``'a' || 1 + 2`` is ``'a' || (1 + 2)``,
    # ``a = b IS NULL`` is ``a = (b IS NULL)``, ``x COLLATE c + y`` collates the sum, and
    # ``x > > 1`` is ``x >> 1``.  The rewrite re-emits and evaluates the tree, so its shape must
    # be the one Spark reads.
    UNARY_PARSERS = {
        TokenType.PLUS: SparkParser.UNARY_PARSERS[TokenType.PLUS],
        TokenType.DASH: SparkParser.UNARY_PARSERS[TokenType.DASH],
        TokenType.TILDE: SparkParser.UNARY_PARSERS[TokenType.TILDE],
    }  # NOT starts a booleanExpression only (``_parse_equality``)
    TERM = {TokenType.PLUS: exp.Add, TokenType.DASH: exp.Sub, TokenType.DPIPE: exp.DPipe}
    COLUMN_OPERATORS = {**SparkParser.COLUMN_OPERATORS, TokenType.COLLATE: _collate}
    # valueExpression's binary levels between the comparisons and ``+ - ||``, loosest first
    _BITWISE_LEVELS = ({TokenType.PIPE: exp.BitwiseOr}, {TokenType.CARET: exp.BitwiseXor},
                       {TokenType.AMP: exp.BitwiseAnd})
    _COMPARISON = {TokenType.EQ: exp.EQ, TokenType.NEQ: exp.NEQ, TokenType.NULLSAFE_EQ: exp.NullSafeEQ,
                   TokenType.LT: exp.LT, TokenType.LTE: exp.LTE, TokenType.GT: exp.GT, TokenType.GTE: exp.GTE}

    def __init__(self, *args: t.Any, **kwargs: t.Any) -> None:
        super().__init__(*args, **kwargs)
        self._mr_expr_depth = 0

    def reset(self) -> None:
        super().reset()
        self._mr_expr_depth = 0

    # -- errors ---------------------------------------------------------------------

    def raise_error(self, message: str, token: Token | None = None) -> None:
        if _SQLGLOT_GENERIC.fullmatch(message):  # sqlglot's words for a token Spark's grammar does not expect
            near = f"'{(token or self._curr).text}'" if token or self._curr else "end of input"
            message = f"[PARSE_SYNTAX_ERROR] Syntax error at or near {near}."
        token = token or self._curr or self._prev or Token.string("")
        if self.sql and token.start is not None:
            line, col = line_col(self.sql, token.start)
        else:
            line, col = token.line, token.col
        count = len(self.errors)
        try:
            super().raise_error(message, token)
        except _SqlglotParseError as e:
            for err in e.errors:
                err.setdefault("start_line", line)
                err.setdefault("start_col", col)
            raise
        for err in self.errors[count:]:
            err.setdefault("start_line", line)
            err.setdefault("start_col", col)

    # -- Spark's expression precedence ----------------------------------------------

    def _parse_equality(self, parse_is: bool = True) -> exp.Expr | None:
        """A booleanExpression without AND / OR: ``NOT`` (or ``!``) one, or a valueExpression
        with its predicate (BETWEEN, IN, LIKE, IS ...)."""
        if self._match(TokenType.NOT):
            comments = self._prev_comments
            return self.expression(exp.Not(this=self._parse_equality()), comments=comments)
        return self._parse_range(self._parse_bitwise(), parse_is=True)

    def _parse_bitwise(self) -> exp.Expr | None:
        """A valueExpression: comparisons (one level, left to right) of ``|`` of ``^`` of ``&``
        of shifts of ``+ - ||`` (``_parse_term``)."""
        this = self._parse_level(0)
        while self._match_set(self._COMPARISON):
            klass, comments = self._COMPARISON[self._prev.token_type], self._prev_comments
            this = self._build_predicate(klass, this, self._parse_level(0), comments=comments)
        return this

    def _parse_level(self, level: int) -> exp.Expr | None:
        if level == len(self._BITWISE_LEVELS):
            return self._parse_shift()
        this = self._parse_level(level + 1)
        while self._match_set(self._BITWISE_LEVELS[level]):
            klass, comments = self._BITWISE_LEVELS[level][self._prev.token_type], self._prev_comments
            this = self.expression(klass(this=this, expression=self._parse_level(level + 1)), comments=comments)
        return this

    def _parse_shift(self) -> exp.Expr | None:
        """``<<``, ``>>``, ``>>>``: one token each in Spark's lexer, so their characters are
        adjacent (sqlglot reads them as ``<`` / ``>`` tokens, which ``> >`` also gives)."""
        this = self._parse_term()
        while True:
            symbol = self._adjacent_symbol(3 if self._curr.token_type == TokenType.GT else 2)
            if symbol not in ("<<", ">>", ">>>"):
                return this
            self._advance(len(symbol))
            other = self._parse_term()
            if symbol == "<<":
                this = self.expression(exp.BitwiseLeftShift(this=this, expression=other))
            elif symbol == ">>":
                this = self.expression(exp.BitwiseRightShift(this=this, expression=other))
            else:
                this = self.expression(exp.Anonymous(this="shiftrightunsigned", expressions=[this, other]))

    def _adjacent_symbol(self, most: int) -> str:
        """The text of the next ``most`` (or fewer) tokens of the same kind (``<`` or ``>``)
        written without anything between them."""
        first = self._curr
        if not first or first.token_type not in (TokenType.LT, TokenType.GT):
            return ""
        text, end = first.text, first.end
        for k in range(1, most):
            token = self._peek(k)
            if token is None or token.token_type != first.token_type or token.start != end + 1:
                break
            text, end = text + token.text, token.end
        return text

    def _parse_term(self, parse_mod: bool = True) -> exp.Expr | None:
        """``+``, ``-`` and ``||``, one level (left to right) over ``* / % DIV``."""
        this = self._parse_factor(parse_mod=parse_mod)
        while self._match_set(self.TERM):
            klass, comments = self.TERM[self._prev.token_type], self._prev_comments
            node = klass(this=this, expression=self._parse_factor(parse_mod=parse_mod))
            if klass is exp.DPipe:
                node.set("safe", not self.dialect.STRICT_STRING_CONCAT)
            this = self.expression(node, comments=comments)
        return this

    def _parse_is_rhs(self, distinct: bool = False) -> exp.Expr | None:
        """After ``IS [NOT]``: ``DISTINCT FROM`` a valueExpression, or NULL / TRUE / FALSE /
        UNKNOWN (the NULL of a boolean)."""
        if distinct:
            return self._parse_bitwise()
        if self._match_text_seq("UNKNOWN"):
            return self.expression(exp.Null())
        return self._parse_null() or self._parse_boolean()

    # -- positions for expressions that sqlglot leaves without one ------------------

    @staticmethod
    def _with_pos(node: t.Any, token: Token) -> t.Any:
        if isinstance(node, exp.Expr) and token:
            meta = node.meta
            if "start" not in meta:
                node.update_positions(token)
        return node

    def _parse_primary(self) -> exp.Expr | None:
        token = self._curr
        return self._with_pos(super()._parse_primary(), token)

    def _parse_interval(self, *args: t.Any, **kwargs: t.Any) -> exp.Add | exp.Interval | None:
        token = self._curr
        return self._with_pos(super()._parse_interval(*args, **kwargs), token)

    # -- scoping of MR expression syntax --------------------------------------------

    def _parse_select(self, *args: t.Any, **kwargs: t.Any) -> exp.Expr | None:
        # a (scalar/EXISTS) subquery inside DEFINE/MEASURES is plain Spark again
        saved, self._mr_expr_depth = self._mr_expr_depth, 0
        try:
            return super()._parse_select(*args, **kwargs)
        finally:
            self._mr_expr_depth = saved

    def _is_word(self, token: Token | None, texts: t.Collection[str]) -> bool:
        return bool(
            token
            and token.token_type not in self.TEXT_MATCH_EXCLUDED_TOKENS
            and token.text.upper() in texts
        )

    def _peek(self, ahead: int) -> Token | None:
        i = self._index + ahead
        return self._tokens[i] if 0 <= i < self._tokens_size else None

    def _at_running_final(self) -> bool:
        if not self._is_word(self._curr, ("RUNNING", "FINAL")):
            return False
        nxt = self._next
        if not nxt:
            return False
        if nxt.token_type == TokenType.L_PAREN:
            return True
        after = self._peek(2)
        wordlike = nxt.token_type == TokenType.IDENTIFIER or (
            nxt.token_type not in self.TEXT_MATCH_EXCLUDED_TOKENS
            and (nxt.text[:1].isalpha() or nxt.text[:1] == "_")
        )
        return bool(
            wordlike and after is not None and after.token_type in (TokenType.L_PAREN, TokenType.DOT)
        )

    def _parse_unary(self) -> exp.Expr | None:
        token = self._curr
        if self._mr_expr_depth and self._at_running_final():
            self._advance()
            operand = self._parse_unary()
            if operand is None:
                self.raise_error(f"Expecting an expression after {token.text.upper()}")
            klass = Running if token.text.upper() == "RUNNING" else Final
            return self.expression(klass(this=operand), token=token)
        return self._with_pos(super()._parse_unary(), token)

    def _parse_function_call(self, *args: t.Any, **kwargs: t.Any) -> exp.Expr | None:
        token = self._curr
        if (
            self._mr_expr_depth
            and token
            and self._next.token_type == TokenType.L_PAREN
            and token.token_type not in self.TEXT_MATCH_EXCLUDED_TOKENS
            and self._prev.token_type != TokenType.DOT
        ):
            upper = token.text.upper()
            if upper in _NAVIGATION:
                return self._parse_mr_navigation(_NAVIGATION[upper], token)
            if upper == "CLASSIFIER":
                return self._parse_mr_classifier(token)
            if upper == "MATCH_NUMBER":
                return self._parse_mr_match_number(token)
            if upper in SPAN_FUNCTIONS:
                return self._parse_mr_span(upper, token)
        return self._with_pos(super()._parse_function_call(*args, **kwargs), token)

    def _parse_mr_any(self) -> exp.Expr:
        if self._curr and self._curr.token_type == TokenType.L_PAREN and self._next \
                and self._next.token_type == TokenType.DISTINCT:
            self._advance()
            args = self._parse_function_args()
            self._match_r_paren()
            return self.expression(exp.Anonymous(this="any", expressions=args))
        return self.expression(exp.Any(this=self._parse_bitwise()))

    def _parse_mr_navigation(self, klass: type[Navigation], token: Token) -> exp.Expr:
        name = token.text.upper()
        self._advance(2)
        args = self._parse_csv(self._parse_assignment)
        if not self._match(TokenType.R_PAREN):
            self.raise_error(f"Expecting ')' to close {name}(")
        if not args:
            self.raise_error(f"{name} requires an argument", token)
        if len(args) > 2:
            self.raise_error(f"{name} takes at most 2 arguments (expression, offset)", token)
        return self.expression(
            klass(this=args[0], offset=args[1] if len(args) > 1 else None), token=token
        )

    def _parse_mr_classifier(self, token: Token) -> exp.Expr:
        self._advance(2)
        var = None
        if not self._match(TokenType.R_PAREN):
            var = self._parse_mr_variable()
            if var is None:
                self.raise_error("Expecting a pattern variable in CLASSIFIER(...)")
            if self._match(TokenType.COMMA, advance=False):
                self.raise_error("CLASSIFIER takes one pattern variable or subset (or none)")
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expecting ')' to close CLASSIFIER(")
        return self.expression(ClassifierCall(this=var), token=token)

    def _parse_mr_match_number(self, token: Token) -> exp.Expr:
        self._advance(2)
        if not self._match(TokenType.R_PAREN):
            self.raise_error("MATCH_NUMBER() takes no arguments")
        return self.expression(MatchNumberCall(), token=token)

    def _parse_mr_span(self, kind: str, token: Token) -> exp.Expr:
        self._advance(2)
        var = None
        if kind.startswith("EVENT_"):
            var = self._parse_mr_variable()
            if var is None or not self._match(TokenType.R_PAREN):
                self.raise_error(f"{kind} takes one pattern variable: {kind}(<variable>)", token)
        elif not self._match(TokenType.R_PAREN):
            self.raise_error(f"{kind}() takes no arguments", token)
        return self.expression(SpanCall(kind=kind, this=var), token=token)

    def _parse_mr_expression(self) -> exp.Expr | None:
        self._mr_expr_depth += 1
        try:
            node = self._spanned(self._parse_assignment)
        finally:
            self._mr_expr_depth -= 1
        for dot in list(node.find_all(exp.Dot)) if node is not None else ():
            self._mr_quoted_variable_column(dot)
        return node

    def _mr_quoted_variable_column(self, dot: exp.Dot) -> None:
        """``"b".price`` (outside a subquery): pattern variable "b"'s column, as in Trino.  In
        Spark ``"b"`` is a string, which has no fields: it can mean nothing else."""
        literal, field = dot.this, dot.expression
        if not (isinstance(literal, exp.Literal) and literal.is_string and isinstance(field, exp.Identifier)
                and self.sql[literal.meta.get("start", 0)] == '"' and dot.find_ancestor(exp.Query) is None):
            return
        variable = exp.Identifier(this=literal.name, quoted=True)
        variable.meta.update(literal.meta)
        column = exp.Column(this=field, table=variable)
        column.meta.update(literal.meta)
        dot.replace(column)

    def _spanned(self, parse: t.Callable[[], exp.Expr | None]) -> exp.Expr | None:
        """``parse()``, its node remembering the (start, end) offsets of its text (``meta["span"]``)."""
        first = self._index
        node = parse()
        if node is not None and self._index > first:
            node.meta["span"] = (self._tokens[first].start, self._prev.end + 1)
        return node

    # -- MATCH_RECOGNIZE as a table-factor suffix -----------------------------------

    def _at_match_recognize(self) -> bool:
        return self._curr.token_type == TokenType.VAR and self._curr.text.upper() == "MATCH_RECOGNIZE"

    def _parse_table_alias(
        self, alias_tokens: t.Collection[TokenType] | None = None
    ) -> exp.TableAlias | None:
        if self._at_match_recognize():
            return None
        return super()._parse_table_alias(alias_tokens=alias_tokens)

    def _parse_table(
        self,
        schema: bool = False,
        joins: bool = False,
        alias_tokens: t.Collection[TokenType] | None = None,
        parse_bracket: bool = False,
        is_db_reference: bool = False,
        **kwargs: t.Any,
    ) -> exp.Expr | None:
        first = self._curr
        this = super()._parse_table(schema, joins, alias_tokens, parse_bracket, is_db_reference, **kwargs)
        if schema or is_db_reference or this is None or not self._at_match_recognize():
            return this
        if this.args.get("joins"):
            self.raise_error("MATCH_RECOGNIZE must directly follow its input table or subquery")
        clause = self._parse_match_recognize_clause(this)
        clause.meta["span"] = (first.start, self._prev.end + 1)
        if joins:
            for join in self._parse_joins(alias_tokens=alias_tokens):
                clause.append("joins", join)
        return clause

    def _mr_clause_at_curr(self) -> str | None:
        tok = self._curr
        if not tok:
            return None
        if tok.token_type == TokenType.PARTITION_BY:
            return "PARTITION BY"
        if tok.token_type == TokenType.ORDER_BY:
            return "ORDER BY"
        if tok.token_type in self.TEXT_MATCH_EXCLUDED_TOKENS:
            return None
        word, after = tok.text.upper(), self._is_word
        if word == "ONE" and after(self._next, ("ROW",)) or word == "ALL" and after(self._next, ("ROWS",)):
            return "ROWS PER MATCH"
        if word == "AFTER" and after(self._next, ("MATCH",)):
            return "AFTER MATCH SKIP"
        if word == "PATTERN" and self._next.token_type == TokenType.L_PAREN:
            return "PATTERN"
        if word in ("MEASURES", "SEMANTICS", "WITHIN", "SUBSET", "DEFINE"):
            return word
        if word == "PERIOD" and self._next and self._next.token_type == TokenType.L_PAREN:
            return "PERIOD"
        if word == "LAYER" and self._peek(2) is not None and self._peek(2).token_type == TokenType.ALIAS:
            return "LAYER"
        if word == "WITH" and self._is_word(self._next, ("TIMEOUT",)):
            return "WITH TIMEOUT ROWS"
        return None

    def _mr_list(self, parse: t.Callable[[], exp.Expr | None], what: str) -> list:
        """One or more ``parse`` items separated by commas; a missing one is an error naming
        ``what`` (and the clause standing in its place)."""
        items = []
        while True:
            start, clause = self._index, self._mr_clause_at_curr()
            found = f", found the {clause} clause" if clause else ""
            if not self._curr or self._curr.token_type == TokenType.R_PAREN:
                self.raise_error(f"Expecting {what}")
            try:
                item = parse()
            except _SqlglotParseError:
                if not clause:
                    raise
                self._retreat(start)
                item = None
            if item is None:
                self.raise_error(f"Expecting {what}{found}")
            items.append(item)
            if not self._match(TokenType.COMMA):
                return items

    def _mr_unexpected(self, expecting: str) -> None:
        tok = self._curr
        if not tok:
            self.raise_error(f"Unexpected end of input in MATCH_RECOGNIZE; expecting {expecting}")
            return
        if self._is_word(self._prev, ("RUNNING", "FINAL")) and self._prev.token_type == TokenType.VAR:
            word = self._prev.text.upper()
            self.raise_error(f"{word} applies to a navigation function or an aggregate, e.g. {word} "
                             "LAST(A.price)", self._prev)
        if self._is_word(tok, ("ORDER", "PARTITION")):
            self.raise_error(f"Expecting BY after {tok.text.upper()}")
        clause = self._mr_clause_at_curr()
        if clause:
            self.raise_error(
                f"{clause} clause is out of order or repeated in MATCH_RECOGNIZE; "
                f"clauses must appear in the order {_CLAUSE_ORDER}"
            )
        self.raise_error(f"Unexpected {tok.text!r} in MATCH_RECOGNIZE; expecting {expecting}")

    def _parse_match_recognize_clause(self, this: exp.Expr) -> MatchRecognizeClause:
        input_end = self._prev.end + 1  # (comments before the keyword are not the input's)
        mr_token = self._curr
        self._advance()
        if not self._match(TokenType.L_PAREN):
            self.raise_error("Expecting '(' after MATCH_RECOGNIZE")

        args: dict[str, t.Any] = {"this": this}
        if self._match(TokenType.PARTITION_BY):
            args["partition_by"] = self._mr_list(lambda: self._spanned(self._parse_disjunction),
                                                 "a PARTITION BY expression")
        if self._match(TokenType.ORDER_BY):
            args["order"] = self._mr_list(lambda: self._spanned(self._parse_ordered), "an ORDER BY key")
        if self._mr_clause_at_curr() == "PERIOD":
            args["period"] = self._parse_mr_period()
        if self._mr_clause_at_curr() == "LAYER":
            args["layers"] = [self._parse_mr_layer()]
            while self._match(TokenType.COMMA):
                args["layers"].append(self._parse_mr_layer())
        if self._match_text_seq("MEASURES"):
            args["measures"] = self._mr_list(self._parse_mr_measure, "a measure (<expression> AS <name>)")
        args["rows"] = self._parse_mr_rows()
        args["after"] = self._parse_mr_skip()
        args["semantics"] = self._parse_mr_semantics()
        if args["semantics"] is not None and self._match(TokenType.DISTINCT):
            args["distinct"] = self.expression(exp.Var(this="DISTINCT"), token=self._prev)
        args["pattern"] = self._parse_mr_pattern()
        self._parse_mr_after_pattern(args)
        if not self._match(TokenType.R_PAREN):
            self._mr_unexpected("')' to close MATCH_RECOGNIZE")
        body_end = self._prev.end + 1

        args["alias"] = self._parse_table_alias()
        if self._prev.token_type == TokenType.ALIAS and not (args["alias"] and args["alias"].name):
            self.raise_error("Expecting a name after AS", self._prev)
        clause = self.expression(MatchRecognizeClause(**args), token=mr_token)
        clause.meta["input_end"] = input_end
        clause.meta["body_end"] = body_end
        return clause

    def _parse_mr_period(self) -> Period:
        tok = self._curr
        self._advance(2)
        start = self._parse_mr_expression()
        if start is None or not self._match(TokenType.COMMA):
            self.raise_error("Expecting PERIOD (<start>, <end>)")
        end = self._parse_mr_expression()
        if end is None or not self._match(TokenType.R_PAREN):
            self.raise_error("Expecting PERIOD (<start>, <end>)")
        return self.expression(Period(this=start, expression=end), token=tok)

    def _parse_mr_layer(self) -> Layer:
        """``LAYER name AS ( body )``: a clause's body from PARTITION BY to DEFINE, without
        ORDER BY (the clause's), ROWS PER MATCH, WITH TIMEOUT ROWS or LAYERs of its own."""
        tok = self._curr
        if self._mr_clause_at_curr() != "LAYER":
            self.raise_error("Expecting LAYER <name> AS (...)")
        self._advance()
        name = self._parse_mr_variable()
        self._match(TokenType.ALIAS)
        if not self._match(TokenType.L_PAREN):
            self.raise_error("Expecting '(' after LAYER <name> AS")
        args: dict[str, t.Any] = {"this": name}
        if self._match(TokenType.PARTITION_BY):
            args["partition_by"] = self._mr_list(lambda: self._spanned(self._parse_disjunction),
                                                 "a PARTITION BY expression")
        own = {"ORDER BY": "has the statement's ORDER BY", "PERIOD": "has the statement's PERIOD",
               "LAYER": "cannot declare LAYERs (declare them in the statement, before the layer that reads them)"}
        if self._mr_clause_at_curr() in own:
            self.raise_error(f"a LAYER {own[self._mr_clause_at_curr()]}")
        if self._match_text_seq("MEASURES"):
            args["measures"] = self._mr_list(self._parse_mr_measure, "a measure (<expression> AS <name>)")
        if self._mr_clause_at_curr() == "ROWS PER MATCH":
            self.raise_error("a LAYER has no ROWS PER MATCH: each of its matches is one event of the layers "
                             "that read it")
        args["after"] = self._parse_mr_skip()
        args["semantics"] = self._parse_mr_semantics()
        if args["semantics"] is not None and self._match(TokenType.DISTINCT):
            args["distinct"] = self.expression(exp.Var(this="DISTINCT"), token=self._prev)
        args["pattern"] = self._parse_mr_pattern()
        self._parse_mr_after_pattern(args)
        if not self._match(TokenType.R_PAREN):
            self._mr_unexpected("')' to close the LAYER")
        return self.expression(Layer(**args), token=tok)

    def _parse_mr_after_pattern(self, args: dict) -> None:
        """The clauses after PATTERN into ``args``: WITHIN, WITH TIMEOUT ROWS, SUBSET, DEFINE."""
        if self._match_text_seq("WITHIN"):
            within = self._spanned(self._parse_bitwise) if self._match(TokenType.INTERVAL, advance=False) else None
            if within is None or within.find(exp.Interval) is None:
                self.raise_error("Expecting an INTERVAL literal after WITHIN")
            for interval in within.find_all(exp.Interval):
                unit = interval.args.get("unit")
                for word in unit.find_all(exp.Var) if unit is not None else ():
                    if word.name.upper() not in _INTERVAL_UNITS:
                        self.raise_error(f"WITHIN: {word.name} is not an interval unit (SECOND, MINUTE, HOUR, "
                                         "DAY, ...)", self._tokens[self._index - 1])
            args["within"] = within
        args["timeout"] = self._parse_mr_timeout()
        if self._match_text_seq("SUBSET"):
            args["subsets"] = self._mr_list(self._parse_mr_subset, "a subset (<name> = (<variables>))")
        if self._match_text_seq("DEFINE"):
            args["define"] = self._mr_list(self._parse_mr_definition, "a definition (<variable> AS <condition>)")

    def _parse_mr_variable(self) -> exp.Identifier | None:
        tok = self._curr
        if not tok:
            return None
        if tok.token_type in (TokenType.IDENTIFIER, TokenType.STRING):
            quoted = True
        elif tok.token_type == TokenType.VAR or tok.token_type in self.ID_VAR_TOKENS:
            quoted = False
        else:
            return None
        self._advance()
        return self.expression(exp.Identifier(this=tok.text, quoted=quoted), token=tok)

    def _parse_mr_measure(self) -> Measure:
        start = self._curr
        expr = self._parse_mr_expression()
        if expr is None:
            self.raise_error("Expecting a measure expression")
        if not self._match(TokenType.ALIAS):
            self.raise_error("Expecting AS <name> after the measure expression")
        name = self._spanned(self._parse_mr_name)
        if name is None:
            self.raise_error("Expecting a measure name after AS")
        return self.expression(Measure(this=expr, alias=name), token=start)

    def _parse_mr_name(self) -> exp.Identifier | None:
        """A measure's name: an identifier or any word, keywords included (``AS order``; Spark
        reads the names it does not allow as a syntax error, ``syntax.check``)."""
        tok = self._curr
        if not tok or tok.token_type == TokenType.STRING or not (
                tok.token_type == TokenType.IDENTIFIER or re.fullmatch(r"\w+", tok.text)):
            return None
        self._advance()
        return self.expression(exp.Identifier(this=tok.text, quoted=tok.token_type == TokenType.IDENTIFIER),
                               token=tok)

    def _parse_mr_rows(self) -> exp.Var | None:
        tok = self._curr
        if self._match_text_seq("ONE", "ROW", "PER", "MATCH"):
            value = "ONE"
            if self._is_word(self._curr, ("SHOW", "OMIT")) or \
                    self._is_word(self._curr, ("WITH",)) and self._is_word(self._next, ("UNMATCHED",)):
                self.raise_error(f"{self._curr.text.upper()} ... is an option of ALL ROWS PER MATCH, not of "
                                 "ONE ROW PER MATCH")
        elif self._match_text_seq("ALL", "ROWS", "PER", "MATCH"):
            if self._match_text_seq("SHOW", "EMPTY", "MATCHES"):
                value = "ALL SHOW"
            elif self._match_text_seq("OMIT", "EMPTY", "MATCHES"):
                value = "ALL OMIT"
            elif self._match_text_seq("WITH", "UNMATCHED", "ROWS"):
                value = "ALL WITH UNMATCHED"
            elif self._is_word(self._curr, ("SHOW", "OMIT")) or \
                    self._is_word(self._curr, ("WITH",)) and self._is_word(self._next, ("UNMATCHED",)):
                self.raise_error("Expecting SHOW EMPTY MATCHES, OMIT EMPTY MATCHES or WITH UNMATCHED ROWS "
                                 "after ALL ROWS PER MATCH")
                value = "ALL SHOW"
            else:
                value = "ALL SHOW"
        elif self._is_word(tok, ("ONE", "ALL")):
            self.raise_error(
                "Expecting ONE ROW PER MATCH or ALL ROWS PER MATCH "
                "[SHOW EMPTY MATCHES | OMIT EMPTY MATCHES | WITH UNMATCHED ROWS]"
            )
            return None
        else:
            return None
        return self.expression(exp.Var(this=value), token=tok)

    def _starts_clause_after_skip(self, tok: Token | None, nxt: Token | None) -> bool:
        if not tok:
            return True
        if tok.token_type == TokenType.R_PAREN:
            return True
        if self._is_word(tok, ("PATTERN",)) and nxt is not None and nxt.token_type == TokenType.L_PAREN:
            return True
        return self._is_word(tok, ("SEMANTICS",)) and self._is_word(nxt, SEMANTICS)

    def _parse_mr_skip(self) -> SkipTo | None:
        tok = self._curr
        if not self._match_text_seq("AFTER"):
            return None
        if not self._match_text_seq("MATCH"):
            self.raise_error("Expecting MATCH after AFTER")
        var = None
        if self._match_text_seq("NO", "SKIP"):
            kind = "NO SKIP"
        elif self._match_text_seq("SKIP"):
            if self._match_text_seq("PAST", "LAST", "ROW"):
                kind = "PAST LAST ROW"
            elif self._match_text_seq("TO", "NEXT", "ROW"):
                kind = "TO NEXT ROW"
            elif self._match_text_seq("TO"):
                if self._is_word(self._curr, ("FIRST", "LAST")) and not self._starts_clause_after_skip(
                    self._next, self._peek(2)
                ):
                    kind = "TO " + self._curr.text.upper()
                    self._advance()
                else:
                    kind = "TO"
                if self._starts_clause_after_skip(self._curr, self._next):
                    var = None
                else:
                    var = self._parse_mr_variable()
                if var is None:
                    self.raise_error(
                        f"Expecting a pattern variable after AFTER MATCH SKIP {kind}"
                    )
                if self._match_text_seq("ERROR", "ON", "MISS"):
                    return self.expression(SkipTo(kind=kind, this=var, error_on_miss=True), token=tok)
            else:
                self.raise_error(
                    "Invalid AFTER MATCH SKIP option; expecting PAST LAST ROW, TO NEXT ROW, "
                    "TO FIRST <variable>, TO LAST <variable> or TO <variable>"
                )
                kind = "PAST LAST ROW"
        else:
            self.raise_error("Expecting SKIP or NO SKIP after AFTER MATCH")
            kind = "PAST LAST ROW"
        return self.expression(SkipTo(kind=kind, this=var), token=tok)

    def _parse_mr_timeout(self) -> TimeoutRows | None:
        tok = self._curr
        if not self._is_word(tok, ("WITH",)) or not self._is_word(self._next, ("TIMEOUT",)):
            return None
        if not self._match_text_seq("WITH", "TIMEOUT", "ROWS"):
            self.raise_error("Expecting WITH TIMEOUT ROWS [AS <name>]")
        name = None
        if self._match(TokenType.ALIAS):
            name = self._parse_id_var(any_token=False)
            if name is None:
                self.raise_error("Expecting a column name after WITH TIMEOUT ROWS AS")
        return self.expression(TimeoutRows(this=name), token=tok)

    def _parse_mr_semantics(self) -> exp.Var | None:
        tok = self._curr
        if not self._match_text_seq("SEMANTICS"):
            return None
        if not self._match_texts(SEMANTICS):
            self.raise_error("Expecting STANDARD or FLINKCEP after SEMANTICS")
        return self.expression(exp.Var(this=self._prev.text.upper()), token=tok)

    def _parse_mr_pattern(self) -> Pattern:
        if not self._is_word(self._curr, ("PATTERN",)):
            clause = self._mr_clause_at_curr()
            if not self._pattern_ahead() and (
                not self._curr
                or self._curr.token_type == TokenType.R_PAREN
                or clause in ("WITHIN", "SUBSET", "DEFINE")
            ):
                self.raise_error("MATCH_RECOGNIZE requires a PATTERN clause")
            self._mr_unexpected("PATTERN")
        self._advance()
        if not self._match(TokenType.L_PAREN):
            self.raise_error("Expecting '(' after PATTERN")
        open_tok = self._prev
        open_line, open_col = line_col(self.sql, open_tok.start)
        unbalanced = (
            f"Unbalanced parentheses in PATTERN: '(' at line {open_line}:{open_col} is never closed"
        )
        first_index = self._index
        depth = 1
        while True:
            cur = self._curr
            if not cur or cur.token_type in _PATTERN_STOP_TOKENS:
                self.raise_error(unbalanced, open_tok)
            if cur.token_type == TokenType.L_PAREN:
                depth += 1
            elif cur.token_type == TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    break
            self._advance()
        tokens = self._tokens[first_index : self._index]
        close = self._curr.start
        self._advance()

        if tokens:
            start, end = tokens[0].start, tokens[-1].end + 1
        else:
            start = end = open_tok.end + 1
        text = self.sql[start:end]
        # the code runs to the closing ')': an error at the pattern's end is reported there
        code = _blank_gaps(start, tokens, self.sql[start:close])
        line, column = line_col(self.sql, start)
        node = Pattern(this=text)
        end_line, end_col = line_col(self.sql, max(start, end - 1))
        node.update_positions(line=end_line, col=end_col, start=start, end=max(start, end - 1))
        node.meta["pos"] = (line, column)
        if code != text:
            node.meta["code"] = code
        return self.expression(node)

    def _pattern_ahead(self) -> bool:
        """Does ``PATTERN (`` come later in this MATCH_RECOGNIZE's parentheses?"""
        depth = 0
        for k in range(self._index, self._tokens_size):
            token = self._tokens[k]
            if depth == 0 and self._is_word(token, ("PATTERN",)) and k + 1 < self._tokens_size \
                    and self._tokens[k + 1].token_type == TokenType.L_PAREN:
                return True
            depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
            if depth < 0:
                return False
        return False

    def _parse_mr_subset(self) -> SubsetDef:
        tok = self._curr
        name = self._parse_mr_variable()
        if name is None:
            self.raise_error("Expecting a subset name in SUBSET")
        if not self._match(TokenType.EQ):
            self.raise_error("Expecting '=' after the SUBSET name")
        if not self._match(TokenType.L_PAREN):
            self.raise_error("Expecting '(' with the pattern variables of the SUBSET")
        variables = self._mr_list(self._parse_mr_variable, "a pattern variable of the SUBSET")
        if not self._match(TokenType.R_PAREN):
            self.raise_error("Expecting ')' to close the SUBSET variable list")
        return self.expression(SubsetDef(this=name, expressions=variables), token=tok)

    def _parse_mr_definition(self) -> Definition:
        tok = self._curr
        var = self._parse_mr_variable()
        if var is None:
            self.raise_error("Expecting a pattern variable name in DEFINE")
        source = None
        if self._match(TokenType.FROM):
            source = self._parse_mr_variable()
            if source is None:
                self.raise_error("Expecting a LAYER name after FROM in DEFINE")
            if not self._match(TokenType.ALIAS, advance=False):
                true = self.expression(exp.Boolean(this=True), token=self._prev)
                return self.expression(Definition(this=var, condition=true, source=source), token=tok)
        if not self._match(TokenType.ALIAS):
            self.raise_error("Expecting AS after the DEFINE variable")
        condition = self._parse_mr_expression()
        if condition is None:
            self.raise_error("Expecting a condition after AS in DEFINE")
        until = None
        if self._match_text_seq("UNTIL"):
            until = self._parse_mr_expression()
            if until is None:
                self.raise_error("Expecting a condition after UNTIL")
        return self.expression(Definition(this=var, condition=condition, until=until, source=source), token=tok)


# --------------------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------------------


class SparkCepGenerator(SparkGenerator):
    """Spark generator that can also print the MATCH_RECOGNIZE nodes (round-trippable)."""

    def cast_sql(self, expression: exp.Cast, safe_prefix: str | None = None) -> str:
        if expression.meta.get("typed_literal"):
            return f"{self.sql(expression, 'to')} {self.sql(expression, 'this')}"
        return super().cast_sql(expression, safe_prefix)

    def _mr_body_parts(self, e: MatchRecognizeClause | Layer) -> list:
        """The clauses of a MATCH_RECOGNIZE's or a LAYER's body, in order (a LAYER lacks some)."""
        lists = lambda key: ", ".join(self.sql(x) for x in e.args.get(key) or [])
        parts = []
        if e.partition_by:
            parts.append("PARTITION BY " + lists("partition_by"))
        if e.args.get("order"):
            parts.append("ORDER BY " + lists("order"))
        if e.args.get("period") is not None:
            parts.append(self.sql(e, "period"))
        if e.args.get("layers"):
            parts.append(lists("layers"))
        if e.measures:
            parts.append("MEASURES " + lists("measures"))
        if e.args.get("rows") is not None:
            parts.append(ROWS_SQL[e.args["rows"].name])
        if e.skip is not None:
            parts.append(self.sql(e.skip))
        if e.args.get("semantics") is not None:
            parts.append(f"SEMANTICS {e.semantics}" + (" DISTINCT" if e.distinct is not None else ""))
        parts.append(self.sql(e.pattern))
        if e.within is not None:
            parts.append(f"WITHIN {self.sql(e.within)}")
        if e.timeout is not None:
            parts.append(self.sql(e.timeout))
        if e.subsets:
            parts.append("SUBSET " + lists("subsets"))
        if e.definitions:
            parts.append("DEFINE " + lists("define"))
        return parts

    def _mr_matchrecognizeclause_sql(self, e: MatchRecognizeClause) -> str:
        parts = self._mr_body_parts(e)
        body = self.wrap(self.sep().join(parts))
        alias = self.sql(e, "alias")
        alias = f" AS {alias}" if alias else ""
        joins = self.indent(self.expressions(e, key="joins", sep="", flat=True), skip_first=True)
        return f"{self.sql(e, 'this')} MATCH_RECOGNIZE {body}{alias}{joins}"

    def _mr_period_sql(self, e: Period) -> str:
        return f"PERIOD ({self.sql(e, 'this')}, {self.sql(e, 'expression')})"

    def _mr_layer_sql(self, e: Layer) -> str:
        return f"LAYER {self.sql(e, 'this')} AS ({' '.join(self._mr_body_parts(e))})"

    def _mr_spancall_sql(self, e: SpanCall) -> str:
        return f"{e.args['kind']}({self.sql(e, 'this')})"

    def _mr_measure_sql(self, e: Measure) -> str:
        return f"{self.sql(e, 'this')} AS {self.sql(e, 'alias')}"

    def _mr_definition_sql(self, e: Definition) -> str:
        until = self.sql(e, "until")
        until = f" UNTIL {until}" if until else ""
        source = self.sql(e, "source")
        source = f" FROM {source}" if source else ""
        return f"{self.sql(e, 'this')}{source} AS {self.sql(e, 'condition')}{until}"

    def _mr_subsetdef_sql(self, e: SubsetDef) -> str:
        return f"{self.sql(e, 'this')} = ({', '.join(self.sql(v) for v in e.variables)})"

    def _mr_timeoutrows_sql(self, e: TimeoutRows) -> str:
        name = self.sql(e, "this")
        return "WITH TIMEOUT ROWS" + (f" AS {name}" if name else "")

    def _mr_skipto_sql(self, e: SkipTo) -> str:
        if e.kind == "NO SKIP":
            return "AFTER MATCH NO SKIP"
        var = self.sql(e, "this")
        return f"AFTER MATCH SKIP {e.kind}" + (f" {var}" if var else "") + (
            " ERROR ON MISS" if e.args.get("error_on_miss") else "")

    def _mr_pattern_sql(self, e: Pattern) -> str:
        return f"PATTERN ({e.text})"

    def _mr_running_sql(self, e: Running) -> str:
        return f"RUNNING {self.sql(e, 'this')}"

    def _mr_final_sql(self, e: Final) -> str:
        return f"FINAL {self.sql(e, 'this')}"

    def _mr_navigation_sql(self, e: Navigation) -> str:
        offset = self.sql(e, "offset")
        offset = f", {offset}" if offset else ""
        return f"{e.sql_keyword}({self.sql(e, 'this')}{offset})"

    def _mr_classifier_sql(self, e: ClassifierCall) -> str:
        return f"CLASSIFIER({self.sql(e, 'this')})"

    def _mr_matchnumber_sql(self, e: MatchNumberCall) -> str:
        return "MATCH_NUMBER()"

    def _mr_verbatim_sql(self, e: Verbatim) -> str:
        return e.this

    def _listagg_sql(self, e: exp.GroupConcat) -> str:
        """``listagg(x)`` as written: sqlglot adds a ',' delimiter, Spark's default is none."""
        return groupconcat_sql(self, e, sep=None)

    TRANSFORMS = {
        # (sqlglot's Spark 2 writes percentile_cont / _disc(p) WITHIN GROUP (ORDER BY x) as
        # PERCENTILE_APPROX(x, p), another function; Spark 3.4 on reads it as written)
        **{node: write for node, write in SparkGenerator.TRANSFORMS.items() if node is not exp.WithinGroup},
        MatchRecognizeClause: _mr_matchrecognizeclause_sql,
        Measure: _mr_measure_sql,
        Definition: _mr_definition_sql,
        SubsetDef: _mr_subsetdef_sql,
        SkipTo: _mr_skipto_sql,
        TimeoutRows: _mr_timeoutrows_sql,
        Pattern: _mr_pattern_sql,
        Running: _mr_running_sql,
        Final: _mr_final_sql,
        Prev: _mr_navigation_sql,
        Next: _mr_navigation_sql,
        First: _mr_navigation_sql,
        Last: _mr_navigation_sql,
        ClassifierCall: _mr_classifier_sql,
        MatchNumberCall: _mr_matchnumber_sql,
        Verbatim: _mr_verbatim_sql,
        Period: _mr_period_sql,
        Layer: _mr_layer_sql,
        SpanCall: _mr_spancall_sql,
        exp.GroupConcat: _listagg_sql,
        PatternWindow: pattern_window_sql,
    }


class SparkCepTokenizer(Spark.Tokenizer):
    # Spark reads '' inside '...' (and "" inside "...") as one quote character
    STRING_ESCAPES = [*Spark.Tokenizer.STRING_ESCAPES, "'", '"']
    _PAIRS = {tuple(k.split()): v for k, v in Spark.Tokenizer.KEYWORDS.items() if " " in k}

    def tokenize(self, sql: str) -> list[Token]:
        """sqlglot's tokens, with the words of a two-word keyword (ORDER BY, PARTITION BY, ...)
        joined across a comment too: Spark reads ``ORDER /* c */ BY`` as ORDER BY, sqlglot joins
        them across whitespace only."""
        tokens = super().tokenize(sql)
        joined: list[Token] = []
        for token in tokens:
            last = joined[-1] if joined else None
            kind = last and self._PAIRS.get((last.text.upper(), token.text.upper()))
            if kind and last.token_type not in (TokenType.STRING, TokenType.IDENTIFIER) \
                    and token.token_type not in (TokenType.STRING, TokenType.IDENTIFIER):
                joined[-1] = Token(kind, f"{last.text} {token.text}", token.line, token.col, last.start,
                                   token.end, last.comments + token.comments)
            else:
                joined.append(token)
        return joined


class SparkCep(Spark):
    """Spark SQL + MATCH_RECOGNIZE (registered with sqlglot as ``"sparkcep"``)."""

    Tokenizer = SparkCepTokenizer
    Parser = SparkCepParser
    Generator = SparkCepGenerator


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def _token_error(sql: str, tokenizer: t.Any, error: _SqlglotTokenError) -> ParseError:
    core = getattr(tokenizer, "_core", tokenizer)
    offset = getattr(core, "_start", None)
    if not isinstance(offset, int):
        offset = error.start or 0
    line, column = line_col(sql, offset)
    cause = error.__cause__ if isinstance(error.__cause__, Exception) else error
    detail = str(cause).split(" from ")[0] if isinstance(cause, _SqlglotTokenError) else str(cause)
    return ParseError(f"cannot tokenize SQL: {detail}", line, column)


_SENTINEL_REPR = re.compile(r"<Token token_type: TokenType\.SENTINEL\b[^>]*>")
_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.\w+, text: (.*?), line: \d+, col: \d+, .*?>")


def _parse_error(error: _SqlglotParseError) -> ParseError:
    info = error.errors[0] if error.errors else {}
    message = info.get("description") or str(error)
    message = _TOKEN_REPR.sub(r"'\1'", _SENTINEL_REPR.sub("end of input", message))
    line = info.get("start_line", info.get("line"))
    column = info.get("start_col", info.get("col"))
    return ParseError(message, line, column)


def parse(sql: str) -> list[exp.Expr]:
    """Parse every statement of ``sql`` with the SparkCep dialect.

    Raises ``ParseError`` (a ``MatchRecognizeError``) with the 1-based line:column of
    the offending token.
    """
    dialect = SparkCep()
    tokenizer = dialect.tokenizer()
    try:
        tokens = tokenizer.tokenize(sql)
    except _SqlglotTokenError as e:
        raise _token_error(sql, tokenizer, e) from e
    parser = dialect.parser(error_level=ErrorLevel.IMMEDIATE)
    try:
        trees = parser.parse(tokens, sql)
    except _SqlglotParseError as e:
        raise _parse_error(e) from e
    result = [tree for tree in trees if tree is not None]
    for tree in result:
        _annotate_positions(tree, sql)
    return result


def statement_spans(sql: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the statements of ``sql``, split at top-level semicolons: from
    after the previous semicolon (leading comments kept) to the end of the statement's last
    token (a trailing ``--`` comment would swallow what is written after the statement);
    statements without a token dropped."""
    dialect = SparkCep()
    tokenizer = dialect.tokenizer()
    try:
        tokens = tokenizer.tokenize(sql)
    except _SqlglotTokenError as e:
        raise _token_error(sql, tokenizer, e) from e
    spans, start, last = [], 0, None
    for token in [*tokens, None]:
        if token is None or token.token_type == TokenType.SEMICOLON:
            if last is not None:
                spans.append((start, last.end + 1))
            start, last = (token.end + 1 if token else len(sql)), None
        else:
            last = token
    return spans


def split_statements(sql: str) -> list[str]:
    """The statements of ``sql`` as the user wrote them, each preceded by the text before it
    blanked out (newlines kept), so that line:column positions in a statement are those of the
    whole script."""
    return [re.sub(r"[^\n]", " ", sql[:a]) + sql[a:b] for a, b in statement_spans(sql)]


def parse_one(sql: str) -> exp.Expr:
    """Parse exactly one statement."""
    trees = parse(sql)
    if len(trees) != 1:
        line, column = (1, 1) if not trees else (position(trees[1]) or (1, 1))
        raise ParseError(f"expected exactly one SQL statement, found {len(trees)}", line, column)
    return trees[0]


def find_match_recognize(tree: exp.Expr | t.Iterable[exp.Expr]) -> list[MatchRecognizeClause]:
    """All MatchRecognizeClause nodes, innermost first (a clause always precedes any
    clause that contains it), otherwise in source order."""
    return find_nodes(tree, lambda node: isinstance(node, MatchRecognizeClause))


def unparen(node):
    """``node`` without the parentheses around it."""
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def unwrap(node):
    """``node`` without parentheses and RUNNING / FINAL around it."""
    while isinstance(node, (exp.Paren, Running, Final)):
        node = node.this
    return node


def find_nodes(tree: exp.Expr | t.Iterable[exp.Expr], wanted) -> list[exp.Expr]:
    """The nodes ``wanted(node)`` accepts, innermost first (a node always precedes any node
    that contains it), otherwise in source order."""
    roots = [tree] if isinstance(tree, exp.Expr) else list(tree)
    found: list[exp.Expr] = []
    stack: list[tuple[exp.Expr, bool]] = [(root, False) for root in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            if wanted(node):
                found.append(node)
            continue
        stack.append((node, True))
        children = sorted(
            node.iter_expressions(),
            key=lambda c: (position(c) or (1 << 30, 0)),
        )
        stack.extend((child, False) for child in reversed(children))
    return found


def replace_match_recognize(
    clause: MatchRecognizeClause, replacement: exp.Expr
) -> exp.Expr:
    """Replace ``clause`` (together with its input relation) by ``replacement``.

    ``replacement`` may be a query (``exp.Select``/set operation: it is wrapped in an
    ``exp.Subquery``), a ``Subquery`` or a ``Table``-like factor. If it has no alias,
    the clause's output alias (``AS m [(cols)]``) is moved onto it; joins attached to
    the clause (UPDATE/DELETE forms only) are carried over. Returns the node now in
    the tree.
    """
    if isinstance(replacement, exp.Query) and not isinstance(replacement, exp.Subquery):
        replacement = exp.Subquery(this=replacement)
    alias = clause.args.get("alias")
    if alias is not None and "alias" in replacement.arg_types and not replacement.args.get("alias"):
        replacement.set("alias", alias.copy())
    for join in clause.args.get("joins") or []:
        replacement.append("joins", join.copy())
    clause.replace(replacement)
    return replacement


def to_spark_sql(
    tree: exp.Expr | t.Iterable[exp.Expr], pretty: bool = False, dialect: t.Any = None
) -> str:
    """Generate SQL (SparkCep generator by default; pass ``dialect="spark"`` to insist
    on plain Spark, which fails on any remaining MATCH_RECOGNIZE node). Several trees
    are joined with ``;\\n``."""
    dialect = dialect or SparkCep
    trees = [tree] if isinstance(tree, exp.Expr) else list(tree)
    return ";\n".join(t_.sql(dialect=dialect, pretty=pretty) for t_ in trees)
