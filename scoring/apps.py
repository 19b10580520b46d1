from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Scoring"

    def ready(self) -> None:
        from curation.jobs import job_kinds_register

        job_kinds_register("scoring.runs.chunks.SCORING_CHUNKS", "scoring.calibration.CALIBRATIONS")

        from curation.drafting.duplicates import question_embedder_register
        from scoring.metrics import sentence_embedding

        # Drafting rejects near-duplicate questions by this model's cosine (the core imports nothing of scoring).
        if sentence_embedding.is_available():
            question_embedder_register(sentence_embedding.sentence_embedding, name=sentence_embedding.NAME)
