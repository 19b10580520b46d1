"""Who may do what with scoring runs; the one place the roles are decided.

- Start, pause, resume, cancel, retry runs, upload predictions, edit templates: managers and verifiers (the project's
  researchers; DESIGN.md lists managers as the ones who start runs, and verifiers read answers for a living).
- See runs and their aggregate figures (no gold in them): every member of the project.
- See predictions beside gold answers (drill-down, per-item exports) and tag error types: whoever may read gold
  answers (managers, verifiers, *qualified* annotators — `curation.releases.selectors.can_read_gold`). An annotator
  who has not passed the exam never sees a gold answer, because the exam is drawn from gold data.
- Outsiders and anonymous users see nothing (404 / 401-403).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from curation import selectors
from curation.errors import NotPermitted
from curation.models import Project
from curation.states import RUN_ROLES


def can_run(*, user: AbstractBaseUser, project: Project) -> bool:
    """Managers and verifiers of the project (and operators, who count as managers) start and steer runs."""
    return bool(selectors.roles_of(user=user, project=project) & RUN_ROLES)


def runner_require(actor: AbstractBaseUser | None, project: Project, action: str) -> None:
    """Raise NotPermitted unless `actor` may run (None: the system itself, e.g. the `score` command or a worker)."""
    if actor is not None and not can_run(user=actor, project=project):
        raise NotPermitted(f"Only a manager or verifier of this project may {action}.")
