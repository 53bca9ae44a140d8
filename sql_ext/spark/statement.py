"""One statement of an enabled session: ``transpile(sql)``, and ``spark.sql`` of an enabled
session (``run_statement``).

A statement's ``args`` (named ``:p`` or positional ``?`` markers) reach every query the rewrite
has Spark analyse and the final statement; positional markers are renamed ``:__sparkcep_p<k>``
first, because the rewrite re-emits expressions in another order and several times.  pyspark's
string formatting (``{df}``) is applied before the rewrite, with the session kind's own
formatter.  The first MATCH_RECOGNIZE of a scope ships ``udtf``/``sql_ext`` to its executors
when they may lack them (``shipping.prepare``).  An error Spark raises about the rewritten SQL
is reported at the user's line:column.
"""
from __future__ import annotations

import re

from sqlglot.tokens import TokenType

from udtf.errors import MatchRecognizeError, line_col, offset

from ..compiler.catalog import spark_message
from ..compiler.parse import Pattern, SparkCep, find_match_recognize, find_nodes, parse, statement_spans
from ..compiler.pattern_window import holds_pattern_window
from ..compiler.rewrite import rewrite_sql, run_checks
from . import failures, shipping, views
from .catalog import SparkCatalog
from .kind import session_kind

_MENTION = re.compile(r"\bMATCH_RECOGNIZE\b|\bPATTERN\s*\(|\b(MEASURES|SEEK|INITIAL|SUBSET|DEFINE)\b|"
                      r"\bAFTER\s+MATCH\b", re.IGNORECASE)
# (a window's row pattern recognition, R020; a statement that mentions none of these is Spark's)
_CERTAIN = re.compile(r"\bMATCH_RECOGNIZE\b|\bPATTERN\s*\(", re.IGNORECASE)
_EXPLAIN = re.compile(r"\s*EXPLAIN(?:\s+(?:EXTENDED|CODEGEN|COST|FORMATTED))?\s+", re.IGNORECASE)
MARKER = "__sparkcep_p"  # positional marker k becomes the named marker :__sparkcep_p<k>


# ---------------------------------------------------------------------------------------------
# transpile
# ---------------------------------------------------------------------------------------------

def transpile(sql: str, spark=None, args=None) -> str:
    """Plain Spark SQL for ``sql``; MATCH_RECOGNIZE clauses become calls of UDTFs registered in
    ``spark`` (default: the active session).  SQL without MATCH_RECOGNIZE is returned as is.

    ``args``: the values of the statement's parameter markers (as for ``spark.sql``); the
    rewrite's schema queries need them.  With a list, the returned SQL has named markers
    ``:__sparkcep_p0``, ``:__sparkcep_p1``, ... in place of the ``?`` (``named_args(args)`` is
    the dict to run it with)."""
    if spark is None:
        spark = active_session()
    return _transpile(sql, spark, args, None)


def named_args(args):
    """``args`` for SQL whose positional markers ``transpile`` renamed (a dict as is)."""
    return args if not isinstance(args, (list, tuple)) else {f"{MARKER}{k}": v for k, v in enumerate(args)}


def _transpile(sql: str, spark, args, run) -> str:
    return _rewrite(sql, spark, args, run)[0]


def _rewrite(sql: str, spark, args, run, pending: list | None = None) -> tuple:
    """(the Spark SQL for ``sql``, a function from an offset in it to the (line, column) of the
    user's SQL it comes from: an offset in a clause's replacement maps to the clause).

    ``pending``: a list when the caller has Spark analyse the returned statement at once and,
    before reporting any error of it, calls what ``_rewrite`` appends there: the checks the
    rewrite deferred (``rewrite_sql``), which raise the error the eager order would have.  Only
    a single statement defers (not EXPLAIN, whose run reports analysis errors as its result)."""
    if not _MENTION.search(sql):
        return sql, None
    explain = _EXPLAIN.match(sql)
    if explain:
        # sqlglot keeps EXPLAIN opaque: rewrite the statement after it, with the EXPLAIN words
        # blanked in place so that error positions stay those of the user's SQL
        blanked = re.sub(r"\S", " ", explain.group(0)) + sql[explain.end():]
        statement, locate = _rewrite(blanked, spark, args, run)  # (nothing deferred)
        if statement is blanked:
            return sql, None
        prefix = explain.group(0).strip() + " "
        return prefix + statement, lambda index: locate(max(0, index - len(prefix)))
    try:
        trees = parse(sql)
    except MatchRecognizeError:
        if _CERTAIN.search(sql):
            raise
        return sql, None  # (a word like MEASURES in SQL sqlglot cannot parse: Spark's to judge)
    if not any(find_match_recognize(tree) or find_nodes(tree, holds_pattern_window) for tree in trees):
        return sql, None
    if spark is None:
        raise RuntimeError("transpile needs a SparkSession: pass spark= or create one first")
    patterns = [(p.offset, p.offset + len(p.text)) for tree in trees for p in tree.find_all(Pattern)
                if p.offset is not None]
    positional = _markers(sql, args, patterns)
    text, shifts = _rename_positional(sql, positional) if positional else (sql, ())
    shipping.prepare(spark)
    _lift_arrow_byte_limit(spark)
    spans = statement_spans(text)
    deferred = [] if pending is not None and len(spans) == 1 else None

    def shifted(step, *arguments):
        try:
            return step(*arguments)
        except MatchRecognizeError as e:
            if not shifts:
                raise
            raise _shifted(e, text, sql, shifts) from None
    rewritten, done = shifted(rewrite_sql, text, SparkCatalog(spark, named_args(args), run), deferred)
    if deferred:
        pending.append(lambda: shifted(run_checks, deferred))
    failures.remember(e for _, lowered in done for e in lowered.computes)
    return rewritten, (_locator(sql, text, spans[0][0], done, shifts) if len(spans) == 1 else None)


def _locator(user: str, text: str, start: int, done, shifts):
    """Offset in the rewritten statement -> (line, column) in ``user`` (see ``_rewrite``):
    ``text`` is ``user`` with renamed markers (``shifts``), the statement starts at ``start``
    and ``done`` holds the rewritten clauses (their spans in ``text`` and replacements)."""
    spans = {(clause.meta["span"][0], clause.meta["span"][1], len(lowered.text)) for clause, lowered in done}
    outer = sorted(e for e in spans if not any(o != e and o[0] <= e[0] and e[1] <= o[1] for o in spans))
    lead = len(text[start:]) - len(text[start:].lstrip())

    def locate(index: int) -> tuple:
        position, delta = start + lead + index, 0
        for a, b, n in outer:
            if position < a + delta:
                break
            if position < a + delta + n:  # inside a clause's replacement: at the clause
                position, delta = a, 0
                break
            delta += n - (b - a)
        position -= delta
        back = sum(added if position > at + added else max(0, position - at) for at, added in shifts
                   if position > at)
        return line_col(user, position - back)

    return locate


def active_session():
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()



# ---------------------------------------------------------------------------------------------
# parameter markers
# ---------------------------------------------------------------------------------------------

def _tokens(sql: str):
    return SparkCep().tokenize(sql)


def _markers(sql: str, args, patterns) -> list:
    """Offsets of the ``?`` markers of ``sql`` (outside the PATTERN texts ``patterns``, where
    ``?`` is a quantifier); a marker without a value in ``args`` is an error at the marker, in
    Spark's words (Spark would report it at a position of the rewritten SQL)."""
    named = args if isinstance(args, dict) else {}
    count = len(args) if isinstance(args, (list, tuple)) else 0
    tokens = [t for t in _tokens(sql) if not any(a <= t.start < b for a, b in patterns)]
    positional = []
    for k, token in enumerate(tokens):
        name = None
        if token.token_type is TokenType.PLACEHOLDER and token.text == "?":
            positional.append(token.start)
            if len(positional) > count:
                name = "?"
        elif token.token_type is TokenType.COLON and k + 1 < len(tokens):
            after, before = tokens[k + 1], tokens[k - 1] if k else None
            path = before is not None and before.end + 1 == token.start and before.token_type in (
                TokenType.VAR, TokenType.IDENTIFIER, TokenType.R_BRACKET, TokenType.R_PAREN)
            if after.token_type is TokenType.VAR and token.end + 1 == after.start and not path \
                    and after.text not in named:
                name = after.text
        if name is not None:
            line, column = line_col(sql, token.start)
            error = MatchRecognizeError(f"[UNBOUND_SQL_PARAMETER] Found the unbound parameter: {name}.", line, column)
            error.checked = True  # no value in args (not Spark's)
            raise error
    return positional


def _rename_positional(sql: str, positions) -> tuple[str, tuple]:
    """``sql`` with its k-th ``?`` marker (at ``positions[k]``) renamed ``:__sparkcep_p<k>``, and
    the renames ((offset in the new text, added characters), ...) to map positions back."""
    out, shifts, position, added = [], [], 0, 0
    for k, start in enumerate(positions):
        name = f":{MARKER}{k}"
        out += [sql[position:start], name]
        shifts.append((start + added, len(name) - 1))
        added += len(name) - 1
        position = start + 1
    out.append(sql[position:])
    return "".join(out), tuple(shifts)


def _shifted(error: MatchRecognizeError, text: str, user: str, shifts) -> MatchRecognizeError:
    """``error`` (at a line:column of ``text``) at the same place of the user's SQL ``user``,
    which has ``?`` where ``text`` has ``:__sparkcep_p<k>``."""
    if error.line is None:
        return error
    at = offset(text, error.line, error.column)
    back = 0
    for start, added in shifts:
        if at > start + added:
            back += added
        elif at > start:  # inside the renamed marker: at its '?'
            back += at - start
    line, column = line_col(user, at - back)
    return MatchRecognizeError(re.sub(":?" + MARKER + r"\d+", "?", error.message), line, column)



# ---------------------------------------------------------------------------------------------
# one statement of an enabled session
# ---------------------------------------------------------------------------------------------

def run_statement(spark, original, sql: str, args, kwargs):
    """``spark.sql(sql, args, **kwargs)`` of an enabled session."""
    if not isinstance(sql, str):
        return original(spark, sql, args, **kwargs)
    views.register_global_functions(spark, sql)
    if not _MENTION.search(sql):  # (formatting inserts values and names, never a clause)
        return original(spark, sql, args, **kwargs)
    formatter, frames = None, {}
    if kwargs:
        if session_kind(spark) == "connect":
            from pyspark.sql.connect.sql_formatter import SQLStringFormatter

            formatter = SQLStringFormatter(spark)
            sql = formatter.format(sql, **kwargs)
            frames = {name: df for df, name in formatter._temp_views}
        else:
            from pyspark.sql.sql_formatter import SQLStringFormatter

            formatter = SQLStringFormatter(spark)
            sql = formatter.format(sql, **kwargs)

    def run(text, arguments):
        if not frames:
            return original(spark, text, arguments)
        # Connect's frames of DataFrames live in the statement: format again with the same
        # DataFrames (each of their names becomes a field; other braces are escaped)
        text = text.replace("{", "{{").replace("}", "}}")
        for name in frames:
            text = text.replace(name, "{" + name + "}")
        return original(spark, text, arguments, **frames)

    pending: list = []  # (the rewrite's deferred checks: ``_rewrite``)
    try:
        try:
            rewritten, locate = _rewrite(sql, spark, args, run, pending)
        except MatchRecognizeError as e:
            raise _unbound_hint(e, args, spark) from None
        if rewritten is sql:
            return run(sql, args)
        views.note_global_view(sql, rewritten)
        try:
            with failures.unlogged():  # (its errors are the generated SQL's: reported below at the user's)
                df = run(rewritten, named_args(args))
                if frames or session_kind(spark) == "connect":
                    df.schema  # Spark Connect analyses lazily: analyse now, while errors can be placed
            return df
        except MatchRecognizeError:
            raise
        except Exception as e:
            try:
                for checks in pending:  # (a clause's own check places the error first)
                    checks()
            except MatchRecognizeError as found:
                raise _unbound_hint(found, args, spark) from None
            error = _user_error(e, locate)
            if error is None:
                raise
            raise _unbound_hint(error, args, spark) from None
    finally:
        if formatter is not None and not frames:
            formatter.clear()


_CONSTANTS_ONLY = "spark.sql.legacy.parameterSubstitution.constantsOnly"


def _unbound_hint(error: MatchRecognizeError, args, spark) -> MatchRecognizeError:
    """``error``, with the likely cause when Spark left a marker unbound that ``args`` binds
    (every marker was checked to have a value)."""
    if not args or not error.message.startswith("[UNBOUND_SQL_PARAMETER]") or getattr(error, "checked", False):
        return error
    if session_kind(spark) == "connect" and spark.conf.get(_CONSTANTS_ONLY, "false").lower() == "true":
        cause = (f" The statement's args bind it, but Spark Connect leaves every parameter unbound while "
                 f"{_CONSTANTS_ONLY}=true (Spark's own behaviour, with or without MATCH_RECOGNIZE); unset it "
                 "on a Connect session - see docs/deploying.md.")
    else:
        cause = (" The statement's args bind it, but the session's SQL parser dropped them: a parser extension "
                 f"(Delta Lake's, for one) loses Spark 4.2's parameter substitution; set {_CONSTANTS_ONLY}=true "
                 "(Spark then binds parameters in the analyzer) - see docs/deploying.md.")
    return MatchRecognizeError(error.message + cause, error.line, error.column)


def _user_error(e: Exception, locate):
    """Spark's error ``e`` about the rewritten statement as a ``MatchRecognizeError`` at the
    user's line:column (None when Spark gives no position)."""
    if locate is None:
        return None
    try:
        contexts = list(e.getQueryContext()) if hasattr(e, "getQueryContext") else []
    except Exception:
        contexts = []
    starts = [c.startIndex() for c in contexts if getattr(c, "startIndex", None) and c.startIndex() >= 0]
    if not starts:
        return None
    line, column = locate(starts[0])
    return MatchRecognizeError(re.sub(MARKER + r"\d+", "?", spark_message(e)), line, column)


_ARROW_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"
_NO_BYTE_LIMIT = str(2**31 - 1)


def _lift_arrow_byte_limit(spark) -> None:
    """Set the session's Arrow byte limit per batch to Spark's "no limit" (Int.MaxValue) when
    the user left it unset.  Under any other value Spark sizes the Arrow batch it writes for
    Python after every row; that check was a quarter of the JVM's time of moving the rows to
    the UDTF (docs/deploying.md, "Limits").  Batches stay bounded by ``maxRecordsPerBatch``."""
    if spark.conf.get(_ARROW_BYTES, None) is None:
        try:
            spark.conf.set(_ARROW_BYTES, _NO_BYTE_LIMIT)
        except Exception as e:
            if not _mutation_blocked(e):
                raise


def _mutation_blocked(e: Exception) -> bool:
    """Whether ``e`` refuses a session mutation in a Spark Declarative Pipelines definition (the
    pipeline spec's configuration sets confs there; docs/deploying.md)."""
    condition = getattr(e, "getCondition", lambda: None)() or ""
    return condition.startswith("SESSION_MUTATION_IN_DECLARATIVE_PIPELINE")
