"""The compiler: MATCH_RECOGNIZE in Spark SQL text to plain Spark SQL and engine plans, without
Spark (what it needs from a session it asks a ``catalog.Catalog``).

parse (``parse``, ``window_syntax``, ``calls``) -> analyze (``analyze``, ``syntax``, ``rules``,
``interval``) -> plan (``plan``, ``typecheck``, ``optimize``) -> lower (``lower``, ``demand``,
``pattern_window``) -> ``rewrite`` (the statement's text); ``explain`` shows a compiled pattern.
"""
