"""URL map: pages, the REST API under /api/, the OpenAPI schema and docs, /healthz, admin."""

from __future__ import annotations

from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotate.agreement import urls as urls_agreement
from annotate.batches import urls as urls_batches
from annotate.dashboard import urls as urls_dashboard
from annotate.instances import urls as urls_instances
from annotate.qualification import urls as qualification_urls
from annotate.quality import urls as urls_quality
from annotate.review import urls as urls_review
from annotate.work import urls as urls_work
from curation import api, views
from curation.drafting import urls as drafting_urls
from curation.exchange import urls as exchange_urls
from curation.health import healthz
from curation.members import urls as member_urls
from curation.papers import urls as ingest_urls
from curation.releases import urls as release_urls
from curation.webhooks import urls as webhook_urls
from scoring.health import sandbox_health
from scoring.runs import urls as scoring_urls

api_patterns = [
    path("auth/token/", api.TokenObtainApi.as_view(), name="api-token"),
    path("projects/", api.ProjectListApi.as_view(), name="api-projects"),
    path("projects/<slug:slug>/", api.ProjectDetailApi.as_view(), name="api-project"),
    path("projects/<slug:slug>/members/", api.MembershipListApi.as_view(), name="api-members"),
    path("projects/<slug:slug>/reasoning-types/", api.ReasoningTypeListApi.as_view(), name="api-reasoning-types"),
    path(
        "projects/<slug:slug>/reasoning-types/<slug:code>/",
        api.ReasoningTypeDetailApi.as_view(),
        name="api-reasoning-type",
    ),
    path("batches/", api.BatchListApi.as_view(), name="api-batches"),
    path("batches/<int:pk>/open/", api.BatchOpenApi.as_view(), name="api-batch-open"),
    path("papers/", api.PaperListApi.as_view(), name="api-papers"),
    path("papers/<int:pk>/", api.PaperDetailApi.as_view(), name="api-paper"),
    path("instances/", api.InstanceListApi.as_view(), name="api-instances"),
    path("instances/<int:pk>/", api.InstanceDetailApi.as_view(), name="api-instance"),
    path("instances/<int:pk>/transition/", api.InstanceTransitionApi.as_view(), name="api-instance-transition"),
    path("instances/<int:pk>/history/", api.InstanceHistoryApi.as_view(), name="api-instance-history"),
    path("", include(member_urls.api_patterns)),
    path("", include(exchange_urls.api_patterns)),
    path("", include(release_urls.api_patterns)),
    path("", include(webhook_urls.api_patterns)),
    path("", include(ingest_urls.api_patterns)),
    path("", include(drafting_urls.api_patterns)),
    path("", include(urls_work.api_patterns)),
    path("", include(urls_instances.api_patterns)),
    path("", include(urls_review.api_patterns)),
    path("", include(urls_batches.api_patterns)),
    path("", include(urls_quality.api_patterns)),
    path("", include(urls_agreement.api_patterns)),
    path("", include(urls_dashboard.api_patterns)),
    path("", include(qualification_urls.api_patterns)),
    path("", include(scoring_urls.api_patterns)),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # GET only: DRF's OPTIONS metadata has no template to render for the docs page.
    path(
        "docs/",
        # Swagger UI's script (served from here, never inline) inserts its own <style> elements.
        csp_update({"style-src": ["'unsafe-inline'"]})(
            SpectacularSwaggerSplitView.as_view(url_name="api-schema", http_method_names=["get", "head"])
        ),
        name="api-docs",
    ),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Anyone logged in changes their own password here (an account a manager made starts with a generated one).
    path("password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("p/<slug:slug>/", views.project_overview, name="project"),
    path("instances/<int:pk>/history/", views.instance_history, name="instance-history"),
    path("", include(member_urls.page_patterns)),
    path("", include(exchange_urls.page_patterns)),
    path("", include(release_urls.page_patterns)),
    path("", include(webhook_urls.page_patterns)),
    path("", include(ingest_urls.page_patterns)),
    path("", include(drafting_urls.page_patterns)),
    path("", include(urls_work.page_patterns)),
    path("", include(urls_instances.page_patterns)),
    path("", include(urls_review.page_patterns)),
    path("", include(urls_batches.page_patterns)),
    path("", include(urls_quality.page_patterns)),
    path("", include(urls_agreement.page_patterns)),
    path("", include(urls_dashboard.page_patterns)),
    path("", include(qualification_urls.page_patterns)),
    path("", include(scoring_urls.page_patterns)),
    path("healthz", healthz, {"checks": {"sandbox": sandbox_health}}, name="healthz"),
    path("api/", include(api_patterns)),
    path("admin/", admin.site.urls),
]

handler400 = "curation.views.bad_request"
handler403 = "curation.views.forbidden"
handler404 = "curation.views.not_found"
handler500 = "curation.views.server_error"
