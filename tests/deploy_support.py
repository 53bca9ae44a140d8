"""A Python without sparkcep, for workers that must not find it (the Connect server's, a
local cluster's): a venv (no pip, made in milliseconds) whose site-packages links to every
entry of this venv's site-packages but sparkcep's (an installed wheel's packages, or the
``.pth`` file of an editable install: no ``.pth`` file is linked).  pyspark, pyarrow, numpy,
pandas import as here; ``udtf`` and ``sql_ext`` do not (unless the current directory or
PYTHONPATH holds them: callers run it from a directory without them and drop PYTHONPATH)."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path


def bare_python(directory: Path) -> str:
    """Path of the interpreter of a venv in ``directory`` without sparkcep (made once)."""
    python = directory / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=False, symlinks=True).create(directory)
        site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True).stdout.strip())
        for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
            if entry.suffix != ".pth" and entry.name.split("-")[0] not in SPARKCEP and not (site / entry.name).exists():
                (site / entry.name).symlink_to(entry)
    return str(python)


SPARKCEP = ("udtf", "sql_ext", "sparkcep")  # its packages and its .dist-info


def clean_env(**extra) -> dict:
    """This process's environment without PYTHONPATH and pyspark's Connect switches."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE",
                        "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.update(extra)
    return env


def stream_and_batch(spark, workdir: str) -> tuple:
    """(rows streamed, rows of the batch query) of the streaming example's query
    (sql_examples/streaming.py) over the same parquet files: ``sql_ext.stream`` over a stream
    of them (one file per micro-batch, a watermark, an available-now trigger, the end-of-stream
    row) into a parquet sink, and ``spark.sql`` over them at rest.  Any session kind."""
    import sql_ext
    from sql_examples.streaming import END, FRAUD_SQL, KEEP, SCHEMA, card_events

    rows = sorted(card_events(cards=6, per_card=60), key=lambda r: r[1])
    source, sink = f"{workdir}/events", f"{workdir}/alerts"
    for part in (rows[:len(rows) // 2], rows[len(rows) // 2:], [("~end", END, 0.0)]):
        spark.createDataFrame(part, SCHEMA).coalesce(1).write.mode("append").parquet(source)
    (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(source)
     .withWatermark("ts", "10 minutes").where(KEEP).createOrReplaceTempView("card_events"))
    sql_ext.stream(spark, FRAUD_SQL).writeStream.format("parquet").outputMode("append") \
        .option("checkpointLocation", f"{workdir}/checkpoint").trigger(availableNow=True).start(sink) \
        .awaitTermination()
    streamed = sorted(tuple(r) for r in spark.read.parquet(sink).collect())
    spark.read.schema(SCHEMA).parquet(source).where(KEEP).createOrReplaceTempView("card_events")
    return streamed, sorted(tuple(r) for r in spark.sql(FRAUD_SQL).collect())


def imports_sparkcep(python: str, cwd: Path) -> bool:
    done = subprocess.run([python, "-c", "import udtf"], cwd=cwd, env=clean_env(), capture_output=True)
    return done.returncode == 0


if __name__ == "__main__":
    print(bare_python(Path(sys.argv[1])))
