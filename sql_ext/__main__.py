"""``python -m sql_ext {transpile,explain,run} FILE.sql`` (``spark.cli``)."""
import sys

from .spark.cli import main

sys.exit(main())
