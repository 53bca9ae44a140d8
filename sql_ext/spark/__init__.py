"""The Spark edge: what runs the compiler inside a SparkSession.

``session`` (enable / disable) -> ``statement`` (one statement: markers, the rewrite, errors at
the user's line:column) -> ``catalog`` (the compiler's questions answered by Spark), ``views``
(UDTFs of global views), ``shipping`` (packages to the executors, ``versions`` checked),
``failures`` (run-time errors placed in the user's SQL); ``streaming`` (``stream()``) and
``cli`` (``python -m sql_ext``) beside them.
"""
