"""REST API of the manager's dashboard: its figures as JSON, one table as CSV, the pay rate."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.dashboard import figures as dashboard
from annotate.dashboard import services as pay_services
from annotate.dashboard.draft_costs import draft_costs_of
from annotate.review import selectors as review_selectors
from curation import selectors
from curation.api_inputs import valid_input
from curation.errors import InvalidInput
from curation.models import Project


class PaySettingsSerializer(serializers.Serializer):
    pay_per_instance = serializers.DecimalField(max_digits=8, decimal_places=2, min_value=0)
    currency = serializers.RegexField(
        r"^[A-Za-z]{3}$",
        required=False,
        default="USD",
        error_messages={"invalid": "The currency is a three-letter code such as USD."},
    )


class PeriodQuery(serializers.Serializer):
    """The pay period of the dashboard's figures (default: this month so far)."""

    start = serializers.DateField(required=False)
    end = serializers.DateField(required=False)


class DashboardQuery(PeriodQuery):
    batches_page = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text=f"Which page of batch rows ({dashboard.PROGRESS_PER_PAGE} a page, overdue first, as the page shows "
        "them); every batch at once: the batches CSV (`…/dashboard/csv/?table=batches`).",
    )


class PaySettingsApi(APIView):
    """Set the project's pay per validated instance and its currency (for the dashboard's pay). Managers only."""

    @extend_schema(request=PaySettingsSerializer, responses=PaySettingsSerializer)
    def post(self, request: Request, slug: str) -> Response:
        project = selectors.project_get(user=request.user, slug=slug)
        payload = valid_input(PaySettingsSerializer, request.data)
        record = pay_services.pay_settings_set(project=project, actor=request.user, **payload)
        return Response({"pay_per_instance": str(record.pay_per_instance), "currency": record.currency})


class DashboardApi(APIView):
    @extend_schema(parameters=[DashboardQuery], responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        """The manager's dashboard figures as JSON: the project's totals, one page of batch rows, the round-two
        instances nobody may review (`round2_stranded`: count, first ids, qualified annotators), throughput, people,
        time and pay."""
        project = selectors.project_get(user=request.user, slug=slug)
        dashboard.require_manager(user=request.user, project=project)  # before its query is read
        query = valid_input(DashboardQuery, request.query_params)
        wanted = query.pop("batches_page", None)
        data = dashboard.dashboard_data(user=request.user, project=project, **query)
        progress_page, progress = dashboard.batch_progress_page(project, wanted)
        if wanted is not None and wanted > progress_page.paginator.num_pages:
            raise InvalidInput(f"batches_page {wanted} is past the last page ({progress_page.paginator.num_pages}).")
        pay = data["pay"]
        return Response(
            {
                "totals": data["totals"],
                "batches": [
                    {k: b[k] for k in ("name", "state", "counts", "total", "settled", "validated", "is_complete")}
                    for b in progress
                ],
                "batches_page": {
                    "number": progress_page.number,
                    "pages": progress_page.paginator.num_pages,
                    "batches": progress_page.paginator.count,
                },
                "round2_stranded": review_selectors.round2_stranded(user=request.user, project=project),
                "throughput": data["throughput"],  # the JSON renderer writes dates as YYYY-MM-DD
                "annotators": data["annotators"],
                "verifiers": data["verifiers"],
                "time": data["time_people"],
                "pay": {  # amounts as exact decimal strings (the JSON renderer would write floats)
                    **pay,
                    "rate": str(pay["rate"]),
                    "total_amount": str(pay["total_amount"]),
                    "rows": [
                        {**r, "amount": str(r["amount"]), "hourly": None if r["hourly"] is None else str(r["hourly"])}
                        for r in pay["rows"]
                    ],
                },
            }
        )


class DashboardCsvApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("table", str, enum=list(dashboard.CSV_TABLES)), PeriodQuery],
        responses={(200, "text/csv"): str},
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        """One dashboard table as CSV."""
        project = selectors.project_get(user=request.user, slug=slug)
        table = request.query_params.get("table", "annotators")
        return csv_response(
            user=request.user, project=project, table=table, **valid_input(PeriodQuery, request.query_params)
        )


def csv_response(
    *, user: Any, project: Project, table: str, start: date | None = None, end: date | None = None
) -> HttpResponse:
    """One dashboard table as a CSV download, for the API and the page alike (managers only: `csv_rows`)."""
    rows = dashboard.csv_rows(user=user, project=project, table=table, start=start, end=end)
    response = HttpResponse(dashboard.to_csv(rows, table=table), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{table}.csv"'
    return response


# One field's and one group's figures: the shapes inside DraftCostsApi's answer.
class DraftFieldCostOutputSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Instances whose draft recorded this field")
    mean_distance = serializers.FloatField(
        allow_null=True, help_text="Mean edit distance normalised by the longer length (0 kept … 1 replaced)"
    )
    unchanged_share = serializers.FloatField(allow_null=True, help_text="Share submitted exactly as drafted")
    rewritten_share = serializers.FloatField(
        allow_null=True, help_text="Share whose normalised distance is above the threshold"
    )


class DraftGroupCostOutputSerializer(serializers.Serializer):
    group = serializers.CharField(help_text="The drafter, prompt version, endpoint or reasoning type")
    instances = serializers.IntegerField()
    timed = serializers.IntegerField(help_text="Instances with recorded refining time")
    median_seconds = serializers.FloatField(allow_null=True, help_text="Median active refining time")
    mean_seconds = serializers.FloatField(allow_null=True)
    fields = serializers.DictField(child=DraftFieldCostOutputSerializer(), help_text="Figures per field")


class DraftCostsApi(APIView):
    class DraftCostsOutputSerializer(serializers.Serializer):
        instances = serializers.IntegerField(help_text="Drafted instances submitted at least once")
        threshold = serializers.FloatField(help_text="Normalised distance above which a field counts as rewritten")
        fields = serializers.ListField(child=serializers.CharField())
        dimensions = serializers.DictField(
            child=DraftGroupCostOutputSerializer(many=True),
            help_text="drafter, prompt_version, endpoint, reasoning_type: one row per group",
        )

    @extend_schema(responses=DraftCostsOutputSerializer)
    def get(self, request: Request, slug: str) -> Response:
        """What the drafts cost: per field, how much annotators changed the drafts, by drafter, prompt version,
        model endpoint and reasoning type, with refining time (managers)."""
        project = selectors.project_get(user=request.user, slug=slug)
        figures = draft_costs_of(user=request.user, project=project)
        return Response(self.DraftCostsOutputSerializer(figures).data)
