"""Drive the engine on plain Python lists: events are dicts, simple DEFINEs are predicates.

Match-state expressions are written with ``agg``, ``call``, ``col``, ``lit`` and ``nav`` (untyped
``udtf.expr`` records, variables by name or index) and typed for the engine as the rewrite
would type them (``sql_ext.compiler.typecheck``), columns holding Python ints being bigint."""
from sql_ext.compiler.typecheck import typed
from udtf import expr as ir
from udtf.compile import compile_pattern
from udtf.match import Conditions, Options, expand, forget, matcher
from udtf.pattern import parse_pattern, variables
from udtf.plan import Condition, Limits, Semantics, Skip, SkipMode
from udtf.rows import Rows


def engine_matches(pattern, n, masks=None, state=None, until=None, columns=None, mode="standard",
                   skip="PAST LAST ROW", skip_to=(), within=None, order=None, unmatched=False,
                   chunks=None, timeouts=False, watermarks=False, distinct=False, error_on_miss=False,
                   limits=Limits(), frame=None):
    """(matches, variable names) of the engine over rows 0..n-1, fed ``chunks`` rows at a time.
    ``masks[var]`` = per-row booleans of the row-level DEFINE part, ``state[var]`` = a
    match-state expression (udtf.expr IR; variable lists may use names), ``until[var]`` =
    per-row booleans of ``DEFINE var ... UNTIL``, ``columns[name]`` = per-row values.
    ``watermarks``: as a stream does, tell the engine after each chunk that every row to come
    lies past the last one's ``order`` (which must then be strictly increasing).  ``frame``: a
    window's (``udtf.plan.Frame``, R020): one outcome per row."""
    masks, state, until, columns = masks or {}, state or {}, until or {}, columns or {}
    engine, rows, names, lookback = engine_for(pattern, masks, state, until, columns, mode, skip, skip_to, within,
                                               unmatched, timeouts, distinct, error_on_miss, limits, frame)
    # fed in chunks, the engine also forgets the rows it no longer needs after each chunk, as
    # the UDTF does: match rows are then relative to the first row kept (``dropped`` before it)
    out, dropped = [], 0
    step = chunks or n or 1
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        rows.append(hi - lo,
                    masks={**{f"m_{v}": bytes(int(bool(x)) for x in m[lo:hi]) for v, m in masks.items()},
                           **{f"u_{v}": bytes(int(bool(x)) for x in m[lo:hi]) for v, m in until.items()}},
                    values={c: list(vals[lo:hi]) for c, vals in columns.items()},
                    order=list(order[lo:hi]) if order is not None else None)
        if watermarks:
            engine.horizon = order[hi - 1]
        out += _moved(expand(engine.feed(hi - lo)), dropped)
        if chunks:
            dropped += forget(engine, lookback)
    out += _moved(expand(engine.finish()), dropped)
    return out, names


def engine_for(pattern, masks=None, state=None, until=None, columns=None, mode="standard", skip="PAST LAST ROW",
               skip_to=(), within=None, unmatched=False, timeouts=False, distinct=False, error_on_miss=False,
               limits=Limits(), frame=None):
    """(matcher, its empty ``Rows``, variable names, the rows PREV reads back) for the
    arguments of ``engine_matches`` (``masks`` and ``columns`` name the rows' columns)."""
    masks, state, until, columns = masks or {}, state or {}, until or {}, columns or {}
    node = parse_pattern(pattern)
    names = variables(node)
    for extra in list(masks) + list(state) + list(skip_to):
        if extra not in names:
            names.append(extra)
    index = {v: i for i, v in enumerate(names)}
    types = {c: _type(values) for c, values in columns.items()}
    state = {v: typed(_indexed(e, index), types, ansi=True) for v, e in state.items()}
    rows = Rows(masks=[f"m_{v}" for v in masks] + [f"u_{v}" for v in until], values=list(columns))
    define = [Condition(index[v], f"m_{v}" if v in masks else None, state.get(v)) for v in set(masks) | set(state)]
    cond_until = [Condition(index[v], f"u_{v}", None) for v in until]
    program = compile_pattern(node, names, untils=set(until), within=within is not None)
    options = Options(semantics=Semantics(mode),
                      skip=Skip(SkipMode(skip), tuple(index[v] for v in skip_to), ",".join(skip_to),
                                error_on_miss=error_on_miss),
                      within=within, unmatched=unmatched, timeouts=timeouts, distinct=distinct, limits=limits,
                      frame=frame)
    engine = matcher(program, Conditions(define, cond_until, names, rows, windowed=frame is not None), options)
    return engine, rows, names, max((ir.lookback(c.expr) for c in define), default=0)


def _moved(matches, shift):
    """``matches`` (``Match`` tuples) with their row indexes moved up by ``shift``."""
    if not shift:
        return matches
    return [m._replace(start=m.start + shift, end=m.end + shift, rows=tuple((r + shift, v, x) for r, v, x in m.rows),
                       owner=None if m.owner is None else m.owner + shift) for m in matches]


def _indexed(expr, index):
    """``expr`` (udtf.expr records) with variable names in ``vars`` replaced by indexes."""
    if isinstance(expr, tuple) and hasattr(expr, "_fields"):
        fields = {}
        for name, value in zip(expr._fields, expr):
            if name == "vars" and value is not None:
                fields[name] = tuple(sorted(index[v] if isinstance(v, str) else v for v in value))
            else:
                fields[name] = _indexed(value, index)
        return type(expr)(**fields)
    if isinstance(expr, tuple):
        return tuple(_indexed(e, index) for e in expr)
    return expr


def run(pattern, events, define=None, state=None, until=None, mode="standard", skip="PAST LAST ROW",
        skip_to=(), within=None, order=None, unmatched=False, columns=(), chunks=None):
    """Return matches as lists of (event label, variable); ``define`` maps a variable to a
    predicate over an event (a mask), ``state`` to a match-state expression (udtf.expr)."""
    out, names = engine_matches(
        pattern, len(events), masks={v: [p(e) for e in events] for v, p in (define or {}).items()},
        state=state, until={v: [p(e) for e in events] for v, p in (until or {}).items()},
        columns={c: [e.get(c) for e in events] for c in columns}, mode=mode, skip=skip, skip_to=skip_to,
        within=within, order=[e.get(order) for e in events] if order else None, unmatched=unmatched,
        chunks=chunks)
    label = lambda r: events[r].get("label", r)
    return [[(label(r), names[v]) for r, v, _ in m.rows] if m.number is not None else ("unmatched", label(m.start))
            for m in out]


def labels(matches):
    return [" ".join(str(l) for l, _ in m) for m in matches]


def ev(*labels_):
    """Events from labels like 'a', 'b1': name = the letters, label = the whole token."""
    return [{"label": l, "name": l.rstrip("0123456789")} for l in labels_]


def is_(name):
    return lambda e: e["name"] == name


def _type(values) -> str:
    kinds = {type(v) for v in values if v is not None}
    return "double" if float in kinds else "string" if str in kinds else "bigint"


def lit(value):
    kind = {bool: "boolean", int: "int", float: "double", str: "string"}.get(type(value), "void")
    return ir.Lit(value, kind)


def col(name):
    return ir.Col(name, None)


def nav(column, vars_, mode=ir.NavMode.LAST, logical=0, physical=0):
    return ir.Nav(column, None, vars_, mode, logical, physical)


def agg(fn, vars_, column):
    """``fn(v.column)`` over the rows of ``vars_`` (``column`` None: ``COUNT(v.*)``)."""
    return ir.Agg(fn, vars_, () if column is None else (col(column),), (), False, None, None)


def call(fn, *args):
    return ir.Call(fn, args, (), None)
