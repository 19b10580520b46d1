"""URLs of project creation and member management: `page_patterns` (root) and `api_patterns` (under /api/)."""

from __future__ import annotations

from django.urls import path

from curation.members import api as member_api
from curation.members import views as member_views

page_patterns = [
    path("projects/new/", member_views.project_new, name="project-new"),
    path("p/<slug:slug>/members/", member_views.members, name="members"),
    path("p/<slug:slug>/members/<int:pk>/role/", member_views.member_role, name="member-role"),
    path("p/<slug:slug>/members/<int:pk>/remove/", member_views.member_remove, name="member-remove"),
]

api_patterns = [
    path("projects/<slug:slug>/members/new-user/", member_api.MemberCreateApi.as_view(), name="api-member-create"),
    path("projects/<slug:slug>/members/<int:pk>/", member_api.MembershipDetailApi.as_view(), name="api-member"),
]
