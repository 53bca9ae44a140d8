"""Run every benchmark in turn (``make bench``); each prints its own table."""
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent

for script in ("engine.py", "sql_vshape.py", "flinkcep.py"):
    if (HERE / script).exists():
        print(f"== bench/{script}", flush=True)
        subprocess.run([sys.executable, str(HERE / script)], check=True, cwd=HERE.parent)
