"""benchmarks/scale.py: the sizes measured side by side in time, and every figure the issue names held to its target."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from tests.conftest import postgres_only

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "scale.py"


def scale():
    spec = importlib.util.spec_from_file_location("scale", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_side_by_side_alternates_the_sizes_sample_by_sample_after_a_warm_up_at_each():
    calls: list[tuple[int, str]] = []

    def at(size: int):
        def sample(name: str) -> dict:
            calls.append((size, name))
            return {"size": size, "n": len(calls)}

        return sample

    samples = scale().side_by_side(["a", "b"], {10: at(10), 100: at(100)}, rounds=lambda name: 3, warm_up=True)

    # a: warm-ups, then 10/100, 100/10, 10/100; then b the same way; never one size's samples in a row of three.
    order = [10, 100, 10, 100, 100, 10, 10, 100]
    assert calls == [(size, "a") for size in order] + [(size, "b") for size in order]
    assert [sample["n"] for sample in samples[10]["a"]] == [3, 6, 7]  # warm-ups are not samples
    assert [sample["n"] for sample in samples[100]["a"]] == [4, 5, 8]
    assert set(samples[10]) == set(samples[100]) == {"a", "b"}


def test_side_by_side_without_warm_up_gives_each_name_its_own_number_of_rounds():
    calls: list[tuple[int, str]] = []

    def at(size: int):
        return lambda name: calls.append((size, name)) or {"seconds": 1.0}

    rounds = {"export:csv": 3, "leases_reap": 1}
    samples = scale().side_by_side(list(rounds), {1: at(1), 2: at(2)}, rounds=rounds.get, warm_up=False)

    assert calls == [(1, "export:csv"), (2, "export:csv"), (2, "export:csv"), (1, "export:csv"), (1, "export:csv"),
                     (2, "export:csv"), (1, "leases_reap"), (2, "leases_reap")]  # fmt: skip
    assert len(samples[1]["export:csv"]) == 3 and len(samples[2]["leases_reap"]) == 1


def test_figures_of_samples_median_p95_paired_ratio_and_a_failed_job_run():
    module = scale()
    small = [{"status": 200, "ms": ms, "queries": 7} for ms in (10.0, 30.0, 20.0)]
    big = [{"status": 200, "ms": ms, "queries": 7} for ms in (12.0, 60.0, 20.0)]
    assert module.request_figures(small) == {"status": 200, "median_ms": 20.0, "p95_ms": 30.0, "queries": 7}
    assert module.paired_ratios(small, big) == 1.2  # median of 1.2, 2.0, 1.0
    runs = [{"seconds": 3.0, "peak_mb": 1}, {"seconds": 1.0, "peak_mb": 2}, {"seconds": 2.0, "peak_mb": 3}]
    assert module.job_figures(runs) == {"seconds": 2.0, "peak_mb": 3, "runs": 3}
    assert module.job_figures([runs[0], {"error": "boom"}]) == {"error": "boom"}


def test_a_short_job_s_growth_ratio_comes_from_its_seconds_not_from_them_rounded_to_10_ms():
    module = scale()
    small = {"jobs": {"export:parquet": module.job_result(seconds=0.0549, peak_mb=19.21, items=560)}}
    big = {"jobs": {"export:parquet": module.job_result(seconds=0.6012, peak_mb=27.53, items=5600)}}
    assert small["jobs"]["export:parquet"] == {"seconds": 0.0549, "peak_mb": 19.2, "items": 560}
    assert module.ratios(small, big)["jobs"]["export:parquet"]["seconds"] == 10.95  # rounded first: 0.6 / 0.05 = 12.0


def test_each_size_gets_its_own_redis_database():
    cache_url_of = scale().cache_url_of
    assert cache_url_of("redis://127.0.0.1:6379/3", 0) == "redis://127.0.0.1:6379/3"
    assert cache_url_of("redis://127.0.0.1:6379/3", 1) == "redis://127.0.0.1:6379/4"
    assert cache_url_of("redis://127.0.0.1:6379", 1) == "redis://127.0.0.1:6379/1"
    assert cache_url_of("", 1) == ""


def test_json_printed_reads_an_indented_object_after_other_output():
    printed = 'worker started\n{\n "claims": 4,\n "nested": {\n  "ratio": 0.9\n }\n}\n'
    assert scale()._json_printed(printed) == {"claims": 4, "nested": {"ratio": 0.9}}
    with pytest.raises(ValueError):
        scale()._json_printed("Traceback …\n")


def report(*, dashboard_ms: float, cut_memory: float | None, claim: dict, second_start: float | None) -> dict:
    small = {
        "requests": {"dashboard": {"median_ms": 100.0, "p95_ms": 120.0, "queries": 30}},
        "jobs": {"release_cut": {"seconds": 8.0, "peak_mb": 80.0}, "leases_reap": {"seconds": 1.0, "peak_mb": 1}},
    }
    big = {"requests": {"dashboard": {"median_ms": dashboard_ms, "p95_ms": 150.0, "queries": 32}},
           "jobs": {"release_cut": {"seconds": 80.0, "peak_mb": 80.0 * cut_memory} if cut_memory else {"error": "x"},
                    "leases_reap": {"seconds": 1.2, "peak_mb": 1}}}  # fmt: skip
    module = scale()
    result = {"sizes": {"10000": small, "100000": big}, "ratio_big_over_small": module.ratios(small, big)}
    result["hot_paths"] = {
        "claim": claim,
        "runs": {"scoring": {"ratio": 0.96}, "drafting": {"ratio": 0.9}},
        "start": {"second_start": {"first_page_s": second_start}},
    }
    return module.targets(result)


def test_targets_hold_at_their_bounds_and_not_past_them():
    claim = {"throughput_ratio": 0.95, "p95_ratio": 1.2, "double_assignments": 0}
    targets = report(dashboard_ms=130.0, cut_memory=1.5, claim=claim, second_start=30.0)

    assert targets["requests.dashboard.median_ms"] == {"value": 1.3, "target": "<= 1.3", "held": True}
    assert targets["requests.dashboard.queries"]["value"] == 1.07 and targets["requests.dashboard.queries"]["held"]
    assert targets["jobs.release_cut.seconds"] == {"value": 10.0, "target": "<= 11", "held": True}
    assert targets["jobs.release_cut.peak_mb"]["held"] and targets["jobs.leases_reap.seconds"]["held"]
    for name in ("claim.throughput_ratio", "claim.p95_ratio", "claim.double_assignments", "start.second_start_s",
                 "runs.scoring.ratio"):  # fmt: skip
        assert targets[name]["held"], name
    assert targets["runs.drafting.ratio"] == {"value": 0.9, "target": ">= 0.95", "held": False}


def test_a_figure_past_its_target_or_missing_does_not_hold():
    claim = {"throughput_ratio": 0.94, "p95_ratio": 1.21, "double_assignments": 1}
    targets = report(dashboard_ms=131.0, cut_memory=None, claim=claim, second_start=None)

    not_held = {name for name, entry in targets.items() if not entry["held"]}
    assert not_held == {"requests.dashboard.median_ms", "jobs.release_cut.seconds", "jobs.release_cut.peak_mb",
                        "claim.throughput_ratio", "claim.p95_ratio", "claim.double_assignments",
                        "runs.drafting.ratio", "start.second_start_s"}  # fmt: skip
    assert targets["jobs.release_cut.seconds"]["value"] is None  # the job errored at 100k


def test_a_hot_path_benchmark_without_output_fails_its_targets():
    module = scale()
    targets = module.targets({"hot_paths": {"claim": {"error": "port in use"}, "runs": {}, "start": {}}})
    assert set(targets) == {"claim.throughput_ratio", "claim.p95_ratio", "claim.double_assignments",
                            "runs.scoring.ratio", "runs.drafting.ratio", "start.second_start_s"}  # fmt: skip
    assert not any(entry["held"] for entry in targets.values())


@postgres_only()
@pytest.mark.django_db
def test_a_size_process_generates_its_project_and_answers_one_sample_per_request(monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)  # its own in-process cache: this worker's Redis stays as it is
    database = settings.DATABASES["default"]
    base_url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    module = scale()
    process = module.SizeProcess(400, base_url, "", keep=False, template=database["TEST"]["TEMPLATE"])
    try:
        assert process.ready["shape"]["instances"] == 400
        assert "dashboard" in process.ready["requests"] and "leases_reap" in process.ready["jobs"]
        assert process.ready["generated"]["seconds"] > 0
        sample = process.request("api_queue")
        assert sample["status"] == 200 and sample["queries"] > 0 and sample["ms"] > 0
        assert process.request("dashboard")["status"] == 200
        assert "returned" in process.job("leases_reap")  # a bulk job in a fresh child on the same database
    finally:
        process.close()
        with psycopg.connect(base_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{database["NAME"]}_scale_400" WITH (FORCE)')
    assert process.process.returncode == 0
