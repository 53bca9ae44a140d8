"""SQL:2016 R020 in the SparkCep dialect: row pattern recognition in a window specification.

A window (``OVER (...)`` or ``WINDOW w AS (...)``) may carry pattern recognition in its frame,
as Trino 476 has it::

    ( [PARTITION BY expr, ...] [ORDER BY expr, ...]
      [MEASURES expr AS name, ...]
      ROWS BETWEEN CURRENT ROW AND { CURRENT ROW | n FOLLOWING | UNBOUNDED FOLLOWING }
      [AFTER MATCH SKIP ...] [INITIAL | SEEK] [SEMANTICS ...]
      PATTERN ( pattern ) [WITHIN interval] [SUBSET u = (a, b), ...] [DEFINE v AS cond, ...] )

and a measure is read through the window as ``name OVER w`` / ``name OVER (...)``.  Such a
window parses to a ``PatternWindow`` (an ``exp.Window`` whose ``pattern`` arg is a
``WindowPattern`` holding the clauses after the frame and MEASURES); a measure call is an
``exp.Window`` whose ``this`` is an unqualified ``exp.Column``.  Which clauses a window may
have is checked by ``sql_ext.compiler.pattern_window`` (Trino's analyzer messages, at line:column);
here only their order.  Windows without these clauses parse exactly as in sqlglot's Spark
dialect.  A SELECT records where its text lies (``meta["select_span"]``: offsets of its
SELECT keyword and of the end of its last modifier), so that it can be replaced as a whole.

``WindowSyntax`` is mixed into ``parse.SparkCepParser`` (it calls that parser's MATCH_RECOGNIZE
clause parsers), ``pattern_window_sql`` into its generator.
"""
from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

SEARCH_MODES = ("INITIAL", "SEEK")
# words after the frame that make a window one with pattern recognition
_TAIL_WORDS = {"AFTER", "INITIAL", "SEEK", "SEMANTICS", "PATTERN", "SUBSET", "DEFINE", "ONE", "ALL", "WITHIN"}
_CLAUSE_ORDER = ("MEASURES, the frame (ROWS BETWEEN CURRENT ROW AND ...), AFTER MATCH SKIP, INITIAL | SEEK, "
                 "SEMANTICS, PATTERN, WITHIN, SUBSET, DEFINE")


class WindowPattern(exp.Expression):
    """The pattern recognition clauses of a window: ``measures`` (``Measure``s), ``after``
    (``SkipTo``), ``search`` (``exp.Var`` INITIAL / SEEK), ``semantics`` (``exp.Var``),
    ``pattern`` (``Pattern``), ``within``, ``timeout``, ``subsets``, ``define``; ``rows``: a
    ROWS PER MATCH clause written in the window (an error); its position is the frame's."""

    arg_types = {"measures": False, "after": False, "search": False, "semantics": False, "pattern": False,
                 "within": False, "timeout": False, "subsets": False, "define": False, "rows": False}

    @property
    def measures(self) -> list:
        return list(self.args.get("measures") or [])

    @property
    def subsets(self) -> list:
        return list(self.args.get("subsets") or [])

    @property
    def definitions(self) -> list:
        return list(self.args.get("define") or [])

    @property
    def seek(self) -> bool:
        search = self.args.get("search")
        return search is not None and search.name == "SEEK"


class PatternWindow(exp.Window):
    """A window specification with row pattern recognition (``pattern``: ``WindowPattern``)."""

    arg_types = {**exp.Window.arg_types, "pattern": True}

    @property
    def row_pattern(self) -> WindowPattern:
        return self.args["pattern"]


WindowPattern.key = "mr_windowpattern"
PatternWindow.key = "mr_patternwindow"


def is_measure_call(node) -> bool:
    """``name OVER w``: a window whose function is a bare name (a measure of the window)."""
    return isinstance(node, exp.Window) and isinstance(node.this, exp.Column) and not node.this.table


class WindowSyntax:
    """Parser mixin: pattern windows, measure calls and SELECT spans (see the module)."""

    def reset(self) -> None:
        super().reset()
        self._select_starts: list = []

    # ---- SELECT spans ------------------------------------------------------------------
    def _parse_select_query(self, *args, **kwargs):
        self._select_starts.append(self._curr)
        try:
            return super()._parse_select_query(*args, **kwargs)
        finally:
            self._select_starts.pop()

    def _parse_query_modifiers(self, this):
        this = super()._parse_query_modifiers(this)
        start = self._select_starts[-1] if self._select_starts else None
        if isinstance(this, exp.Select) and start is not None and start.token_type == TokenType.SELECT \
                and "select_span" not in this.meta:
            this.meta["select_span"] = (start.start, self._prev.end + 1)
        return this

    # ---- measure calls -----------------------------------------------------------------
    def _parse_column(self):
        column = super()._parse_column()
        if isinstance(column, exp.Column) and not column.table and isinstance(column.this, exp.Identifier) \
                and self._curr is not None and self._curr.token_type == TokenType.OVER and self._next is not None \
                and (self._next.token_type == TokenType.L_PAREN or self._next.token_type in self.ID_VAR_TOKENS) \
                and not getattr(self, "_mr_expr_depth", 0):
            return self._parse_window(column)
        return column

    # ---- windows -----------------------------------------------------------------------
    def _parse_named_window(self):
        """``name AS spec`` of a WINDOW clause, as Spark's grammar reads it (namedWindow): the AS
        and a specification, ``(...)`` or another window's name, are required."""
        name = self._parse_id_var()
        ahead = self._next
        if not self._match(TokenType.ALIAS, advance=False) or ahead is None or \
                (ahead.token_type != TokenType.L_PAREN and ahead.token_type not in self.ID_VAR_TOKENS):
            self.raise_error("Expecting AS and a window specification")
        return self._parse_window(name, alias=True)

    def _parse_window(self, this, alias: bool = False):
        over = self._spec_start(alias)
        if over is None or not self._pattern_spec(over):
            return super()._parse_window(this, alias)
        if not alias:
            this = self._parse_call_modifiers(this)
        self._advance(over + 1 - self._index)
        return self._parse_pattern_window(this, alias)

    def _parse_call_modifiers(self, this):
        """What may stand between a function call and OVER, as a window over a named window
        reads it: ``WITHIN GROUP (ORDER BY ...)``, ``FILTER (WHERE ...)``, ``IGNORE | RESPECT NULLS``."""
        if self._match_text_seq("WITHIN", "GROUP"):
            this = self.expression(exp.WithinGroup(this=this, expression=self._parse_wrapped(self._parse_order)))
        if self._match_pair(TokenType.FILTER, TokenType.L_PAREN):
            self._match(TokenType.WHERE)
            this = self.expression(exp.Filter(this=this, expression=self._parse_where(skip_where_token=True)))
            self._match_r_paren()
        return self._parse_respect_or_ignore_nulls(this)

    def _spec_start(self, alias: bool) -> int | None:
        """Index of the ``(`` opening the window specification ahead, or None."""
        i = self._index
        tokens = self._tokens
        if alias:
            if i < len(tokens) and tokens[i].token_type == TokenType.ALIAS:
                i += 1
            return i if i < len(tokens) and tokens[i].token_type == TokenType.L_PAREN else None
        depth = 0
        while i < len(tokens):  # past FILTER (...), IGNORE NULLS, WITHIN GROUP (...)
            token = tokens[i]
            if token.token_type == TokenType.L_PAREN:
                depth += 1
            elif token.token_type == TokenType.R_PAREN:
                depth -= 1
            elif depth == 0 and token.token_type == TokenType.OVER:
                nxt = i + 1
                return nxt if nxt < len(tokens) and tokens[nxt].token_type == TokenType.L_PAREN else None
            elif depth == 0 and token.text.upper() not in ("FILTER", "WHERE", "IGNORE", "RESPECT", "NULLS",
                                                             "WITHIN", "GROUP"):
                return None
            if depth < 0:
                return None
            i += 1
        return None

    def _pattern_spec(self, open_index: int) -> bool:
        """Does the parenthesized window specification at ``open_index`` carry pattern
        recognition clauses (MEASURES before a frame, or a pattern clause after it)?"""
        tokens, depth, framed = self._tokens, 0, False
        for i in range(open_index + 1, len(tokens)):
            token = tokens[i]
            kind = token.token_type
            if kind == TokenType.L_PAREN:
                depth += 1
                continue
            if kind == TokenType.R_PAREN:
                if depth == 0:
                    return False
                depth -= 1
                continue
            if depth:
                continue
            word = token.text.upper() if kind not in self.TEXT_MATCH_EXCLUDED_TOKENS else ""
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if word == "MEASURES" and tokens[i - 1].token_type not in (TokenType.PARTITION_BY, TokenType.ORDER_BY,
                                                                          TokenType.COMMA) \
                    and nxt is not None and nxt.token_type not in (TokenType.R_PAREN, TokenType.COMMA):
                return True
            if kind in (TokenType.ROWS, TokenType.RANGE) or word == "GROUPS":
                framed = True
            elif framed and word in _TAIL_WORDS and tokens[i - 1].text.upper() in ("FOLLOWING", "PRECEDING", "ROW"):
                return True
        return False

    def _parse_pattern_window(self, this, alias: bool):
        """``(`` consumed: the rest of a window specification with pattern recognition."""
        name = self._parse_id_var(any_token=False, tokens=self.WINDOW_ALIAS_TOKENS)
        partition, order = [], None  # (each key with its span: ``syntax.check`` reads them as written)
        if self._match(TokenType.PARTITION_BY):
            partition = self._mr_list(lambda: self._spanned(self._parse_disjunction), "a PARTITION BY expression")
        if self._match(TokenType.ORDER_BY):
            keys = self._mr_list(lambda: self._spanned(self._parse_ordered), "an ORDER BY key")
            order = self.expression(exp.Order(expressions=keys))
        frame_token = self._curr
        measures = None
        if self._match_text_seq("MEASURES"):
            measures = self._parse_csv(self._parse_mr_measure)
        spec = self._parse_frame(frame_token)
        pattern = self._parse_window_pattern(measures, frame_token)
        if not self._match(TokenType.R_PAREN):
            self._window_unexpected("')' to close the window specification")
        window = PatternWindow(this=this, partition_by=partition, order=order, spec=spec, alias=name,
                               over=None if alias else "OVER", pattern=pattern)
        return self.expression(window)

    def _parse_frame(self, token: Token) -> exp.WindowSpec | None:
        if not (self._match_set((TokenType.ROWS, TokenType.RANGE)) or self._match_text_seq("GROUPS")):
            return None
        kind_token = self._prev
        between = self._match(TokenType.BETWEEN)
        start = self._parse_window_spec()
        end = self._parse_window_spec() if between and self._match(TokenType.AND) else {}
        spec = exp.WindowSpec(kind=kind_token.text.upper(), start=start["value"], start_side=start["side"],
                              end=end.get("value"), end_side=end.get("side"))
        spec.meta["between"] = bool(between)
        return self.expression(spec, token=kind_token)

    def _parse_window_pattern(self, measures, token: Token) -> WindowPattern:
        args: dict[str, t.Any] = {"measures": measures}
        args["after"] = self._parse_mr_skip()
        if self._match_texts(SEARCH_MODES):
            args["search"] = self.expression(exp.Var(this=self._prev.text.upper()), token=self._prev)
        args["semantics"] = self._parse_mr_semantics()
        args["rows"] = self._parse_mr_rows()
        if self._is_word(self._curr, ("PATTERN",)) and self._next is not None and \
                self._next.token_type == TokenType.L_PAREN:
            args["pattern"] = self._parse_mr_pattern()
        self._parse_mr_after_pattern(args)
        return self.expression(WindowPattern(**args), token=token)

    def _window_unexpected(self, expecting: str) -> None:
        token = self._curr
        if token is None:
            self.raise_error(f"Unexpected end of input in a window with pattern recognition; expecting {expecting}")
        word = token.text.upper()
        if word in _TAIL_WORDS or word == "MEASURES" or token.token_type in (TokenType.ROWS, TokenType.RANGE):
            self.raise_error(f"{word} is out of order or repeated in a window with pattern recognition; "
                             f"its clauses must appear in the order {_CLAUSE_ORDER}")
        self.raise_error(f"Unexpected {token.text!r} in a window with pattern recognition; expecting {expecting}")


def pattern_window_sql(self, e: PatternWindow) -> str:
    """Generator transform: a pattern window in the syntax above (``parse`` gives it back)."""
    pattern = e.row_pattern
    parts = []
    name = self.sql(e, "alias")
    if name:
        parts.append(name)
    if e.args.get("partition_by"):
        parts.append(self.partition_by_sql(e))
    if e.args.get("order"):
        parts.append(self.order_sql(e.args["order"], flat=True).strip())
    if pattern.measures:
        parts.append("MEASURES " + ", ".join(self.sql(m) for m in pattern.measures))
    if e.args.get("spec") is not None:
        spec = e.args["spec"]
        start = " ".join(p for p in (self.sql(spec, "start"), self.sql(spec, "start_side")) if p)
        end = " ".join(p for p in (self.sql(spec, "end"), self.sql(spec, "end_side")) if p)
        parts.append(f"{spec.args['kind']} BETWEEN {start} AND {end}" if spec.meta.get("between", True) and end
                     else f"{spec.args['kind']} {start}")
    for key in ("after", "search", "semantics"):
        node = pattern.args.get(key)
        if node is not None:
            text = self.sql(node)
            parts.append(f"SEMANTICS {text}" if key == "semantics" else text)
    if pattern.args.get("pattern") is not None:
        parts.append(self.sql(pattern, "pattern"))
    if pattern.args.get("within") is not None:
        parts.append(f"WITHIN {self.sql(pattern, 'within')}")
    if pattern.args.get("timeout") is not None:
        parts.append(self.sql(pattern, "timeout"))
    if pattern.subsets:
        parts.append("SUBSET " + ", ".join(self.sql(s) for s in pattern.subsets))
    if pattern.definitions:
        parts.append("DEFINE " + ", ".join(self.sql(d) for d in pattern.definitions))
    body = "(" + " ".join(parts) + ")"
    if e.arg_key == "windows":
        return f"{self.sql(e, 'this')} AS {body}"
    return f"{self.sql(e, 'this')} OVER {body}"
