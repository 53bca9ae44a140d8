"""tests/test_sql_statements.py over a Spark Connect session, but for Delta (the server has no
Delta jars) and the local-cluster test (a classic session of its own)."""
from sql_support import mr_spark  # noqa: F401  (fixture)
from test_sql_statements import (  # noqa: F401  (fixtures and tests, collected here again)
    series, test_create_table_as_select_and_read_it_back, test_enable_is_idempotent_and_keeps_spark_sql,
    test_explain, test_insert_into_and_overwrite, test_lower_case_comments_and_trailing_semicolon,
    test_persistent_view_is_refused, test_persistent_view_without_match_recognize_in_a_script,
    test_prev_comparisons_derived_in_the_udtf, test_pyspark_string_formatting, test_script_of_several_statements,
    test_statements_without_match_recognize_pass_through, test_temporary_views)
