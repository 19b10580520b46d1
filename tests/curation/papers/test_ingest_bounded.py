"""The bounded child that reads untrusted sources (issue 19.3): a normal paper comes back whole, and every hostile
input is contained (refused with its reason, or stopped at a CPU-time, memory or wall-time limit). No database: the
same child runs under the worker (test_ingest_worker.py) and the `ingest_papers` command."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from curation.latex import ArchiveLimits, extract_paper
from curation.latex.sources import MAX_FILE_BYTES
from curation.papers.bounded import IngestLimits, LimitExceeded, size_words, sources_read_bounded
from tests.curation.papers import hostile_sources as hostile
from tests.curation.papers.ingest_helpers import FIXTURES, PAPER, tar_gz

ARCHIVE = ArchiveLimits(max_uncompressed_bytes=32 * 1024 * 1024, max_members=2000, max_ratio=100.0)
LIMITS = IngestLimits(cpu_s=3, wall_s=60, memory_bytes=384 * 1024 * 1024, archive=ARCHIVE)


def read_one(path, limits: IngestLimits = LIMITS, **options):
    (answer,) = sources_read_bounded(files=[(path, path.name)], limits=limits, **options)
    return answer


def test_a_normal_paper_comes_back_as_the_extraction_the_parent_would_have_made(tmp_path):
    archive = tar_gz(tmp_path / "2401.01234.tar.gz", {"src/main.tex": PAPER})
    heard: list[dict] = []
    answer = read_one(archive, progress=heard.append)
    assert answer["source_name"] == "2401.01234.tar.gz" and len(answer["sha256"]) == 64
    extraction = answer["extraction"]
    assert extraction == asdict(extract_paper(archive))
    assert [len(extraction["tables"]), extraction["title"]] == [2, "Packed Paper"]
    assert [report["stage"] for report in heard] == ["unpacking", "extracting", "extracted"]
    assert heard[1]["members"] == 1 and heard[-1] | {"tables": 2, "files_done": 1} == heard[-1]


def test_a_source_folder_is_read_whole(tmp_path):
    answer = read_one(FIXTURES / "multifile")
    assert answer["extraction"]["tables"] and "refused" not in answer


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (hostile.traversal, "path traversal"),
        (hostile.symlink, "is a link"),
        (hostile.hard_link, "is a link"),
        (hostile.device, "device or FIFO"),
        (hostile.many_tiny_files, "more than 2000 members"),
        (hostile.tar_bomb, "archive expands to more than 33554432 bytes"),
    ],
    ids=["traversal", "symlink", "hard-link", "device", "3000-tiny-files", "tar-bomb"],
)
def test_a_hostile_archive_is_refused_with_its_reason_and_nothing_outside_is_written(tmp_path, build, reason):
    answer = read_one(build(tmp_path / "hostile.tar.gz"))
    assert "extraction" not in answer
    assert answer["refused"].startswith("archive rejected") and reason in answer["refused"]
    assert not (tmp_path.parent / "outside.tex").exists()


@pytest.mark.parametrize(
    ("build", "warning"),
    [
        (hostile.input_cycle, "cycle"),
        (hostile.recursive_macro, "expands to itself"),
    ],
    ids=["input-cycle", "recursive-macro"],
)
def test_latex_that_would_recurse_is_read_with_a_warning(tmp_path, build, warning):
    answer = read_one(build(tmp_path / "main.tex"))
    assert any(warning in text for text in answer["extraction"]["warnings"])
    assert len(answer["extraction"]["tables"]) == 2


def test_latex_that_makes_the_extractor_loop_is_stopped_at_the_cpu_limit(tmp_path):
    ticks: list[int] = []
    with pytest.raises(LimitExceeded) as stopped:
        read_one(hostile.doubling_macros(tmp_path / "main.tex"), tick=lambda: ticks.append(1), tick_s=0.5)
    assert stopped.value.limit == "cpu"
    assert stopped.value.message == "main.tex: extraction used more than 3 s of CPU time"
    assert ticks  # the caller's heartbeat ran while the child worked


def test_latex_that_allocates_without_bound_is_stopped_at_the_memory_limit(tmp_path):
    limits = IngestLimits(cpu_s=120, wall_s=300, memory_bytes=256 * 1024 * 1024, archive=ARCHIVE)
    with pytest.raises(LimitExceeded) as stopped:
        read_one(hostile.memory_bomb(tmp_path / "main.tex"), limits)
    assert stopped.value.limit == "memory"
    assert stopped.value.message == "main.tex: memory limit 256 MiB exceeded"


def test_a_child_past_its_wall_time_is_killed(tmp_path):
    limits = IngestLimits(cpu_s=120, wall_s=1, memory_bytes=512 * 1024 * 1024, archive=ARCHIVE)
    with pytest.raises(LimitExceeded) as stopped:
        read_one(hostile.doubling_macros(tmp_path / "main.tex"), limits)
    assert (stopped.value.limit, stopped.value.message) == (
        "wall",
        "main.tex: extraction took longer than 1 s (wall-time limit)",
    )


def test_an_oversized_tex_is_refused_through_the_child_never_cut(tmp_path):
    path = tmp_path / "big.tex"
    path.write_bytes(PAPER.encode() + b"%" * (MAX_FILE_BYTES + 10 - len(PAPER)))
    archive = ArchiveLimits(max_compressed_bytes=64 * 1024 * 1024, max_uncompressed_bytes=64 * 1024 * 1024)
    answer = read_one(path, IngestLimits(cpu_s=30, wall_s=120, memory_bytes=512 * 1024 * 1024, archive=archive))
    assert "refused rather than read cut short" in answer["refused"] and "extraction" not in answer


def test_one_refused_file_does_not_hide_the_others(tmp_path):
    good = tmp_path / "good.tex"
    good.write_text(PAPER)
    answers = sources_read_bounded(
        files=[(good, "good.tex"), (hostile.symlink(tmp_path / "bad.tar.gz"), "bad.tar.gz")], limits=LIMITS
    )
    assert ["extraction" in answers[0], "refused" in answers[1]] == [True, True]


def test_sizes_read_as_a_person_says_them():
    assert [size_words(1024**3), size_words(200 * 1024**2), size_words(512)] == ["1 GiB", "200 MiB", "512 bytes"]
