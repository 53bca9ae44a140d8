"""The Spark Connect tier: one local Spark Connect server per run (tests/connect/connect_server.py),
whose Python workers lack sparkcep, and the ``spark`` fixture as a remote session to it.

It runs in a pytest process of its own (``make test-connect``, part of ``make test``): a
remote session switches pyspark's functions to Spark Connect for the whole process, and the
classic tier's SparkSession must not share it.  Every test here is marked ``connect``."""
from __future__ import annotations

import pytest

from deploy_support import bare_python, clean_env, imports_sparkcep


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/connect/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.connect)


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    from connect_server import ConnectServer

    workdir = tmp_path_factory.mktemp("connect")
    python = bare_python(workdir / "bare-venv")
    assert not imports_sparkcep(python, workdir), "the workers' Python must not import sparkcep"
    server = ConnectServer(workdir, python, clean_env())
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark(connect_server):
    """A Spark Connect session (replaces the classic tier's ``spark`` fixture here)."""
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(connect_server.url).getOrCreate()
    yield session
    session.stop()
