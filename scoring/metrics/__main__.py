"""`python -m scoring.metrics --format tatqa --gold GOLD --pred PRED [...]`: the `score_predictions` command
without Django (the metric modules are pure), so it starts as fast as the official scripts do."""

from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path

if "curation" not in sys.modules:
    # The metrics use only curation.toolkit (pure); the curation package's __init__ loads the Celery app and with it
    # Django's settings, a second of start-up a file-scoring command does not need. Its subpackages are found from
    # a bare package of the same path instead.
    package = types.ModuleType("curation")
    package.__path__ = [str(Path(__file__).resolve().parents[2] / "curation")]
    sys.modules["curation"] = package

from scoring.metrics import command


def main(argv: list[str] | None = None) -> int:
    """Parse, score, print; a file that cannot be scored prints the reason to stderr and returns 2."""
    parser = argparse.ArgumentParser(prog="python -m scoring.metrics", description=__doc__.splitlines()[0])
    command.add_arguments(parser)
    options = vars(parser.parse_args(argv))
    try:
        command.run(options, out=print, err=lambda line: print(line, file=sys.stderr))
    except command.CommandFailure as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
