"""The engine plan: everything a worker needs to run one MATCH_RECOGNIZE, as typed records.

The driver (``sql_ext``) builds an ``EnginePlan``; it travels as JSON (``to_json`` /
``from_json``, checked against ``VERSION`` on the worker) inside the registered UDTF.

Columns the UDTF receives, by role:

* ``partition``: the PARTITION BY columns (rows of a partition arrive contiguous, in order);
* ``starts``: a boolean true on the first row of each partition, when Spark decides where
  partitions start (keys whose Arrow equality is not Spark's grouping equality: ``arrow.py``);
* ``masks``: booleans that Spark computed (the row-level part of a condition);
* ``derived``: masks the UDTF computes itself from input columns and their PREVs;
* ``values``: columns the engine reads as Python values (match-state expressions), with
  their Spark types;
* ``order_key``: the first ORDER BY column when there is a WITHIN (a timestamp or a date: its
  distance in microseconds or days).
"""
from __future__ import annotations

import json
from enum import Enum
from typing import NamedTuple

from . import expr  # noqa: F401  (its records travel in the plan: they must be registered to decode)
from .errors import MatchRecognizeError, Pos
from .program import Program
from .wire import decode, encode, record

VERSION = 11


@record
class Semantics(str, Enum):
    STANDARD = "standard"  # SQL:2016: for each start row, the preferred match
    FLINKCEP = "flinkcep"  # Fu & Wu Section 6.2: every accepting run, as it completes


@record
class SkipMode(str, Enum):
    PAST_LAST_ROW = "PAST LAST ROW"
    TO_NEXT_ROW = "TO NEXT ROW"
    TO_FIRST = "TO FIRST"
    TO_LAST = "TO LAST"
    NO_SKIP = "NO SKIP"


@record
class RowsMode(str, Enum):
    ONE = "ONE"
    ALL_SHOW = "ALL SHOW"
    ALL_OMIT = "ALL OMIT"
    ALL_WITH_UNMATCHED = "ALL WITH UNMATCHED"
    WINDOW = "WINDOW"  # R020: one row per input row, its match's measures (``Frame``)


@record
class Frame(NamedTuple):
    """R020's window frame ``ROWS BETWEEN CURRENT ROW AND end FOLLOWING`` (``end`` None:
    UNBOUNDED FOLLOWING): a row's match lies in its frame and navigation reads no row outside
    it; ``seek``: SEEK (the match may start at a later row of the frame), else INITIAL."""
    end: int | None = None
    seek: bool = False


@record
class Skip(NamedTuple):
    """AFTER MATCH SKIP: ``vars`` (variable indexes), ``name`` and ``at`` (its line:column in
    the user's SQL) describe the target of TO FIRST / TO LAST; ``error_on_miss`` (ERROR ON
    MISS, FlinkCEP's ``throwExceptionOnMiss``): a target absent from the match or at its first
    row is the standard's runtime error under FLINKCEP semantics too."""
    mode: SkipMode = SkipMode.PAST_LAST_ROW
    vars: tuple = ()
    name: str = ""
    at: Pos = (None, None)
    error_on_miss: bool = False


@record
class Condition(NamedTuple):
    """A DEFINE (or UNTIL) condition of variable ``var``: the AND of a mask column (row-level
    part; None = TRUE) and a match-state expression (``udtf.expr``; None = TRUE)."""
    var: int
    mask: str | None
    expr: object


@record
class Lagged(NamedTuple):
    """Column ``column`` ``lag`` rows back in the partition (0 = the current row)."""
    column: str
    lag: int


@record
class Comparison(NamedTuple):
    op: str  # = <> < <= > >=
    left: Lagged
    right: Lagged


@record
class DerivedMask(NamedTuple):
    """The AND of ``comparisons`` (NULL counts as false), computed in the UDTF."""
    name: str
    comparisons: tuple


@record
class Value(NamedTuple):
    """A column the engine reads as Python values of Spark type ``type``."""
    name: str
    type: str


@record
class Atom(NamedTuple):
    """A measure part the engine computes; ``final``: FINAL (else RUNNING) semantics."""
    expr: object
    final: bool


@record
class OutputKind(str, Enum):
    CARRY = "carry"  # an input column of the row the output row stands for
    TAKE = "take"  # an input column at the row a navigation atom lands on
    VALUE = "value"  # the value the engine computed for an atom
    TIMED_OUT = "timed out"  # BOOLEAN: is the row's match a timed-out partial match
    OWNER = "owner"  # BIGINT (R020): the partition ordinal of the row an output row stands for
    FRAME_ROW = "frame row"  # INT (R020): 0 for that row itself, k for the k-th row of its match
    LATE = "late"  # STRUCT of the input columns: a late row of a stream (udtf.stream), NULL on the others


@record
class Output(NamedTuple):
    kind: OutputKind
    column: str | None = None  # CARRY, TAKE
    atom: int | None = None  # TAKE, VALUE


@record
class Limits(NamedTuple):
    """Bounds on the work of one partition (Spark confs ``LIMIT_CONFS``); exceeding one is an
    error naming it, the partition and the row, instead of a job that runs for hours."""
    live_runs: int = 100_000  # partial matches alive at once
    match_rows: int = 10_000_000  # rows one match (or a run that may become one) spans
    steps_per_start: int = 100_000_000  # run steps spent on one start row (standard semantics)


LIMIT_CONFS = {"live_runs": "spark.sparkcep.maxLiveRuns", "match_rows": "spark.sparkcep.maxMatchRows",
               "steps_per_start": "spark.sparkcep.maxStepsPerStartRow"}


@record
class Chunking(NamedTuple):
    """One partition cut into chunks of ``rows`` attempt rows matched apart (``udtf.chunks``):
    a match spans at most ``longest`` rows; a chunk's worker gets ``behind`` rows before its
    first attempt row and ``ahead`` rows after its last (``longest`` + NEXT's lookahead).
    ``stitch``: the plan of the single step that stitches the chunks' runs (else a chunk's)."""
    rows: int
    longest: int
    behind: int
    ahead: int
    prefix: str  # of the chunked plan's columns (``udtf.chunks.column``)
    stitch: bool = False


@record
class Span(NamedTuple):
    """A WITHIN over the members' span (docs/hierarchies.md, rule 6): a run from item s may
    take item r only if ``admits`` - ``end <= start + WITHIN``, as Spark evaluates it - holds
    with ``end`` the greatest of the items' ``end`` values from s to r and ``start`` the least of
    their ``start`` values: the expansion's conjunct ``MAX(end) <= MIN(start) + T``, whose
    aggregates run over every item of the match so far, and so over every item from s to r."""
    start: str  # the value columns of each item's interval
    end: str
    limit: int  # the WITHIN in microseconds (a stream's watermark closes a run's window by it)
    admits: object  # an engine row expression over ``start`` and ``end``


@record
class LayerPlan(NamedTuple):
    """A LAYER below the top of a statement evaluated in one pass (``Hierarchy``): ``plan`` runs
    over the layer's input as the expansion's union (docs/hierarchies.md), every column a value;
    ``sources``: the indexes of the layers it reads; ``measures``: its events' columns, each an
    engine row expression over the columns ``outputs`` names, one per ``plan.output`` (an
    aggregate's value, a navigation's column at the item it lands on)."""
    name: str
    plan: object  # EnginePlan
    sources: tuple
    reads_rows: bool
    outputs: tuple  # of str
    measures: tuple  # of (name, expr)
    keys: tuple = ()  # its own PARTITION BY columns refining the statement's (rule 8): a matcher per key


@record
class Hierarchy(NamedTuple):
    """The LAYERs of a statement evaluated in one pass per partition (``udtf.hierarchy``): the
    UDTF reads the input rows (``rows``: the columns the layers read, and the start and end of
    each row's interval) and builds each layer's input - the expansion's union, ordered by rule 3 -
    itself; the ``EnginePlan`` holding it is the top's, over its own union."""
    layers: tuple  # of LayerPlan, lowest first
    sources: tuple  # the layers the top reads
    reads_rows: bool  # does the top read rows
    rows: tuple  # of Value: the input columns shipped
    helpers: tuple  # the union's generated columns: (row, level, number, source, start, end)


@record
class EnginePlan(NamedTuple):
    program: Program
    semantics: Semantics
    skip: Skip
    rows: RowsMode
    define: tuple  # of Condition
    until: tuple  # of Condition
    partition: tuple  # column names
    masks: tuple  # mask columns Spark computes
    derived: tuple  # of DerivedMask
    values: tuple  # of Value
    order_key: str | None
    within: float | None  # in order_key units
    lookahead: int  # rows past the current one that DEFINE or MEASURES read (NEXT)
    atoms: tuple  # of Atom
    output: tuple  # of Output, one per UDTF output column
    limits: Limits
    ansi: bool  # spark.sql.ansi.enabled: the semantics of the expressions the engine evaluates
    timeouts: bool = False  # WITH TIMEOUT ROWS: also report partial matches whose WITHIN window closed
    zone: str = "UTC"  # spark.sql.session.timeZone: the zone of the expressions the engine evaluates
    distinct: bool = False  # SEMANTICS FLINKCEP DISTINCT: each distinct match once (not once per run)
    at: Pos = (None, None)  # the clause's MATCH_RECOGNIZE keyword in the user's SQL (a limit's error is there)
    starts: str | None = None  # the column marking each partition's first row (None: the keys are compared)
    frame: Frame | None = None  # R020 (rows WINDOW): the window frame that bounds each row's match
    chunk: Chunking | None = None  # the partition in chunks (the chunked plan's UDTFs), None: whole
    hierarchy: Hierarchy | None = None  # the LAYERs below this plan's pattern, evaluated in the same pass
    span: Span | None = None  # a LAYER's (or the top's) WITHIN over its members' span, in place of ``within``

    def to_json(self) -> str:
        return json.dumps({"version": VERSION, "plan": encode(self)}, sort_keys=True)

    @staticmethod
    def from_json(text: str) -> EnginePlan:
        data = json.loads(text)
        if data.get("version") != VERSION:
            raise MatchRecognizeError(
                f"this MATCH_RECOGNIZE was planned by a sparkcep whose engine plan version is "
                f"{data.get('version')}, but the worker runs version {VERSION}: install the same "
                "sparkcep on the driver and the executors")
        plan = decode(data["plan"])
        if not isinstance(plan, EnginePlan):
            raise MatchRecognizeError("malformed engine plan")
        return plan
