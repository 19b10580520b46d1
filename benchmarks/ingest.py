"""Ingestion speed and memory on a generated corpus, beside extraction alone (prints one JSON object).

Generates N arXiv-style .tar.gz sources (macros, \\input files, 2–6 tables with \\multicolumn/\\multirow,
20–80 paragraphs that reference them), then measures, each in a fresh process so peak memory is its own:
  extraction — `extract_paper` on every archive, no database;
  ingest     — `paper_ingest` on every archive into a freshly migrated database (SQLite file by default).
Usage: python benchmarks/ingest.py [--papers 200] [--seed 0] [--postgres postgres://postgres@127.0.0.1:5432/test]
(--postgres: a server to create a fresh database `tatcurate_bench_ingest` on, instead of SQLite)
"""

from __future__ import annotations

import argparse
import io
import json
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = (
    "model table results accuracy baseline dataset improves shows compared method score average "
    "higher lower training evaluation reasoning numbers benchmark setting ablation performance"
).split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def table_source(rng: random.Random, index: int) -> str:
    columns = rng.randint(3, 6)
    rows = rng.randint(4, 14)
    groups = columns - 1
    header = (
        "\\multirow{2}{*}{\\textbf{Model}} & \\multicolumn{"
        + str(groups)
        + "}{c}{\\acc{} on \\dataset} \\\\\n\\cmidrule(lr){2-"
        + str(columns)
        + "}\n & "
        + " & ".join(f"Split {c}" for c in range(groups))
        + " \\\\\n\\midrule\n"
    )
    body = []
    for r in range(rows):
        if r % 4 == 0 and r + 1 < rows:
            first = f"\\multirow{{2}}{{*}}{{Family {r // 4}}}"
        elif r % 4 == 1:
            first = ""
        else:
            first = f"Model-{r}"
        cells = [f"\\best{{{rng.uniform(10, 99):.1f}}}" if c == 0 else f"{rng.uniform(10, 99):.1f}$\\pm$0.{c}"
                 for c in range(groups)]  # fmt: skip
        body.append(first + " & " + " & ".join(cells) + " \\\\")
    return (
        f"\\begin{{table}}[t]\n\\centering\n\\resizebox{{\\linewidth}}{{!}}{{%\n"
        f"\\begin{{tabular}}{{l{'c' * groups}}}\n\\toprule\n{header}"
        + "\n".join(body)
        + f"\n\\bottomrule\n\\end{{tabular}}}}\n\\caption{{Results {index} of \\ours{{}} (see \\tabref{{tab:t0}}).}}"
        f"\n\\label{{tab:t{index}}}\n\\end{{table}}\n"
    )


def paper_files(rng: random.Random, number: int) -> dict[str, str]:
    tables = rng.randint(2, 6)
    paragraphs = rng.randint(20, 80)
    sections = ["intro", "method", "results", "analysis"]
    text: dict[str, list[str]] = {name: [] for name in sections}
    for p in range(paragraphs):
        section = sections[min(p * len(sections) // paragraphs, len(sections) - 1)]
        parts = [sentence(rng, rng.randint(8, 20)) for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.45:
            first, second = rng.sample(range(tables), 2)
            style = rng.choice(
                [f"\\tabref{{tab:t{first}}}", f"Table~\\ref{{tab:t{first}}}", f"\\Cref{{tab:t{first},tab:t{second}}}"]
            )
            parts.insert(1, f"As {style} shows, \\ours{{}} beats the baseline \\cite{{ref{p}}}.")
        text[section].append(" ".join(parts))
    files = {}
    for t in range(tables):
        files[f"tables/t{t}.tex"] = table_source(rng, t)
    for s, name in enumerate(sections):
        body = f"\\section{{{name.capitalize()}}}\\label{{sec:{name}}}\n" + "\n\n".join(text[name]) + "\n"
        placed = [t for t in range(tables) if t % len(sections) == s]
        body += "".join(f"\n\\input{{tables/t{t}}}\n" for t in placed)
        files[f"sections/{name}.tex"] = body
    files["main.tex"] = (
        "\\documentclass{article}\n\\usepackage{booktabs,multirow,graphicx}\n"
        "\\newcommand{\\ours}{\\textsc{Tab}Net}\n\\newcommand{\\tabref}[1]{Table~\\ref{#1}}\n"
        "\\newcommand{\\best}[1]{\\textbf{#1}}\n\\def\\acc{Acc.}\n\\DeclareRobustCommand{\\dataset}{SciTaT}\n"
        f"\\title{{Generated paper {number} on \\dataset}}\n\\begin{{document}}\n\\maketitle\n"
        "% \\input{sections/draft} is a comment\n"
        + "".join(f"\\input{{sections/{name}}}\n" for name in sections)
        + "\\end{document}\n"
    )
    return files


def generate(folder: Path, papers: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    archives = []
    for number in range(papers):
        path = folder / f"2401.{number:05d}v1.tar.gz"
        with tarfile.open(path, "w:gz") as archive:
            for name, content in paper_files(rng, number).items():
                data = content.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        archives.append(path)
    return archives


def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_extract(corpus: Path) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    from curation.latex import extract_paper

    archives = sorted(corpus.glob("*.tar.gz"))
    baseline = peak_mb()
    started = time.perf_counter()
    tables = paragraphs = warnings = 0
    for path in archives:
        result = extract_paper(path)
        tables += len(result.tables)
        paragraphs += len(result.paragraphs)
        warnings += len(result.warnings)
    seconds = time.perf_counter() - started
    return {
        "papers": len(archives),
        "seconds": round(seconds, 3),
        "papers_per_second": round(len(archives) / seconds, 2),
        "peak_rss_mb": peak_mb(),
        "rss_before_mb": baseline,
        "tables": tables,
        "paragraphs": paragraphs,
        "warnings": warnings,
    }


def run_ingest(corpus: Path, database_url: str) -> dict[str, object]:
    from _django import setup_django

    setup_django(database_url)
    from curation.models import Context
    from curation.papers.services import paper_ingest
    from curation.services.projects import project_create

    project = project_create(name="Ingest benchmark", creator=None, slug="ingest-bench")
    archives = sorted(corpus.glob("*.tar.gz"))
    baseline = peak_mb()
    started = time.perf_counter()
    tables = paragraphs = 0
    statuses: dict[str, int] = {}
    for path in archives:
        result = paper_ingest(project=project, actor=None, path_or_upload=path)
        tables += result.tables
        paragraphs += result.paragraphs
        statuses[result.status] = statuses.get(result.status, 0) + 1
    seconds = time.perf_counter() - started
    return {
        "papers": len(archives),
        "seconds": round(seconds, 3),
        "papers_per_second": round(len(archives) / seconds, 2),
        "peak_rss_mb": peak_mb(),
        "rss_before_mb": baseline,
        "tables": tables,
        "paragraphs": paragraphs,
        "contexts": Context.objects.filter(project=project).count(),
        "statuses": statuses,
        "database": database_url.split(":", 1)[0],
    }


def measure(phase: str, corpus: Path, database_url: str) -> dict[str, object]:
    command = [sys.executable, __file__, "--phase", phase, "--corpus", str(corpus), "--database-url", database_url]
    output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(output.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--postgres", default="", help="server URL; the benchmark uses a fresh database on it")
    parser.add_argument("--database-url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--phase", choices=["extract", "ingest"], help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "extract":
        print(json.dumps(run_extract(Path(args.corpus))))
        return
    if args.phase == "ingest":
        print(json.dumps(run_ingest(Path(args.corpus), args.database_url)))
        return
    with tempfile.TemporaryDirectory(prefix="tat-ingest-bench-") as folder:
        corpus = Path(folder) / "corpus"
        corpus.mkdir()
        archives = generate(corpus, args.papers, args.seed)
        database_url = f"sqlite:///{folder}/bench.sqlite3"
        if args.postgres:
            from _django import fresh_postgres_database

            database_url = fresh_postgres_database(args.postgres, "tatcurate_bench_ingest")
        extraction = measure("extract", corpus, database_url)
        ingest = measure("ingest", corpus, database_url)
        corpus_bytes = sum(path.stat().st_size for path in archives)
    print(
        json.dumps(
            {
                "benchmark": "ingest",
                "papers": args.papers,
                "seed": args.seed,
                "corpus_mb": round(corpus_bytes / 1024 / 1024, 2),
                "papers_per_second": ingest["papers_per_second"],
                "peak_memory_mb": ingest["peak_rss_mb"],
                "extraction_papers_per_second": extraction["papers_per_second"],
                "extraction_peak_memory_mb": extraction["peak_rss_mb"],
                "ingest": ingest,
                "extraction": extraction,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
