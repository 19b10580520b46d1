"""URL map: pages, the REST API under /api/, the OpenAPI schema and docs, /healthz, admin."""

from __future__ import annotations

from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from django.utils.module_loading import import_string
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.compat import pygments_css
from rest_framework.renderers import BrowsableAPIRenderer

from curation import api, views
from curation.health import healthz
from scoring.health import sandbox_health

# Every app's URLs, in match order: each module has `page_patterns` and `api_patterns` (under /api/).
APP_URLS = (
    "curation.members.urls",
    "curation.exchange.urls",
    "curation.releases.urls",
    "curation.webhooks.urls",
    "curation.papers.urls",
    "curation.drafting.urls",
    "annotate.work.urls",
    "annotate.instances.urls",
    "annotate.review.urls",
    "annotate.batches.urls",
    "annotate.quality.urls",
    "annotate.agreement.urls",
    "annotate.dashboard.urls",
    "annotate.qualification.urls",
    "scoring.runs.urls",
)


def _api_code_style(request: HttpRequest) -> HttpResponse:
    """The browsable API's code colours as a style sheet (templates/rest_framework/api.html): DRF writes them in an
    inline <style>, which the site's policy blocks, and a nonce would not survive its forms rewriting the page."""
    return HttpResponse(pygments_css(BrowsableAPIRenderer.code_style) or "", content_type="text/css")


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
    *(path("", include(import_string(f"{urls}.api_patterns"))) for urls in APP_URLS),
    path("", RedirectView.as_view(pattern_name="api-docs"), name="api-root"),
    path("code-style.css", _api_code_style, name="api-code-style"),
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
    *(path("", include(import_string(f"{urls}.page_patterns"))) for urls in APP_URLS),
    path("healthz", healthz, {"checks": {"sandbox": sandbox_health}}, name="healthz"),
    # For pages without a <link rel="icon">; the static address is read per request (a hashed one needs the manifest).
    path("favicon.ico", lambda request: redirect(static("favicon.svg"), permanent=True)),
    path("api/", include(api_patterns)),
    path("admin/", admin.site.urls),
]

handler400 = "curation.views.bad_request"
handler403 = "curation.views.forbidden"
handler404 = "curation.views.not_found"
handler500 = "curation.views.server_error"
