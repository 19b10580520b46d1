"""URLs of two-round validation, discussions, and history: pages and API."""

from __future__ import annotations

from django.urls import path
from django.views.generic import RedirectView

from annotate.review import api as api_review
from annotate.review import services as review
from annotate.review import views as views_review

page_patterns = [
    path("p/<slug:slug>/review/", views_review.review_home, name="review-home"),
    path("p/<slug:slug>/review/next/", views_review.round_next, {"stage": views_review.ROUND_ONE}, name="review-next"),
    path("p/<slug:slug>/review/<int:pk>/", views_review.round_page, {"stage": views_review.ROUND_ONE}, name="review"),
    path("p/<slug:slug>/review/<int:pk>/claim/", views_review.review_claim, name="review-claim"),
    path("p/<slug:slug>/review/<int:pk>/decide/", views_review.review_decide, name="review-decide"),
    path("p/<slug:slug>/round2/", RedirectView.as_view(pattern_name="review-home"), name="round2-home"),
    path("p/<slug:slug>/round2/next/", views_review.round_next, {"stage": views_review.ROUND_TWO}, name="round2-next"),
    path("p/<slug:slug>/round2/<int:pk>/", views_review.round_page, {"stage": views_review.ROUND_TWO}, name="round2"),
    path("p/<slug:slug>/round2/<int:pk>/decide/", views_review.round2_decide, name="round2-decide"),
    path("p/<slug:slug>/discussions/", views_review.discussion_list, name="discussions"),
    path("p/<slug:slug>/discussions/next/", views_review.discussion_next, name="discussions-next"),
    path("p/<slug:slug>/discussions/<int:pk>/", views_review.discussion_page, name="discussion"),
    path(
        "p/<slug:slug>/discussions/<int:pk>/give-back/",
        views_review.discussion_hand,
        {"step": review.discussion_give_back},
        name="discussion-give-back",
    ),
    path(
        "p/<slug:slug>/discussions/<int:pk>/take/",
        views_review.discussion_hand,
        {"step": review.discussion_take},
        name="discussion-take",
    ),
    path("p/<slug:slug>/discussions/<int:pk>/reply/", views_review.discussion_reply, name="discussion-reply"),
    path("p/<slug:slug>/discussions/<int:pk>/resolve/", views_review.discussion_resolve, name="discussion-resolve"),
    path("p/<slug:slug>/history/<int:pk>/", views_review.history_page, name="review-history"),
    path("p/<slug:slug>/history/<int:pk>/discard/", views_review.instance_discard, name="instance-discard"),
    path("p/<slug:slug>/history/<int:pk>/restore/", views_review.instance_restore, name="instance-restore"),
    path("p/<slug:slug>/history/<int:pk>/restore-revision/", views_review.revision_restore, name="revision-restore"),
]

api_patterns = [
    *(
        path(
            f"instances/<int:pk>/{step.route}", api_review.RoundVersionedStepApi.as_view(instance_step=step), name=name
        )
        for name, step in api_review.INSTANCE_STEPS.items()
    ),
    path("projects/<slug:slug>/review/queue/", api_review.ReviewQueueApi.as_view(), name="api-review-queue"),
    path(
        "projects/<slug:slug>/review/next/",
        api_review.RoundNextApi.as_view(take=review.review_next),
        name="api-review-next",
    ),
    path(
        "instances/<int:pk>/review/claim/",
        api_review.RoundClaimApi.as_view(claim=review.review_claim),
        name="api-review-claim",
    ),
    path("instances/<int:pk>/review/ping/", api_review.ReviewPingApi.as_view(), name="api-review-ping"),
    path("projects/<slug:slug>/round2/queue/", api_review.Round2QueueApi.as_view(), name="api-round2-queue"),
    path(
        "projects/<slug:slug>/round2/next/",
        api_review.RoundNextApi.as_view(take=review.round2_next),
        name="api-round2-next",
    ),
    path(
        "instances/<int:pk>/round2/claim/",
        api_review.RoundClaimApi.as_view(claim=review.round2_claim),
        name="api-round2-claim",
    ),
    path("instances/<int:pk>/round2/flag/", api_review.Round2FlagApi.as_view(), name="api-round2-flag"),
    path("instances/<int:pk>/comments/", api_review.InstanceCommentsApi.as_view(), name="api-instance-comments"),
    path("comments/<int:pk>/resolve/", api_review.CommentResolveApi.as_view(), name="api-comment-resolve"),
    path("projects/<slug:slug>/discussions/", api_review.DiscussionListApi.as_view(), name="api-discussions"),
    path("discussions/<int:pk>/", api_review.DiscussionDetailApi.as_view(), name="api-discussion"),
    path("discussions/<int:pk>/messages/", api_review.DiscussionReplyApi.as_view(), name="api-discussion-reply"),
    path("discussions/<int:pk>/resolve/", api_review.DiscussionResolveApi.as_view(), name="api-discussion-resolve"),
    path(
        "discussions/<int:pk>/give-back/",
        api_review.DiscussionHandApi.as_view(step=review.discussion_give_back),
        name="api-discussion-give-back",
    ),
    path(
        "discussions/<int:pk>/take/",
        api_review.DiscussionHandApi.as_view(step=review.discussion_take),
        name="api-discussion-take",
    ),
    path("projects/<slug:slug>/discussions/next/", api_review.DiscussionNextApi.as_view(), name="api-discussions-next"),
    path("instances/<int:pk>/revisions/diff/", api_review.RevisionDiffApi.as_view(), name="api-revision-diff"),
]
