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


def imports_sparkcep(python: str, cwd: Path) -> bool:
    done = subprocess.run([python, "-c", "import udtf"], cwd=cwd, env=clean_env(), capture_output=True)
    return done.returncode == 0


if __name__ == "__main__":
    print(bare_python(Path(sys.argv[1])))
