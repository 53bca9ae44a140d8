"""Drive the engine on plain Python lists: events are dicts, simple DEFINEs are predicates."""
from udtf.compile import compile_pattern
from udtf.evaluate import Conditions, Matcher, Options, Rows
from udtf.pattern import parse_pattern, variables


def run(pattern, events, define=None, state=None, until=None, mode="standard", skip="PAST LAST ROW",
        skip_to=(), within=None, order=None, unmatched=False, columns=(), chunks=None):
    """Return matches as lists of (event label, variable); ``define`` maps a variable to a
    predicate over an event (a mask), ``state`` to a match-state expression (udtf.expr)."""
    define, state, until = define or {}, state or {}, until or {}
    node = parse_pattern(pattern)
    names = variables(node)
    for extra in list(define) + list(state):
        if extra not in names:
            names.append(extra)
    index = {n: i for i, n in enumerate(names)}
    mask_names = [f"m_{v}" for v in define] + [f"u_{v}" for v in until]
    rows = Rows(masks=mask_names, values=list(columns))
    cond_define = {index[v]: (f"m_{v}" if v in define else None, state.get(v))
                   for v in set(define) | set(state)}
    cond_until = {index[v]: (f"u_{v}", None) for v in until}
    program = compile_pattern(node, names, untils=set(until))
    options = Options(mode=mode, skip=skip, skip_vars=tuple(index[v] for v in skip_to),
                      skip_name=",".join(skip_to), within=within, unmatched=unmatched)
    matcher = Matcher(program, Conditions(cond_define, cond_until, names, rows), options)
    out = []
    step = chunks or len(events) or 1
    for lo in range(0, len(events), step):
        part = events[lo:lo + step]
        rows.append(len(part),
                    masks={**{f"m_{v}": bytes(int(bool(p(e))) for e in part) for v, p in define.items()},
                           **{f"u_{v}": bytes(int(bool(p(e))) for e in part) for v, p in until.items()}},
                    values={c: [e.get(c) for e in part] for c in columns},
                    order=[e.get(order) for e in part] if order else None)
        out += matcher.feed(len(part))
    out += matcher.finish()
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
