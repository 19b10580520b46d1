"""The project's LaTeX extractor and pandoc side by side on the same real papers (prints one JSON object).

For each paper — the ACL template (benchmarks/papers), the demo paper, and the real-paper fixtures of the
extractor's tests — it times, median of `--repeats` runs:

- in process: `curation.latex.extract_paper(path)` in this Python process, against pandoc's own conversion
  time (`pandoc -f latex -t json` on the paper minus pandoc on an empty document: pandoc has no library to
  call from Python, so its start-up is taken off);
- whole command: `python manage.py extract_paper PATH --json` (the pure extractor, Django never set up)
  against `pandoc -f latex -t json PATH`, both as fresh processes.

Ratios are ours / pandoc (below 1: faster than pandoc); targets: in process ≤ 1.0, whole command ≤ 1.5.
The extractor's modules are compiled to bytecode first, as an installed package's are.
`command_startup_s` is the command's fixed cost (`manage.py extract_paper --help`: Python and the extractor's
imports), `python_startup_s` Python's alone.

With `--baseline DIR` (another checkout of the project, e.g. `git archive <commit> | tar -x -C DIR`), that
checkout's `manage.py extract_paper` is timed on the same papers too, interleaved with ours and pandoc in every
round (a shared machine drifts: rounds side by side compare like with like), under `baseline_*` keys.

Set-up: pandoc comes from Debian's package; when it is missing this script installs it with apt-get (as root,
or through sudo). The application's own set-up never installs it.

    .venv/bin/python benchmarks/extract_vs_pandoc.py [--repeats 5] [--baseline DIR]

The figures of record (`benchmarks/results/extract_vs_pandoc.json`, shown in docs/benchmarks.md) keep this output
under `raw`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIXTURES = ROOT / "tests" / "curation" / "latex" / "fixtures"
PAPERS = [
    ROOT / "benchmarks" / "papers" / "acl_template" / "acl_latex.tex",
    ROOT / "curation" / "demo" / "paper" / "main.tex",
    FIXTURES / "multifile" / "main.tex",
    FIXTURES / "floats" / "paper.tex",
    *sorted((FIXTURES / "constructs").glob("*.tex")),
]


def ensure_pandoc() -> str:
    """The pandoc binary, installed from Debian's package if missing."""
    found = shutil.which("pandoc")
    if found:
        return found
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([*prefix, "apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        [*prefix, "apt-get", "install", "-y", "-qq", "pandoc"], check=True, env=env, stdout=subprocess.DEVNULL
    )
    found = shutil.which("pandoc")
    if not found:
        raise SystemExit("pandoc could not be installed")
    return found


def median_seconds(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(command: list[str], cwd: Path) -> int:
    return subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


def interleaved_medians(actions: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Each action's median time, the actions taking turns within every round."""
    times: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(repeats):
        for name, action in actions.items():
            start = time.perf_counter()
            action()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to time side by side")
    options = parser.parse_args()
    pandoc = ensure_pandoc()
    version = subprocess.run([pandoc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]

    from curation.latex import extract_paper

    python = sys.executable
    manage = str(ROOT / "manage.py")
    # Timed as installed code runs: from bytecode. Without it (PYTHONDONTWRITEBYTECODE, a fresh checkout) every
    # command would compile the extractor's modules again, about 0.08 s of its 0.2 s.
    baseline = options.baseline.resolve() if options.baseline else None
    for root in (ROOT, baseline) if baseline else (ROOT,):
        subprocess.run(
            [python, "-m", "compileall", "-q", str(root / "curation")], check=True, stdout=subprocess.DEVNULL
        )
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty.tex"
        empty.write_text("\\documentclass{article}\\begin{document}\\end{document}\n")
        pandoc_startup = median_seconds(lambda: run([pandoc, "-f", "latex", "-t", "json", str(empty)], ROOT), 5)
    startup_s = median_seconds(lambda: run([python, manage, "extract_paper", "--help"], ROOT), options.repeats)
    baseline_startup_s = (
        median_seconds(
            lambda: run([python, str(baseline / "manage.py"), "extract_paper", "--help"], baseline), options.repeats
        )
        if baseline
        else None
    )
    python_s = median_seconds(lambda: run([python, "-c", "pass"], ROOT), options.repeats)

    papers = []
    for path in PAPERS:
        extract_paper(path)  # warm: the first call builds pylatexenc's tables once per process
        ours_in = median_seconds(lambda path=path: extract_paper(path), options.repeats)
        status = run([pandoc, "-f", "latex", "-t", "json", path.name], path.parent)
        actions: dict[str, Callable[[], object]] = {
            "ours": lambda path=path: run([python, manage, "extract_paper", str(path), "--json"], ROOT),
            "pandoc": lambda path=path: run([pandoc, "-f", "latex", "-t", "json", path.name], path.parent),
        }
        if baseline:
            actions["baseline"] = lambda path=path: run(
                [python, str(baseline / "manage.py"), "extract_paper", str(path), "--json"], baseline
            )
        medians = interleaved_medians(actions, options.repeats)
        ours_cmd, pandoc_cmd = medians["ours"], medians["pandoc"]
        pandoc_in = max(pandoc_cmd - pandoc_startup, 1e-4)
        papers.append(
            {
                "paper": str(path.relative_to(ROOT)),
                "bytes": path.stat().st_size,
                "tables": len(extract_paper(path).tables),
                "pandoc_ok": status == 0,
                "ours_in_process_s": round(ours_in, 4),
                "pandoc_conversion_s": round(pandoc_in, 4),
                "ratio_in_process": round(ours_in / pandoc_in, 3),
                "ours_command_s": round(ours_cmd, 4),
                "pandoc_command_s": round(pandoc_cmd, 4),
                "ratio_command": round(ours_cmd / pandoc_cmd, 3),
                **(
                    {
                        "baseline_command_s": round(medians["baseline"], 4),
                        "baseline_ratio_command": round(medians["baseline"] / pandoc_cmd, 3),
                    }
                    if baseline
                    else {}
                ),
            }
        )

    def total(key: str) -> float:
        return sum(paper[key] for paper in papers)

    print(
        json.dumps(
            {
                "pandoc": version,
                "repeats": options.repeats,
                "papers": len(papers),
                "pandoc_startup_s": round(pandoc_startup, 4),
                "python_startup_s": round(python_s, 4),
                "command_startup_s": round(startup_s, 4),
                **(
                    {"baseline": str(baseline), "baseline_command_startup_s": round(baseline_startup_s, 4)}
                    if baseline and baseline_startup_s is not None
                    else {}
                ),
                "total": {
                    "ours_in_process_s": round(total("ours_in_process_s"), 4),
                    "pandoc_conversion_s": round(total("pandoc_conversion_s"), 4),
                    "ratio_in_process": round(total("ours_in_process_s") / total("pandoc_conversion_s"), 3),
                    "ours_command_s": round(total("ours_command_s"), 4),
                    "pandoc_command_s": round(total("pandoc_command_s"), 4),
                    "ratio_command": round(total("ours_command_s") / total("pandoc_command_s"), 3),
                    **(
                        {
                            "baseline_command_s": round(total("baseline_command_s"), 4),
                            "baseline_ratio_command": round(total("baseline_command_s") / total("pandoc_command_s"), 3),
                        }
                        if baseline
                        else {}
                    ),
                },
                "targets": {"ratio_in_process": 1.0, "ratio_command": 1.5},
                "by_paper": papers,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
