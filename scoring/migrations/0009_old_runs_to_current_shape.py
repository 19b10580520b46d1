"""Runs stored before their predictions named the release's format, or before their results held answerability,
brought to today's shape, so the code reads only that shape.

Each field is filled in exactly as the pages worked it out when reading such a run:
- `Prediction.metrics["source_format"]` of a run none of whose predictions names one: "tatqa" when any prediction has
  TAT-QA EM, else "finqa" when any has FinQA execution accuracy, else "scitat"; on its answerable predictions, the
  ones today's scoring names it on.
- `ScoringRun.results["answerability"]` of results summarised before it was recorded: those runs held answerable
  questions only, so every question is answerable and their accuracy is the run's accuracy.

(Results stored before they held `correct` got it in 0006.) A run already in today's shape is left as it is, so the
migration can run again; the reverse leaves the filled-in fields, which older code reads as it reads new runs.
"""

from django.db import migrations


def _format_by_figures(metrics: list[dict]) -> str:
    if any(m.get("tatqa_em") is not None for m in metrics):
        return "tatqa"
    return "finqa" if any(m.get("finqa_execution") is not None for m in metrics) else "scitat"


def old_runs_fill(apps, schema_editor):
    ScoringRun = apps.get_model("scoring", "ScoringRun")
    Prediction = apps.get_model("scoring", "Prediction")
    for run in ScoringRun.objects.only("pk", "results").iterator(chunk_size=100):
        predictions = list(Prediction.objects.filter(run_id=run.pk).only("pk", "metrics"))
        metrics = [prediction.metrics or {} for prediction in predictions]
        if not any(m.get("source_format") for m in metrics):
            source_format = _format_by_figures(metrics)
            named = []
            for prediction, figures in zip(predictions, metrics, strict=True):
                if figures.get("is_answerable") is not False:
                    prediction.metrics = {**figures, "source_format": source_format}
                    named.append(prediction)
            Prediction.objects.bulk_update(named, ["metrics"], batch_size=500)
        results = run.results or {}
        if results and "answerability" not in results:
            results["answerability"] = {
                "answerable": {"count": results.get("count", len(predictions)), "accuracy": results.get("accuracy")},
                "unanswerable": {"count": 0, "accuracy": None},
                "abstained_on_answerable": sum(
                    1 for m in metrics if m.get("is_answerable") is not False and m.get("abstained")
                ),
            }
            ScoringRun.objects.filter(pk=run.pk).update(results=results)


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0008_drop_scoring_template"),
    ]

    operations = [
        migrations.RunPython(old_runs_fill, migrations.RunPython.noop),
    ]
