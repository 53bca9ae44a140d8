-- Staging view (plain Spark SQL, no MATCH_RECOGNIZE): the readings the alarms model reads.
-- A view may not contain MATCH_RECOGNIZE (sparkcep's functions are session-scoped, so a
-- persistent view could not call them later): the MATCH_RECOGNIZE models are tables.
select zone, sensor_id, ts, temperature, smoke
from {{ source('demo', 'sensor_readings') }}
where ts is not null
