"""What moving ingestion off the request path buys, and what the bounded child costs (prints one JSON object).

Side by side in one run, on the same uploads:
  request  — the API's upload (POST /api/projects/P/papers/: check, store, queue the job) for a normal paper and for
             a hostile one (a few KB of LaTeX whose macros double 40 times), as the web tier now answers it;
  read     — reading the same upload as the request used to, in process (`paper_source_read`), and through the
             bounded child (`sources_read_bounded`, the worker's way) with the default limits.
The figures judged: `hostile_request_over_read` (the request's share of what it used to hold; small is good) and
`child_over_in_process` for the normal paper (the child's overhead; near 1 is good).
Usage: python benchmarks/ingest_request.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._django import setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    setup_django()
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    from curation.models import Membership, Project
    from curation.papers.bounded import LimitExceeded, sources_read_bounded
    from curation.papers.ingestion import ingest_limits
    from curation.papers.services import paper_source_read
    from curation.states import Role
    from tests.curation.papers.hostile_sources import doubling_macros
    from tests.curation.papers.ingest_helpers import PAPER, tar_gz

    folder = Path(tempfile.mkdtemp(prefix="tat-bench-ingest-"))
    normal = tar_gz(folder / "2401.01234.tar.gz", {"main.tex": PAPER})
    hostile = doubling_macros(folder / "loop.tex")
    manager = User.objects.create_user("bench-manager")
    project = Project.objects.create(name="Bench", slug="bench")
    Membership.objects.create(user=manager, project=project, role=Role.MANAGER)
    client = APIClient()
    client.force_authenticate(manager)

    def request_s(path: Path) -> float:
        started = time.perf_counter()
        upload = SimpleUploadedFile(path.name, path.read_bytes())
        response = client.post("/api/projects/bench/papers/", {"files": [upload]}, format="multipart")
        assert response.status_code == 202, response.content
        return time.perf_counter() - started

    def in_process_s(path: Path) -> float:
        started = time.perf_counter()
        paper_source_read(path_or_upload=path)
        return time.perf_counter() - started

    def child_s(path: Path) -> float:
        started = time.perf_counter()
        try:
            sources_read_bounded(files=[(path, path.name)], limits=ingest_limits())
        except LimitExceeded:
            pass
        return time.perf_counter() - started

    figures: dict[str, float] = {}
    for label, path in (("normal", normal), ("hostile", hostile)):
        figures[f"{label}_request_s"] = statistics.median(request_s(path) for _ in range(options.repeat))
        figures[f"{label}_child_s"] = statistics.median(child_s(path) for _ in range(options.repeat))
        runs = options.repeat if label == "normal" else 1  # the hostile read takes its whole CPU budget
        figures[f"{label}_in_process_s"] = statistics.median(in_process_s(path) for _ in range(runs))
    print(
        json.dumps(
            {
                "benchmark": "ingest_request",
                "repeat": options.repeat,
                "cpu_limit_s": ingest_limits().cpu_s,
                **{key: round(value, 4) for key, value in figures.items()},
                "hostile_request_over_read": round(figures["hostile_request_s"] / figures["hostile_in_process_s"], 4),
                "child_over_in_process": round(figures["normal_child_s"] / figures["normal_in_process_s"], 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
