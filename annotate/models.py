"""Annotation side's models. Each package keeps its own (dashboard, qualification, review, work); importing them here
registers them with the app, whose label (`annotate`) and table names they keep."""

from __future__ import annotations

from annotate.agreement.models import AgreementSettings, DoubleAnnotation  # noqa: F401
from annotate.batches.models import Announcement, AnnouncementRead  # noqa: F401
from annotate.dashboard.models import PaySettings  # noqa: F401
from annotate.qualification.models import (  # noqa: F401
    Guidelines,
    GuidelinesRead,
    QualificationAttempt,
    QualificationItem,
    QualificationSettings,
)
from annotate.quality.models import GoldProbe, QualityDecision, QualitySettings, ReissuedId  # noqa: F401
from annotate.review.models import Discussion, DiscussionMessage, ReviewComment  # noqa: F401
from annotate.work.models import WorkTime  # noqa: F401
