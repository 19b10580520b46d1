"""The child process that reads untrusted paper sources (`python -m curation.papers.child`), under the rlimits
its parent (curation/papers/bounded.py) set before it started. No Django, no database, no network.

In: one JSON object on stdin, {"files": [{"path", "name"}], "archive": ArchiveLimits fields}. Out: JSON lines on
stdout, {"progress": {...}} as it goes and last {"sources": [...]}, one per file: {"source_name", "sha256",
"extraction"} or {"source_name", "refused"}. When memory runs out it writes {"limit": "memory"} and exits 3.
"""

from __future__ import annotations

import errno
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from curation.errors import InvalidInput
from curation.latex import ArchiveLimits
from curation.papers.reading import source_read

MEMORY_EXIT = 3


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _read_one(number: int, total: int, path: Path, name: str, limits: ArchiveLimits) -> dict[str, Any]:
    def progress(stage: str, counts: dict[str, Any], done: int = number) -> None:
        _say({"progress": {"stage": stage, "file": name, "files_done": done, "files_total": total, **counts}})

    try:
        sha256, extraction = source_read(path=path, name=name, limits=limits, progress=progress)
    except InvalidInput as error:
        reason = error.message.removeprefix(f"{name}: ")  # the name is shown beside the reason
        if "File too large" in reason or f"[Errno {errno.EFBIG}]" in reason:
            reason = f"unpacked files exceed the {limits.max_uncompressed_bytes}-byte limit on what may be written"
        return {"source_name": name, "refused": reason}
    progress("extracted", {"tables": len(extraction.tables), "paragraphs": len(extraction.paragraphs)}, number + 1)
    return {"source_name": name, "sha256": sha256, "extraction": asdict(extraction)}


def main() -> int:
    reserve = bytearray(8 * 1024 * 1024)  # given back on MemoryError, so the report can still be written
    try:
        request = json.load(sys.stdin)
        limits = ArchiveLimits(**request["archive"])
        files = request["files"]
        sources = [
            _read_one(number, len(files), Path(item["path"]), item["name"], limits) for number, item in enumerate(files)
        ]
        _say({"sources": sources})
    except MemoryError:
        del reserve
        _say({"limit": "memory"})
        return MEMORY_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())
