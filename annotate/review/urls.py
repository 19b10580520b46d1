"""URLs of two-round validation, discussions, and history: pages and API."""

from __future__ import annotations

from django.urls import path
from django.views.generic import RedirectView

from annotate.review import api, views
from annotate.review import services as review

# The two rounds' Next and Claim (round, its next, its claim), and a discussion's two hands (route, service): one view
# each, given the service.
ROUNDS = (("review", review.review_next, review.review_claim), ("round2", review.round2_next, review.round2_claim))
HANDS = (("give-back", review.discussion_give_back), ("take", review.discussion_take))

page_patterns = [
    path("p/<slug:slug>/review/", views.review_home, name="review-home"),
    path("p/<slug:slug>/review/next/", views.round_next, {"stage": views.ROUND_ONE}, name="review-next"),
    path("p/<slug:slug>/review/<int:pk>/", views.round_page, {"stage": views.ROUND_ONE}, name="review"),
    path("p/<slug:slug>/review/<int:pk>/claim/", views.review_claim, name="review-claim"),
    path("p/<slug:slug>/review/<int:pk>/decide/", views.round_decide, {"stage": views.ROUND_ONE}, name="review-decide"),
    path("p/<slug:slug>/round2/", RedirectView.as_view(pattern_name="review-home"), name="round2-home"),
    path("p/<slug:slug>/round2/next/", views.round_next, {"stage": views.ROUND_TWO}, name="round2-next"),
    path("p/<slug:slug>/round2/<int:pk>/", views.round_page, {"stage": views.ROUND_TWO}, name="round2"),
    path("p/<slug:slug>/round2/<int:pk>/decide/", views.round_decide, {"stage": views.ROUND_TWO}, name="round2-decide"),
    path("p/<slug:slug>/discussions/", views.discussion_list, name="discussions"),
    path("p/<slug:slug>/discussions/next/", views.discussion_next, name="discussions-next"),
    path("p/<slug:slug>/discussions/<int:pk>/", views.discussion_page, name="discussion"),
    *(
        path(
            f"p/<slug:slug>/discussions/<int:pk>/{hand}/",
            views.discussion_hand,
            {"step": step},
            name=f"discussion-{hand}",
        )
        for hand, step in HANDS
    ),
    path("p/<slug:slug>/discussions/<int:pk>/reply/", views.discussion_reply, name="discussion-reply"),
    path("p/<slug:slug>/discussions/<int:pk>/resolve/", views.discussion_resolve, name="discussion-resolve"),
    path("p/<slug:slug>/history/<int:pk>/", views.history_page, name="review-history"),
    path("p/<slug:slug>/history/<int:pk>/discard/", views.instance_discard, name="instance-discard"),
    path("p/<slug:slug>/history/<int:pk>/restore/", views.instance_restore, name="instance-restore"),
    path("p/<slug:slug>/history/<int:pk>/restore-revision/", views.revision_restore, name="revision-restore"),
]

api_patterns = [
    *(
        path(f"instances/<int:pk>/{step.route}", api.RoundVersionedStepApi.as_view(instance_step=step), name=name)
        for name, step in api.INSTANCE_STEPS.items()
    ),
    path("projects/<slug:slug>/review/queue/", api.ReviewQueueApi.as_view(), name="api-review-queue"),
    *(
        path(f"projects/<slug:slug>/{stage}/next/", api.RoundNextApi.as_view(take=take), name=f"api-{stage}-next")
        for stage, take, _claim in ROUNDS
    ),
    *(
        path(f"instances/<int:pk>/{stage}/claim/", api.RoundClaimApi.as_view(claim=claim), name=f"api-{stage}-claim")
        for stage, _take, claim in ROUNDS
    ),
    path("instances/<int:pk>/review/ping/", api.ReviewPingApi.as_view(), name="api-review-ping"),
    path("projects/<slug:slug>/round2/queue/", api.Round2QueueApi.as_view(), name="api-round2-queue"),
    path("instances/<int:pk>/round2/flag/", api.Round2FlagApi.as_view(), name="api-round2-flag"),
    path("instances/<int:pk>/comments/", api.InstanceCommentsApi.as_view(), name="api-instance-comments"),
    path("comments/<int:pk>/resolve/", api.CommentResolveApi.as_view(), name="api-comment-resolve"),
    path("projects/<slug:slug>/discussions/", api.DiscussionListApi.as_view(), name="api-discussions"),
    path("discussions/<int:pk>/", api.DiscussionDetailApi.as_view(), name="api-discussion"),
    path("discussions/<int:pk>/messages/", api.DiscussionReplyApi.as_view(), name="api-discussion-reply"),
    path("discussions/<int:pk>/resolve/", api.DiscussionResolveApi.as_view(), name="api-discussion-resolve"),
    *(
        path(f"discussions/<int:pk>/{hand}/", api.DiscussionHandApi.as_view(step=step), name=f"api-discussion-{hand}")
        for hand, step in HANDS
    ),
    path("projects/<slug:slug>/discussions/next/", api.DiscussionNextApi.as_view(), name="api-discussions-next"),
    path("instances/<int:pk>/revisions/diff/", api.RevisionDiffApi.as_view(), name="api-revision-diff"),
]
