"""The session time zone in the engine, without Spark: zone ids as Spark reads them, instants
and wall clocks with java.time's rules (gaps, overlaps, local mean time before 1900, beyond
Python's year range), the casts and arithmetic that read the zone, the zone in the engine plan,
and the analysis error when this Python cannot load the zone.  Expected values are Spark 4.2's
(``CAST(... AS STRING)`` / ``unix_micros`` in a session with that ``spark.sql.session.timeZone``);
tests/test_sql_session_zone.py compares with Spark itself."""
from __future__ import annotations

import datetime as dt

import pytest

from catalog_support import StaticCatalog
from sql_ext.compiler.rewrite import rewrite_sql
from udtf.errors import MatchRecognizeError
from udtf.plan import EnginePlan
from udtf.sparksql import format as fmt
from udtf.sparksql import functions, scalar, zone
from udtf.sparksql.types import DATE, STRING, TIMESTAMP, TIMESTAMP_NTZ, SqlType, TypeKind

LA = "America/Los_Angeles"
US = 1_000_000


def wall(text: str) -> int:
    """Microseconds of a wall clock ``yyyy-mm-dd hh:mm:ss``."""
    return (dt.datetime.fromisoformat(text) - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)


# unix_micros(TIMESTAMP '2024-07-01 00:00:00') in sessions with these spark.sql.session.timeZone
@pytest.mark.parametrize("zone_id, micros", [
    ("GMT+8", 1719763200 * US), ("+5:30", 1719772200 * US), ("PST", 1719817200 * US),
    ("EST", 1719810000 * US), ("UTC+01:00", 1719788400 * US), ("+05", 1719774000 * US),
    ("Z", 1719792000 * US), ("Etc/GMT+8", 1719820800 * US), ("UT", 1719792000 * US),
    ("GMT", 1719792000 * US), ("+0530", 1719772200 * US), ("-13:33:33", 1719840813 * US),
    ("EST5EDT", 1719806400 * US), ("IST", 1719772200 * US), ("UTC+8", 1719763200 * US),
    ("GMT-0", 1719792000 * US), ("UTC", 1719792000 * US)])
def test_zone_ids_as_spark_reads_them(zone_id, micros):
    f = scalar.cast(STRING, TIMESTAMP, True, zone=zone_id)
    assert f("2024-07-01 00:00:00") == micros


@pytest.mark.parametrize("zone_id", ["UTC", "Z", "GMT", "UT", "+00:00", "GMT-0", "UTC+0"])
def test_zones_at_offset_zero_keep_the_utc_casts(zone_id):
    assert zone.is_utc(zone_id)
    assert scalar.cast(TIMESTAMP, TIMESTAMP_NTZ, True, zone=zone_id) is scalar.identity


@pytest.mark.parametrize("zone_id", ["Mars/Olympus", "utc", "+19:00", "1x"])
def test_zones_this_python_cannot_load(zone_id):
    with pytest.raises(zone.ZoneError):
        zone.resolve(zone_id)


@pytest.mark.parametrize("text, zone_id, micros", [
    ("2024-03-10 02:30:00", LA, 1710066600 * US),  # in the spring-forward gap: 03:30 PDT
    ("2024-11-03 01:30:00", LA, 1730622600 * US),  # in the fall-back overlap: the earlier offset
    ("1800-01-01 00:00:00", LA, -5364634022 * US),  # local mean time, -7:52:58
    ("1800-01-01 00:00:00", "Asia/Kolkata", -5364683608 * US),  # +5:53:28
    ("2024-01-01 00:00:00+05:00", LA, 1704049200 * US),  # the string's offset wins
    ("2024-01-01 00:00:00 America/New_York", LA, 1704085200 * US),
    ("2024-01-01 00:00:00 GMT+8", LA, 1704038400 * US),
])
def test_string_to_timestamp(text, zone_id, micros):
    assert scalar.cast(STRING, TIMESTAMP, True, zone=zone_id)(text) == micros


def test_string_to_timestamp_ntz_ignores_the_strings_zone():
    f = scalar.cast(STRING, TIMESTAMP_NTZ, True, zone=LA)
    assert f("2024-01-01 00:00:00+05:00") == f("2024-01-01 00:00:00 America/New_York") == wall("2024-01-01 00:00:00")


@pytest.mark.parametrize("micros, text", [
    (-5364662400 * US, "1799-12-31 16:07:02"),
    (253402300800 * US, "9999-12-31 16:00:00"),  # beyond year 9999 in UTC
    ((-62135596800 - 86400) * US, "0000-12-30 16:07:02"),  # before year 1
    (1710064800 * US, "2024-03-10 03:00:00"),
    (1730626200 * US, "2024-11-03 01:30:00"),  # the second 01:30 (PST)
])
def test_timestamp_to_string_prints_the_wall_clock(micros, text):
    assert scalar.cast(TIMESTAMP, STRING, True, zone=LA)(micros) == text


def test_date_to_timestamp_is_the_start_of_the_day():
    # midnight in a gap: the end of the gap (01:00), as LocalDate.atStartOfDay
    days = wall("2018-11-04 00:00:00") // (86400 * US)
    assert scalar.cast(DATE, TIMESTAMP, True, zone="America/Sao_Paulo")(days) == 1541300400 * US
    assert scalar.cast(DATE, TIMESTAMP, True, zone="+05:30")(0) == -19800 * US
    # beyond Python's years: 400-year cycles
    assert zone.start_of_day((327419046 * US * 1000 - 7 * 3600 * US) // (86400 * US), zone.resolve(LA)) \
        == 327419046 * US * 1000


def test_timestamp_to_date_and_ntz_read_the_wall_clock():
    instant = 1704085200 * US  # 2024-01-01 05:00 UTC = 2023-12-31 21:00 PST
    assert fmt.date_to_string(scalar.cast(TIMESTAMP, DATE, True, zone=LA)(instant)) == "2023-12-31"
    assert scalar.cast(TIMESTAMP, TIMESTAMP_NTZ, True, zone=LA)(instant) == wall("2023-12-31 21:00:00")
    assert scalar.cast(TIMESTAMP_NTZ, TIMESTAMP, True, zone=LA)(wall("2024-03-10 02:30:00")) == 1710066600 * US
    assert scalar.cast(TIMESTAMP_NTZ, TIMESTAMP, True, zone=LA)(wall("2024-11-03 01:30:00")) == 1730622600 * US


def months(a: int, n: int, zone_id: str = LA) -> int:
    interval = SqlType(TypeKind.YEAR_MONTH_INTERVAL, start=0, end=1)
    return functions.function("+", (TIMESTAMP, interval), TIMESTAMP, True, zone_id)(a, n)


def test_timestamp_plus_months_is_local_date_arithmetic():
    jan30 = wall("2024-01-31 04:00:00")  # 2024-01-30 20:00 PST: one day earlier than in UTC
    assert scalar.cast(TIMESTAMP, STRING, True, zone=LA)(months(jan30, 1)) == "2024-02-29 20:00:00"
    # 2024-02-10 02:30 PST + 1 month: 2024-03-10 02:30 is in the gap -> 03:30 PDT
    assert months(wall("2024-02-10 10:30:00"), 1) == 1710066600 * US
    # ZonedDateTime.plusMonths keeps the offset it had where the new wall clock is ambiguous
    pst = wall("2025-12-02 09:30:00")  # 01:30 PST
    assert scalar.cast(TIMESTAMP, STRING, True, zone=LA)(months(pst, -1)) == "2025-11-02 01:30:00"
    assert months(pst, -1) == wall("2025-11-02 09:30:00")  # PST, the later of the two 01:30
    assert months(wall("2025-10-02 08:30:00"), 1) == wall("2025-11-02 08:30:00")  # PDT, the earlier


def test_the_plan_carries_the_zone():
    catalog = ZoneCatalog("Asia/Kolkata")
    rewrite_sql(QUERY, catalog)
    (plan, _), = catalog.registered.values()
    assert plan.zone == "Asia/Kolkata"
    assert EnginePlan.from_json(plan.to_json()) == plan


class ZoneCatalog(StaticCatalog):
    def __init__(self, zone_id: str):
        super().__init__({"t": "id int, ts timestamp, p int"})
        self.zone_id = zone_id

    def time_zone(self) -> str:
        return self.zone_id


QUERY = """SELECT * FROM t MATCH_RECOGNIZE (ORDER BY id MEASURES LAST(B.id) AS b PATTERN (A B)
  DEFINE B AS CAST(FIRST(A.ts) AS DATE) = DATE'2024-01-01' AND p > SUM(A.p)) AS m"""


def test_a_zone_this_python_cannot_load_is_an_analysis_error_at_the_construct():
    with pytest.raises(MatchRecognizeError) as info:
        rewrite_sql(QUERY, ZoneCatalog("Mars/Olympus"))
    assert (info.value.line, info.value.column) == (2, 15)
    assert "CAST(TIMESTAMP AS DATE)" in str(info.value) and "'Mars/Olympus'" in str(info.value)
    # what does not read the zone still runs
    rewrite_sql(QUERY.replace("CAST(FIRST(A.ts) AS DATE) = DATE'2024-01-01'", "FIRST(A.id) > 0"),
                ZoneCatalog("Mars/Olympus"))


def test_timestamp_plus_day_time_adds_whole_days_to_the_wall_clock():
    day_time = SqlType(TypeKind.DAY_TIME_INTERVAL, start=0, end=3)
    plus = functions.function("+", (TIMESTAMP, day_time), TIMESTAMP, True, LA)
    minus = functions.function("-", (TIMESTAMP, day_time), TIMESTAMP, True, LA)
    noon = 1710014400 * US  # 2024-03-09 12:00 PST
    assert plus(noon, 86400 * US) == 1710097200 * US  # 2024-03-10 12:00 PDT: 23 hours later
    assert plus(noon, 36 * 3600 * US) == 1710097200 * US + 12 * 3600 * US
    assert minus(1710097200 * US, 86400 * US) == noon
    assert functions.function("+", (TIMESTAMP, day_time), TIMESTAMP, True, "+05:30")(noon, 86400 * US) == noon + 86400 * US
