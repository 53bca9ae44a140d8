"""tests/test_sql_hierarchies.py over a Spark Connect session: statements with LAYERs (one UDTF
per layer) run where the workers' Python lacks sparkcep, and their errors keep the user's
line:column."""
from sql_support import mr_spark  # noqa: F401  (fixture)
from test_sql_hierarchies import (  # noqa: F401  (tests, collected here again)
    test_a_layer_error_is_placed_in_the_users_sql, test_a_layers_run_time_error_is_placed_in_the_users_sql,
    test_example_1_a_spike_then_the_fan_stopping, test_example_3_three_layers_and_their_windows,
    test_example_4_skip_modes_and_match_numbers_per_layer, test_example_5_alarms_per_sensor_incidents_per_zone)
