import pytest


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (Delta + Arrow enabled) for the whole test run."""
    from sql_examples.local_spark import get_spark

    session = get_spark(app_name="sparkcep-tests")
    yield session
    session.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # Runs before pytest's own -m selection, so `-m "not spark"` sees the marker.
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
