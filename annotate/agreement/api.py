"""API of double annotation: the second annotator's copy (their own only), the verifier's side-by-side and keep/merge
decision, and the managers' settings and agreement figures."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.agreement import selectors as agreement_selectors
from annotate.agreement import services as agreement_services
from curation import selectors
from curation.api_inputs import valid_input
from curation.serializers import ParagraphSerializer, TableSerializer

CHOICES = ("first", "second")


class CopyFieldsSerializer(serializers.Serializer):
    """The copy's editable fields (every one optional: an edit sends what changed)."""

    question = serializers.CharField(required=False, allow_blank=True, max_length=10_000)
    rationale = serializers.CharField(required=False, allow_blank=True, max_length=20_000)
    answer = serializers.ListField(
        child=serializers.CharField(allow_blank=True, max_length=2000), max_length=30, required=False
    )
    answer_form = serializers.CharField(required=False, allow_blank=True, max_length=10)
    answer_source = serializers.CharField(required=False, allow_blank=True, max_length=12)
    answer_type = serializers.CharField(required=False, allow_blank=True, max_length=20)
    scale = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=20)
    reasoning_type_id = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2**63 - 1)
    relevant_table_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1), max_length=200, required=False
    )


class CopyOutputSerializer(serializers.Serializer):
    item = serializers.IntegerField(source="copy.pk")
    state = serializers.CharField(source="copy.state")
    question = serializers.CharField(source="copy.question")
    rationale = serializers.CharField(source="copy.rationale")
    answer = serializers.ListField(child=serializers.CharField(), source="copy.answer")
    answer_form = serializers.CharField(source="copy.answer_form")
    answer_source = serializers.CharField(source="copy.answer_source")
    answer_type = serializers.CharField(source="copy.answer_type")
    scale = serializers.CharField(source="copy.scale")
    reasoning_type_id = serializers.IntegerField(source="copy.reasoning_type_id", allow_null=True)
    relevant_table_ids = serializers.ListField(child=serializers.IntegerField(), source="copy.relevant_table_ids")
    lease_expires_at = serializers.DateTimeField(source="copy.lease_expires_at")
    paper_title = serializers.CharField()
    paragraphs = ParagraphSerializer(many=True)
    tables = TableSerializer(many=True)


class CopyApi(APIView):
    @extend_schema(responses=CopyOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """The second copy you hold: the context and your fields (started from the draft, never from the other
        annotator's work)."""
        return Response(CopyOutputSerializer(agreement_selectors.copy_shown(user=request.user, copy_id=pk)).data)

    @extend_schema(request=CopyFieldsSerializer, responses=CopyOutputSerializer)
    def patch(self, request: Request, pk: int) -> Response:
        """Save an edit of your copy (renews its lease)."""
        payload = valid_input(CopyFieldsSerializer, request.data)
        agreement_services.copy_save(copy_id=pk, user=request.user, fields=dict(payload))
        return Response(CopyOutputSerializer(agreement_selectors.copy_shown(user=request.user, copy_id=pk)).data)


class CopySubmitApi(APIView):
    class CopySubmitOutputSerializer(serializers.Serializer):
        item = serializers.IntegerField(source="pk")
        state = serializers.CharField()
        submitted_at = serializers.DateTimeField()

    @extend_schema(request=CopyFieldsSerializer, responses=CopySubmitOutputSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Hand in your copy (with any last edit); it must be complete, as a submitted instance must."""
        payload = valid_input(CopyFieldsSerializer, request.data)
        copy = agreement_services.copy_submit(copy_id=pk, user=request.user, fields=dict(payload))
        return Response(self.CopySubmitOutputSerializer(copy).data)


class DoubleRowSerializer(serializers.Serializer):
    field = serializers.CharField()
    label = serializers.CharField()
    first = serializers.CharField()
    second = serializers.CharField()
    is_same = serializers.BooleanField()
    chosen = serializers.CharField(help_text="first or second once decided; empty before")


class DoubleOutputSerializer(serializers.Serializer):
    instance = serializers.IntegerField(source="double.instance_id")
    state = serializers.CharField(source="double.state")
    decision = serializers.CharField(source="double.decision")
    first_annotator = serializers.CharField(source="first_annotator.username", allow_null=True)
    second_annotator = serializers.CharField(source="second_annotator.username", allow_null=True, default=None)
    is_ready = serializers.BooleanField(help_text="Both versions are in")
    rows = DoubleRowSerializer(many=True)


class DoubleApi(APIView):
    @extend_schema(responses=DoubleOutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """Both versions of a double-annotated instance, field by field (its verifiers and managers)."""
        instance = selectors.instance_get(user=request.user, instance_id=pk)
        return Response(
            DoubleOutputSerializer(agreement_selectors.double_shown(user=request.user, instance=instance)).data
        )


class DoubleDecideApi(APIView):
    class DecideInputSerializer(serializers.Serializer):
        expected_version = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
        keep = serializers.ChoiceField(
            choices=[*CHOICES, "merge"], help_text="first, second, or merge (then `fields` says which per field)"
        )
        fields = serializers.DictField(
            child=serializers.ChoiceField(choices=CHOICES),
            required=False,
            help_text="For merge: field → first | second; fields left out keep the first version",
        )

        def validate(self, attrs: dict) -> dict:
            if attrs["keep"] == "merge" and not attrs.get("fields"):
                raise serializers.ValidationError({"fields": "Say which version each field keeps."})
            return attrs

    class DecideOutputSerializer(serializers.Serializer):
        instance = serializers.IntegerField(source="instance_id")
        decision = serializers.CharField()
        decision_fields = serializers.DictField(child=serializers.CharField())

    @extend_schema(request=DecideInputSerializer, responses=DecideOutputSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Keep the first version, the second, or merge field by field (the round-one verifier holding the review);
        then approve or request changes as usual."""
        payload = valid_input(self.DecideInputSerializer, request.data)
        double = agreement_services.double_decide(
            instance_id=pk,
            user=request.user,
            expected_version=payload["expected_version"],
            choices=decide_choices(payload["keep"], payload.get("fields") or {}),
        )
        return Response(self.DecideOutputSerializer(double).data)


def decide_choices(keep: str, fields: dict[str, str]) -> dict[str, str]:
    """keep first/second → every field from that version; merge → the given fields, the rest from the first."""
    if keep in CHOICES:
        return dict.fromkeys(agreement_services.CHOSEN_FIELDS, keep)
    return {**dict.fromkeys(agreement_services.CHOSEN_FIELDS, "first"), **fields}


class AgreementSettingsSerializer(serializers.Serializer):
    double_fraction = serializers.FloatField(
        min_value=0,
        max_value=1,
        required=False,
        label=agreement_services.DOUBLE_FRACTION_LABEL,
        help_text="Share of drafts refined twice, 0–1 (0: off)",
    )
    seed = serializers.IntegerField(min_value=0, max_value=agreement_services.MAX_SEED, required=False)


class AgreementSettingsApi(APIView):
    @extend_schema(responses=AgreementSettingsSerializer)
    def get(self, request: Request, slug: str) -> Response:
        """The project's double-annotation settings (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        settings = agreement_selectors.agreement_settings_shown(user=request.user, project=project)
        return Response(AgreementSettingsSerializer(settings).data)

    @extend_schema(request=AgreementSettingsSerializer, responses=AgreementSettingsSerializer)
    def patch(self, request: Request, slug: str) -> Response:
        """Change the share of drafts refined twice and the seed of the selection (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(AgreementSettingsSerializer, request.data)
        settings = agreement_services.agreement_configure(project=project, actor=request.user, **payload)
        return Response(AgreementSettingsSerializer(settings).data)


class AgreementRowSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Instances with both versions in")
    raters = serializers.IntegerField(help_text="Annotators who took part")
    answer_em = serializers.FloatField(allow_null=True, help_text="Mean TAT-QA exact match of the two answers")
    answer_f1 = serializers.FloatField(allow_null=True, help_text="Mean TAT-QA F1 of the two answers")
    answer_form_kappa = serializers.FloatField(allow_null=True, help_text="Cohen's κ; null when undefined")
    answer_source_kappa = serializers.FloatField(allow_null=True)
    reasoning_type_kappa = serializers.FloatField(allow_null=True)
    relevant_tables_jaccard = serializers.FloatField(allow_null=True, help_text="Mean Jaccard of the table sets")
    answer_form_alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's α (nominal), all raters")
    answer_source_alpha = serializers.FloatField(allow_null=True)
    reasoning_type_alpha = serializers.FloatField(allow_null=True)


class BatchAgreementSerializer(AgreementRowSerializer):
    batch_id = serializers.IntegerField(allow_null=True)
    batch = serializers.CharField()


class PairAgreementSerializer(AgreementRowSerializer):
    annotators = serializers.ListField(child=serializers.CharField())
    pair = serializers.CharField()


class AgreementFiguresSerializer(serializers.Serializer):
    overall = AgreementRowSerializer()
    batches = BatchAgreementSerializer(many=True)
    pairs = PairAgreementSerializer(many=True)
    open_copies = serializers.IntegerField(help_text="Second copies not yet handed in")
    decided = serializers.IntegerField(help_text="Pairs a verifier has kept one of (or merged)")


class AgreementFiguresApi(APIView):
    @extend_schema(responses=AgreementFiguresSerializer)
    def get(self, request: Request, slug: str) -> Response:
        """Agreement between annotators per field, overall, per batch and per annotator pair, with counts
        (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        figures = agreement_selectors.agreement_figures(user=request.user, project=project)
        return Response(AgreementFiguresSerializer(figures).data)
