"""Spark SQL's semantics over Python values: types (``types``), the analyzer's typing rules and
implicit casts (``coercion``), scalar functions and casts (``scalar``), the registry of scalar
functions (``functions``: one record per function), aggregates as folds and their registry
(``aggregates``) and Spark's errors (``errors``); ``format`` prints values as Spark's CAST to
STRING does.  Pure Python: the engine evaluates match-state expressions with it, exactly as
Spark would."""
