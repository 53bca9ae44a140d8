-- The e-commerce query of Fu & Wu, "Formal Semantics of Apache Flink CEP" (Example 1,
-- traced in Example 4; ../shared/seeds/000), FlinkCEP semantics:
--
--   Pattern.<Event>begin("p1", AfterMatchSkipStrategy.noSkip())
--          .where(name == 1 && fold(price) + cur.price <= 10)   // iterative condition
--          .oneOrMore()                                         // relaxed loop {1,inf}
--          .until(name == 2)
--
-- Detects runs of events named 1 whose running price sum stays <= 10, skipping other
-- events (relaxed loop `P->+`), and stopping for good at an event named 2 (UNTIL; it
-- tests the row being read, which is not mapped to P, hence unqualified `name`).
-- The iterative condition is the running aggregate SUM(P.price) (it includes the current
-- row).  AFTER MATCH NO SKIP + SEMANTICS FLINKCEP report every match as it completes.
-- On the paper's five events e(id, name, price) = e(1,1,2) e(2,2,5) e(3,1,6) e(4,3,2)
-- e(5,1,5) the answer is {e1} {e3} {e5}: e2 stops the run of e1; e3 + e5 = 11 > 10.
--
-- Data: paper_events(id, name, price) (sql_examples/data.py: paper_events(), fixed).
SELECT *
FROM paper_events MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES
    FIRST(P.id)   AS first_id,
    LAST(P.id)    AS last_id,
    COUNT(P.*)    AS events,
    SUM(P.price)  AS total_price
  ONE ROW PER MATCH
  AFTER MATCH NO SKIP
  SEMANTICS FLINKCEP
  PATTERN (P->+)
  DEFINE
    P AS P.name = 1 AND SUM(P.price) <= 10 UNTIL name = 2
) AS m
ORDER BY first_id, last_id
