import contextlib

import pytest

from spark_confs import session_confs


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (Delta + Arrow enabled) for the whole test run."""
    from sql_examples.local_spark import get_spark

    session = get_spark(app_name="sparkcep-tests")
    yield session
    session.stop()


# The confs that change what a query means; a test that leaves one changed would change every
# test after it in the shared session, so each Spark test gets them back as it found them.
_MEANING_CONFS = ("spark.sql.ansi.enabled", "spark.sql.session.timeZone")


@pytest.fixture(autouse=True)
def _meaning_confs_restored(request):
    if "spark" not in request.fixturenames:
        yield
        return
    session = request.getfixturevalue("spark")
    with session_confs(session, {key: session.conf.get(key) for key in _MEANING_CONFS}):
        yield


@pytest.fixture
def confs():
    """``confs(session, {key: value})`` sets Spark confs for the test; its teardown restores
    them (``spark_confs.session_confs``)."""
    with contextlib.ExitStack() as stack:
        yield lambda session, values: stack.enter_context(session_confs(session, values))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # Runs before pytest's own -m selection, so `-m "not spark"` sees the marker.
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


# Where a run's time goes, file by file (setup, call and teardown of its tests; the
# session-scoped SparkSession start lands on the first Spark test's file): the CI log's
# per-test --durations cannot show the thousands of short tests that make up most of it.
_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    if not _FILE_SECONDS:
        return
    ranked = sorted(_FILE_SECONDS.items(), key=lambda item: -item[1])
    terminalreporter.write_sep("=", f"time per test file (top 40 of {len(ranked)})")
    for path, seconds in ranked[:40]:
        terminalreporter.write_line(f"{seconds:9.1f}s  {path}")
