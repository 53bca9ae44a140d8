"""The supported Spark range is checked before a session's first MATCH_RECOGNIZE (pure Python:
sessions stand in by their ``version``)."""
from __future__ import annotations

import pyspark
import pytest

from sql_ext.spark import versions
from udtf.errors import MatchRecognizeError


class Session:
    def __init__(self, version: str):
        self.version = version


@pytest.mark.parametrize("version, line", [("4.2.0", (4, 2)), ("4.1.0.dev1", (4, 1)), ("10.0", (10, 0)),
                                           ("unknown", None)])
def test_release_line(version, line):
    assert versions.release_line(version) == line


def test_the_range_is_the_tested_lines():
    assert [v for v in ("3.5.3", "4.0.5", "4.1.0", "4.2.1", "4.3.0", "4.4.0", "5.0.0") if versions.supported(v)] \
        == ["4.1.0", "4.2.1", "4.3.0"]


def test_the_installed_pyspark_is_supported():
    assert versions.supported(pyspark.__version__)


@pytest.mark.parametrize("server", ["4.0.5", "4.4.0"])
def test_an_unsupported_spark_is_refused_with_the_range(server):
    with pytest.raises(MatchRecognizeError) as raised:
        versions.check(Session(server))
    assert str(raised.value) == ("sparkcep supports Spark 4.1 to 4.3 (pyspark >= 4.1.0, < 4.4); "
                                 f"this session runs Spark {server}")


def test_an_unsupported_pyspark_client_is_refused(monkeypatch):
    monkeypatch.setattr(pyspark, "__version__", "4.0.1")
    with pytest.raises(MatchRecognizeError, match="this Python has pyspark 4.0.1$"):
        versions.check(Session("4.2.0"))


def test_a_supported_session_is_checked_once(monkeypatch):
    session = Session("4.3.0")
    versions.check(session)
    session.version = "4.0.0"  # not asked again
    versions.check(session)
    versions.check(None)  # no session yet: nothing to check
