#!/usr/bin/env python
"""Django's command-line utility for TaT-Curate."""

import os
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["extract_paper"]:  # the extractor is pure: no settings, apps or database to set up
        from curation.latex.cli import main

        sys.exit(main(sys.argv[2:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
