"""PATTERN text -> pattern IR.

Grammar (standard row pattern syntax plus the FlinkCEP extensions)::

    pattern  := alt
    alt      := seq ('|' seq)*
    seq      := item (junction? item)*          junction: '->' relaxed, '->>' any, none = strict
    item     := '~' VAR                         negation (notNext / notFollowedBy, by its junction)
              | primary quant? ('UNTIL' VAR)?
    primary  := VAR | '(' alt? ')' | '{-' alt '-}' | PERMUTE '(' alt (',' alt)* ')' | '^' | '$'
    quant    := ('->' | '->>')? ('*' | '+' | '?' | '{' n '}' | '{' n? ',' m? '}') ('?' | '+')?
                                                reluctant '?', possessive '+' (FlinkCEP greedy())

Unquoted variable names are case-insensitive (upper-cased); ``"quoted"`` and
```backquoted``` names keep their case.  Every node keeps the (line, column) of its first character in the user's SQL.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from .errors import MatchRecognizeError, Pos, line_col


class Contiguity(str, Enum):
    """How a row read after a gap relates to the element before it."""
    STRICT = "strict"  # the very next row (juxtaposition; FlinkCEP next / consecutive())
    RELAXED = "relaxed"  # the first later row that fits ('->'; followedBy)
    ANY = "any"  # any later row ('->>'; followedByAny / allowCombinations())


STRICT, RELAXED, ANY = Contiguity.STRICT, Contiguity.RELAXED, Contiguity.ANY


@dataclass(frozen=True)
class Var:
    name: str
    pos: Pos = (None, None)

    def children(self) -> tuple:
        return ()


@dataclass(frozen=True)
class Empty:
    pos: Pos = (None, None)

    def children(self) -> tuple:
        return ()


@dataclass(frozen=True)
class Anchor:
    kind: str  # '^' partition start, '$' partition end
    pos: Pos = (None, None)

    def children(self) -> tuple:
        return ()


@dataclass(frozen=True)
class Seq:
    items: tuple
    junctions: tuple  # junctions[i] (a Contiguity) joins items[i] and items[i + 1]
    pos: Pos = (None, None)

    def children(self) -> tuple:
        return self.items


@dataclass(frozen=True)
class Alt:
    options: tuple
    pos: Pos = (None, None)

    def children(self) -> tuple:
        return self.options


@dataclass(frozen=True)
class Repeat:
    body: object
    min: int
    max: int | None  # None = unbounded
    greedy: bool = True
    inner: Contiguity = STRICT  # contiguity between iterations
    until: str | None = None  # variable whose DEFINE is the stop condition
    pos: Pos = (None, None)
    possessive: bool = False  # leave only when the next row cannot be taken (FlinkCEP greedy())

    def children(self) -> tuple:
        return (self.body,)


@dataclass(frozen=True)
class Permute:
    items: tuple
    pos: Pos = (None, None)

    def children(self) -> tuple:
        return self.items


@dataclass(frozen=True)
class Exclude:
    body: object
    pos: Pos = (None, None)

    def children(self) -> tuple:
        return (self.body,)


@dataclass(frozen=True)
class Neg:
    var: Var
    pos: Pos = (None, None)

    def children(self) -> tuple:
        return (self.var,)


def walk(node):
    """``node`` and every node below it, depth first, left to right (pre-order)."""
    yield node
    for child in node.children():
        yield from walk(child)


def min_rows(node) -> int:
    """The fewest rows ``node`` matches."""
    if isinstance(node, Var):
        return 1
    if isinstance(node, (Seq, Permute)):
        return sum(min_rows(item) for item in node.items)
    if isinstance(node, Alt):
        return min(min_rows(option) for option in node.options)
    if isinstance(node, Repeat):
        return node.min * min_rows(node.body)
    if isinstance(node, Exclude):
        return min_rows(node.body)
    return 0  # Empty, Anchor, Neg


def max_rows(node) -> int | None:
    """The most rows a match of ``node`` spans (excluded rows included), None when unbounded
    (an unbounded quantifier, or FlinkCEP's relaxed contiguity, which passes over rows)."""
    if isinstance(node, Var):
        return 1
    if isinstance(node, Repeat):
        body = max_rows(node.body)
        bounded = node.max is not None and body is not None and node.inner is STRICT
        return node.max * body if bounded else None
    if isinstance(node, Seq) and any(j is not STRICT for j in node.junctions):
        return None
    if isinstance(node, (Empty, Anchor, Neg)):
        return 0
    counts = [max_rows(child) for child in node.children()]
    if None in counts:
        return None
    return max(counts, default=0) if isinstance(node, Alt) else sum(counts)  # Seq, Permute, Exclude


def rows_before(node, before: int = 0, out: dict | None = None) -> dict:
    """Variable name -> the fewest rows of a match before a row its condition is evaluated on
    (mapped to it; for ``~V`` and UNTIL V, considered), ``node`` starting ``before`` rows in."""
    out = {} if out is None else out
    if isinstance(node, Var):
        out[node.name] = min(out.get(node.name, before), before)
    elif isinstance(node, Seq):
        for item in node.items:
            rows_before(item, before, out)
            before += min_rows(item)
    else:
        if isinstance(node, Repeat) and node.until is not None:
            out[node.until] = min(out.get(node.until, before), before)
        for child in node.children():  # (each item of a PERMUTE may come first)
            rows_before(child, before, out)
    return out


_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<qname>"(?:[^"]|"")+"|`(?:[^`]|``)+`)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<brace>\{\s*(?P<lo>\d*)\s*(?P<comma>,)?\s*(?P<hi>\d*)\s*\})
      | (?P<op>->>|->|\{-|-\}|[()|,*+?^$~])
    """,
    re.VERBOSE,
)

MAX_PERMUTE = 8
MAX_BOUND = 2_147_483_647  # a quantifier bound (Trino's limit)


class _Tokens:
    """Tokenizer over the pattern text; positions are mapped back into the user's SQL."""

    def __init__(self, text: str, origin: Pos):
        self.text = text
        self.origin = origin
        self.items = []  # (kind, value, offset)
        i = 0
        while i < len(text):
            m = _TOKEN.match(text, i)
            if not m and text[i] == "{" and "}" in text[i:]:
                quantifier = text[i:text.index("}", i) + 1]
                raise self.error(f"quantifier {quantifier}: expecting {{n}}, {{n,}}, {{,m}} or {{n,m}} with "
                                 "non-negative integers n and m", i)
            if not m:
                raise self.error(f"unexpected character {text[i]!r} in PATTERN", i)
            kind = m.lastgroup if m.lastgroup in ("ws", "qname", "name", "op") else "brace"
            if kind == "brace":
                self.items.append(("brace", (m.group("lo"), m.group("comma"), m.group("hi")), i))
            elif kind != "ws":
                self.items.append((kind, m.group(0), i))
            i = m.end()
        self.i = 0

    def pos(self, offset: int) -> Pos:
        return line_col(self.text, offset, self.origin)

    def error(self, message: str, offset: int | None = None) -> MatchRecognizeError:
        if offset is None:
            offset = self.items[self.i][2] if self.i < len(self.items) else len(self.text)
        return MatchRecognizeError(message, *self.pos(offset))

    def peek(self, ahead: int = 0):
        j = self.i + ahead
        return self.items[j] if j < len(self.items) else (None, None, len(self.text))

    def next(self):
        tok = self.peek()
        self.i += 1
        return tok

    def at_op(self, *ops) -> bool:
        kind, value, _ = self.peek()
        return kind == "op" and value in ops

    def at_word(self, word: str) -> bool:
        kind, value, _ = self.peek()
        return kind == "name" and value.upper() == word

    def expect_op(self, op: str):
        if not self.at_op(op):
            raise self.error(f"expected {op!r} in PATTERN")
        return self.next()


def parse_pattern(text: str, origin: Pos = (1, 1)) -> object:
    """Parse PATTERN text whose first character sits at ``origin`` (line, column) of the SQL."""
    toks = _Tokens(text, origin)
    node = _alt(toks)
    if toks.peek()[0] is not None:
        raise toks.error(f"unexpected {toks.peek()[1]!r} in PATTERN")
    return node


def _alt(toks: _Tokens):
    start = toks.peek()[2]
    options = [_seq(toks)]
    while toks.at_op("|"):
        toks.next()
        options.append(_seq(toks))
    return options[0] if len(options) == 1 else Alt(tuple(options), toks.pos(start))


def _starts_item(toks: _Tokens) -> bool:
    kind, value, _ = toks.peek()
    if kind in ("name", "qname"):
        return not (kind == "name" and value.upper() == "UNTIL")
    return kind == "op" and value in ("(", "{-", "^", "$", "~")


def _seq(toks: _Tokens):
    start = toks.peek()[2]
    if not _starts_item(toks):
        kind, value, off = toks.peek()
        if toks.at_op(")", "-}", "|", ",") or kind is None:  # (as in Trino: only () is empty)
            raise toks.error("expected a pattern element (a variable, (...), PERMUTE, ^, $ or {- ... -}; "
                             "() is the empty pattern)")
        raise toks.error(f"unexpected {value!r} in PATTERN")
    items, junctions = [_item(toks)], []
    while True:
        junction = STRICT
        if toks.at_op("->", "->>"):
            junction = RELAXED if toks.next()[1] == "->" else ANY
            if not _starts_item(toks):
                raise toks.error("a junction '->' or '->>' must be followed by a pattern element")
        elif not _starts_item(toks):
            break
        junctions.append(junction)
        items.append(_item(toks))
    _check_negations(toks, items, junctions)
    if len(items) == 1:
        return items[0]
    return Seq(tuple(items), tuple(junctions), toks.pos(start))


def _check_negations(toks, items, junctions):
    for k, item in enumerate(items):
        if not isinstance(item, Neg):
            continue
        before = junctions[k - 1] if k else None
        if k == 0:
            raise MatchRecognizeError("a negated variable cannot start a pattern sequence", *item.pos)
        if before == ANY:
            raise MatchRecognizeError("a negated variable cannot follow '->>'; use '->' (notFollowedBy) "
                                      "or juxtaposition (notNext)", *item.pos)
        if k + 1 < len(items) and isinstance(items[k + 1], Neg):
            raise MatchRecognizeError("two negated variables cannot be adjacent", *items[k + 1].pos)


def _item(toks: _Tokens):
    kind, value, off = toks.peek()
    if toks.at_op("~"):
        toks.next()
        kind, value, voff = toks.peek()
        if kind not in ("name", "qname"):
            raise toks.error("'~' must be followed by a pattern variable")
        toks.next()
        return Neg(Var(_var_name(kind, value), toks.pos(voff)), toks.pos(off))
    node = _primary(toks)
    node = _quantifier(toks, node, off)
    if toks.at_word("UNTIL"):
        uoff = toks.next()[2]
        if not isinstance(node, Repeat) or node.max is not None:
            raise toks.error("UNTIL applies only to an unbounded quantifier (*, +, {n,})", uoff)
        kind, value, _ = toks.peek()
        if kind not in ("name", "qname"):
            raise toks.error("UNTIL must be followed by a pattern variable")
        toks.next()
        node = Repeat(node.body, node.min, node.max, node.greedy, node.inner, _var_name(kind, value), node.pos,
                      node.possessive)
    return node


def _var_name(kind: str, value: str) -> str:
    if kind == "qname":  # "name" or `name`: case kept
        return value[1:-1].replace(value[0] * 2, value[0])
    return value.upper()


def _primary(toks: _Tokens):
    kind, value, off = toks.next()
    pos = toks.pos(off)
    if kind == "qname" or (kind == "name" and not (value.upper() == "PERMUTE" and toks.at_op("("))):
        return Var(_var_name(kind, value), pos)
    if kind == "name":  # PERMUTE(
        toks.expect_op("(")
        items = [_alt(toks)]
        while toks.at_op(","):
            toks.next()
            items.append(_alt(toks))
        toks.expect_op(")")
        if len(items) > MAX_PERMUTE:
            raise MatchRecognizeError(f"PERMUTE supports at most {MAX_PERMUTE} elements", *pos)
        return Permute(tuple(items), pos)
    if value == "(":
        if toks.at_op(")"):
            toks.next()
            return Empty(pos)
        inner = _alt(toks)
        toks.expect_op(")")
        return inner
    if value == "{-":
        inner = _alt(toks)
        toks.expect_op("-}")
        return Exclude(inner, pos)
    if value in ("^", "$"):
        return Anchor(value, pos)
    raise MatchRecognizeError(f"unexpected {value!r} in PATTERN", *pos)


def _quantifier(toks: _Tokens, node, off: int):
    inner = STRICT
    kind, value, _ = toks.peek()
    if kind == "op" and value in ("->", "->>"):
        nkind, nvalue, _ = toks.peek(1)
        if not (nkind == "brace" or (nkind == "op" and nvalue in ("*", "+", "?"))):
            return node
        inner = RELAXED if value == "->" else ANY
        toks.next()
        kind, value, _ = toks.peek()
    if kind == "brace":
        lo, comma, hi = value
        if not comma and not lo:
            raise toks.error("empty quantifier {}")
        low = int(lo) if lo else 0
        high = (int(hi) if hi else None) if comma else low
        text = "{" + lo + (comma or "") + hi + "}"
        if max(low, high or 0) > MAX_BOUND:
            raise toks.error(f"quantifier {text}: a bound must not exceed {MAX_BOUND}")
        if high == 0:
            raise toks.error(f"quantifier {text}: the maximum must be at least 1 (as in Trino; "
                             "leave the element out instead)")
        if high is not None and high < low:
            raise toks.error(f"quantifier {{{lo},{hi}}} has its maximum below its minimum")
    elif kind == "op" and value in ("*", "+", "?"):
        low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[value]
    else:
        return node
    toks.next()
    greedy, possessive = True, False
    if toks.at_op("?"):
        toks.next()
        greedy = False
    elif toks.at_op("+"):
        toks.next()
        possessive = True
    result = Repeat(node, low, high, greedy, inner, None, toks.pos(off), possessive)
    if toks.peek()[0] == "brace" or toks.at_op("*", "+"):
        raise toks.error("a quantifier cannot directly follow another quantifier; use parentheses")
    return result


def variables(node) -> list:
    """Primary pattern variables in order of first appearance (negated and UNTIL ones included)."""
    seen: dict = {}

    def visit(n):
        if isinstance(n, Var):
            seen.setdefault(n.name, None)
        for child in n.children():
            visit(child)
        if isinstance(n, Repeat) and n.until:
            seen.setdefault(n.until, None)

    visit(node)
    return list(seen)
