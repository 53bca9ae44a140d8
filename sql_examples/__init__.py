"""Runnable examples and the local SparkSession helper (``sql_examples.local_spark``)."""
