"""Helpers for the ingestion tests: fixture paper paths, archives built on the fly, and row counts."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from curation.models import Context, Paper, Paragraph, Table

FIXTURES = Path(__file__).parents[1] / "latex" / "fixtures"

# A paper of one table and no body text: no paragraph to cite it, so no short context.
TABLES_ONLY = r"""\documentclass{article}
\title{Tables Only}
\begin{document}
\begin{table}
\caption{Accuracy.}\label{tab:acc}
\begin{tabular}{lr}
Model & Acc \\
A & 71.0 \\
B & 65.5 \\
\end{tabular}
\end{table}
\end{document}
"""

PAPER = r"""\documentclass{article}
\newcommand{\tabref}[1]{Table~\ref{#1}}
\title{Packed Paper}
\begin{document}
\section{Results}
Our model wins, see \tabref{tab:main}.

A paragraph without tables.

\Cref{tab:main,tab:other} compare the two settings.
\begin{table}
\caption{Main results.}\label{tab:main}
\begin{tabular}{lcc}
\toprule
\multirow{2}{*}{Model} & \multicolumn{2}{c}{Accuracy} \\
 & Dev & Test \\
\midrule
Ours & \textbf{87.3} & 86.0 \\
\bottomrule
\end{tabular}
\end{table}
\begin{table}
\caption{Other.}\label{tab:other}
\begin{tabular}{cc} a & b \\ 1 & 2 \\ \end{tabular}
\end{table}
\end{document}
"""


def tar_gz(path: Path, files: dict[str, bytes | str]) -> Path:
    """Write a .tar.gz with the given members (str contents are UTF-8 encoded)."""
    with tarfile.open(path, "w:gz") as archive:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def row_counts() -> dict[str, int]:
    """Rows of every table ingestion writes, to show that a refused input wrote nothing."""
    return {
        "papers": Paper.objects.count(),
        "tables": Table.objects.count(),
        "paragraphs": Paragraph.objects.count(),
        "contexts": Context.objects.count(),
        "links": Paragraph.mentioned_tables.through.objects.count(),
        "context_tables": Context.tables.through.objects.count(),
    }


def run_pending_ingestions() -> list:
    """Do a worker's part in this process: read every waiting ingestion job (through the real bounded child) and
    store it. The worker tests (test_ingest_worker.py) do the same through a real Celery worker."""
    from curation.papers.ingestion import INGEST_JOBS
    from curation.papers.models import IngestJob

    return [
        INGEST_JOBS.run(pk, worker="test")
        for pk in IngestJob.objects.filter(state="pending").values_list("pk", flat=True)
    ]
