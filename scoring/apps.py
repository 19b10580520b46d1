from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Scoring"

    def ready(self) -> None:
        from curation.jobs import reaper_register

        reaper_register(
            kind="scoring chunks",
            path="scoring.runs.reaper.runs_reap",
            worker_path="scoring.runs.reaper.runs_resume_for_worker",
        )

        from curation.drafting.duplicates import question_embedder_register
        from scoring.metrics import sentence_embedding

        # Drafting rejects near-duplicate questions by this model's cosine (the core imports nothing of scoring).
        if sentence_embedding.is_available():
            question_embedder_register(sentence_embedding.sentence_embedding, name=sentence_embedding.NAME)
