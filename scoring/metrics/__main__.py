"""`python -m scoring.metrics --format tatqa --gold GOLD --pred PRED [...]`: the `score_predictions` command
without Django (the metric modules are pure), so it starts as fast as the official scripts do."""

from __future__ import annotations

import argparse
import sys

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
