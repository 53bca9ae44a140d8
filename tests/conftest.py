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
