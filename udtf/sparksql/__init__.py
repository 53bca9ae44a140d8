"""Spark SQL's semantics over Python values: types (``types``), the analyzer's implicit casts
(``coercion``), scalar functions and casts (``scalar``), aggregates as folds (``aggregates``)
and Spark's errors (``errors``); ``format`` prints values as Spark's CAST to STRING does.
Pure Python: the engine evaluates match-state expressions with it, exactly as Spark would."""
