#!/usr/bin/env python
"""Django's command-line utility for TaT-Curate."""

import os
import sys
import types

if __name__ == "__main__":
    if sys.argv[1:2] == ["extract_paper"]:  # the extractor is pure: no settings, apps or database to set up
        # …nor the Celery app that curation/__init__.py starts for Django: the package is entered without it.
        package = types.ModuleType("curation")
        package.__path__ = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "curation")]
        sys.modules["curation"] = package
        from curation.latex.cli import main

        sys.exit(main(sys.argv[2:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
