"""URLs of double annotation: the copy page and API, the verifier's side-by-side and decision, the managers'
settings and figures."""

from __future__ import annotations

from django.urls import path

from annotate.agreement import api as api_agreement
from annotate.agreement import views as views_agreement

page_patterns = [
    path("p/<slug:slug>/work/copy/<int:pk>/", views_agreement.copy_page, name="double-copy"),
    path("p/<slug:slug>/review/<int:pk>/double/", views_agreement.decide_page, name="double-decide"),
    path("p/<slug:slug>/agreement/settings/", views_agreement.agreement_settings_page, name="agreement-settings"),
]

api_patterns = [
    path("copies/<int:pk>/", api_agreement.CopyApi.as_view(), name="api-double-copy"),
    path("copies/<int:pk>/submit/", api_agreement.CopySubmitApi.as_view(), name="api-double-copy-submit"),
    path("instances/<int:pk>/double/", api_agreement.DoubleApi.as_view(), name="api-double"),
    path("instances/<int:pk>/double/decide/", api_agreement.DoubleDecideApi.as_view(), name="api-double-decide"),
    path("projects/<slug:slug>/agreement/", api_agreement.AgreementSettingsApi.as_view(), name="api-agreement"),
    path(
        "projects/<slug:slug>/agreement/figures/",
        api_agreement.AgreementFiguresApi.as_view(),
        name="api-agreement-figures",
    ),
]
