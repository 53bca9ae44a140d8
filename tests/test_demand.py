"""Which output columns of a MATCH_RECOGNIZE its statement reads (``sql_ext.compiler.demand``), and the
rewrite computing and carrying only those: no Spark (the results: test_sql_statements.py)."""
from __future__ import annotations

import pytest

from catalog_support import StaticCatalog
from sql_ext.compiler.demand import demanded
from sql_ext.compiler.parse import find_match_recognize, parse
from sql_ext.compiler.rewrite import rewrite_sql
from udtf.plan import OutputKind

MR = """t MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS s, LAST(B.ts) AS e, MATCH_NUMBER() AS mno
  ALL ROWS PER MATCH
  PATTERN (A B+) DEFINE B AS p < PREV(p)) AS m"""
ALL = None


def read(sql: str):
    (tree,) = parse(sql)
    clause = find_match_recognize(tree)[0]  # the innermost, or the first
    result = demanded(clause)
    return ALL if result is None else set(result) - {"t", "u", "m", "q", "k2", "count"}


@pytest.mark.parametrize("sql, expected", [
    # read by name, anywhere in the SELECT that holds the clause
    (f"SELECT s, E FROM {MR}", {"s", "e"}),
    (f"SELECT m.s FROM {MR} WHERE p > 1 ORDER BY ts", {"s", "p", "ts"}),
    (f"SELECT k, count(*) FROM {MR} GROUP BY k HAVING max(e) > 0", {"k", "e"}),
    (f"SELECT count(*) FROM {MR}", set()),
    (f"SELECT s, current_date FROM {MR}", {"s", "current_date"}),  # a column, when there is one
    (f"SELECT sum(s) AS e2 FROM {MR}", {"s"}),  # an alias reads nothing
    (f"SELECT s FROM {MR} JOIN u ON m.k = u.k2", {"s", "k"}),
    (f"SELECT s FROM {MR} JOIN u USING (p)", {"s", "p"}),
    (f"SELECT s, (SELECT max(v) FROM u WHERE u.k2 = m.e) AS x FROM {MR}", {"s", "v", "e"}),
    (f"SELECT s FROM u, {MR}", {"s"}),
    # a plain star of a derived table: what the SELECT reading it reads
    (f"SELECT count(*), sum(s) FROM (SELECT * FROM {MR}) q", {"s"}),
    (f"SELECT s FROM (SELECT m.*, 1 AS one FROM {MR}) q", {"s"}),
    (f"SELECT s FROM (SELECT * FROM {MR} WHERE mno > 1) q", {"s", "mno"}),
    (f"SELECT s FROM (SELECT u.* FROM {MR} JOIN u ON u.k2 = m.k) q", {"k"}),  # u.* is not m's
    # every column
    (f"SELECT * FROM {MR}", ALL),
    (f"SELECT m.* FROM {MR}", ALL),
    (f"SELECT struct(*) FROM {MR}", ALL),
    (f"SELECT DISTINCT * FROM (SELECT * FROM {MR}) q", ALL),
    (f"SELECT count(*) FROM (SELECT DISTINCT * FROM {MR}) q", ALL),
    (f"SELECT a FROM (SELECT * FROM {MR}) AS q(a, b, c, d, e, f, g)", ALL),
    (f"SELECT x FROM (SELECT * FROM {MR}) PIVOT (sum(s) FOR k IN ('a', 'b'))", ALL),
    (f"(SELECT s FROM {MR}) ORDER BY e", ALL),  # Spark finds e below the SELECT list
    (f"SELECT * FROM ((SELECT s FROM {MR}) ORDER BY e LIMIT 3) q", ALL),
    (f"SELECT s FROM (SELECT * FROM {MR} ORDER BY 2 LIMIT 5) q", ALL),  # positions
    (f"SELECT s FROM (SELECT * FROM {MR} ORDER BY ALL LIMIT 5) q", ALL),
    (f"FROM {MR} |> AGGREGATE count(*) GROUP BY 2", ALL),  # a pipe's ordinal counts its input's columns
    (f"SELECT s, l.* FROM {MR}, LATERAL (SELECT m.*) l", ALL),  # the outer m's columns
    (f"SELECT IDENTIFIER('e') FROM {MR}", ALL),
    (f"WITH c AS (SELECT * FROM {MR}) SELECT s FROM c", ALL),
    (f"SELECT s FROM (SELECT * FROM {MR} UNION ALL SELECT * FROM {MR.replace('AS m', 'AS n')}) q", ALL),
    (f"INSERT INTO out SELECT * FROM {MR}", ALL),
    (f"SELECT s FROM {MR} NATURAL JOIN u", ALL),
    (f"SELECT `s|e` FROM {MR}", ALL),  # a regex under spark.sql.parser.quotedRegexColumnNames
    (f"SELECT * FROM (SELECT * FROM {MR}) MATCH_RECOGNIZE (ORDER BY ts MEASURES A.s AS x PATTERN (A) "
     "DEFINE A AS true) AS o", ALL),
])
def test_what_the_statement_reads(sql, expected):
    assert read(sql) == expected


CATALOG = StaticCatalog({"t": "k string, ts int, p int, wide string"})


def udtf(sql: str):
    return rewrite_sql(sql, CATALOG)[1][0][1]


def test_only_the_columns_read_are_computed_carried_and_shipped():
    full, pruned = udtf(f"SELECT * FROM {MR}"), udtf(f"SELECT count(*), sum(s) FROM (SELECT * FROM {MR}) q")
    assert [f.name for f in full.output] == ["k", "ts", "p", "wide", "__mr_a0", "__mr_a1", "__mr_a2"]
    assert [f.name for f in pruned.output] == ["__mr_a0"]
    assert [o.kind for o in pruned.plan.output] == [OutputKind.TAKE] and len(pruned.plan.atoms) == 1
    assert "wide" in full.shipped and "wide" not in pruned.shipped
    assert pruned.text.startswith("(SELECT `__mr_a0` AS `s` FROM ")


def test_a_later_atom_keeps_its_name_and_takes_its_new_index():
    pruned = udtf(f"SELECT mno FROM {MR}")
    assert [f.name for f in pruned.output] == ["__mr_a2"]
    assert [(o.kind, o.atom) for o in pruned.plan.output] == [(OutputKind.VALUE, 0)]


def test_when_nothing_is_read_the_first_column_is_kept():
    pruned = udtf(f"SELECT count(*) FROM {MR}")
    assert [f.name for f in pruned.output] == ["k"] and not pruned.plan.atoms


def test_with_only_constants_read_the_udtf_still_has_a_column():
    """Spark has no UDTF without columns: the timed-out flag stands for the rows."""
    constant = "t MATCH_RECOGNIZE (ORDER BY ts MEASURES 'x' AS s, LAST(A.p) AS e PATTERN (A) DEFINE A AS p > 0) m"
    for sql in (f"SELECT count(*) FROM {constant}", f"SELECT s FROM {constant}",
                f"SELECT * FROM {constant.replace(', LAST(A.p) AS e', '')}"):
        pruned = udtf(sql)
        assert [o.kind for o in pruned.plan.output] == [OutputKind.TIMED_OUT] and not pruned.plan.atoms


def test_an_unread_measure_is_still_analysed():
    """(Spark's typing of an unread measure: test_sql_statements.py.)"""
    from udtf.errors import MatchRecognizeError

    bad = MR.replace("MATCH_NUMBER() AS mno", "FIRST(A.nope) AS mno")
    with pytest.raises(MatchRecognizeError, match="nope"):
        udtf(f"SELECT s FROM {bad}")
