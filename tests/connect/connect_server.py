"""A local Spark Connect server for the Connect tier: ``python connect_server.py PORT`` starts a classic
local[2] Spark with the Connect plugin (pyspark ships ``spark-connect``'s jar) and prints READY.

``ConnectServer`` runs it as a subprocess whose Python workers are a Python without sparkcep
(tests/deploy_support.py), so that the tier checks that ``enable()`` ships the packages."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ConnectServer:
    def __init__(self, workdir: Path, worker_python: str, env: dict):
        self.port = free_port()
        self.log = workdir / "connect-server.log"
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "connect_server.py"), str(self.port)], cwd=workdir,
            env={**env, "PYSPARK_PYTHON": worker_python, "PYSPARK_DRIVER_PYTHON": sys.executable},
            stdout=subprocess.PIPE, stderr=open(self.log, "wb"), text=True)
        deadline = time.monotonic() + 180
        line = ""
        while time.monotonic() < deadline and self.process.poll() is None:
            line = self.process.stdout.readline()
            if line.strip() == "READY":
                break
        if line.strip() != "READY":
            self.stop()
            raise RuntimeError(f"the Spark Connect server did not start: {self.log.read_text()[-3000:]}")

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def main(port: str) -> None:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("sparkcep-connect-server")
             .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
             .config("spark.connect.grpc.binding.address", "127.0.0.1")
             .config("spark.connect.grpc.binding.port", port)
             .config("spark.driver.memory", "2g")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").config("spark.default.parallelism", "2")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
             .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
             .config("spark.sql.warehouse.dir", os.path.join(os.getcwd(), "warehouse"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print("READY", flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        spark.stop()


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    main(sys.argv[1])
