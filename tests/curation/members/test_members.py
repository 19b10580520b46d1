"""Project creation and member management: services, pages and API, role by role."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from curation.errors import Conflict, InvalidInput, NotPermitted
from curation.members.services import member_create, membership_remove, membership_set_role
from curation.models import Membership, Project
from curation.services.projects import project_create
from curation.states import Role

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


def membership(project, username, role):
    return Membership.objects.get(project=project, user__username=username, role=role)


def test_a_manager_creates_a_project_and_becomes_its_manager(personas):
    project = project_create(name="Second", creator=personas["manager"])
    assert membership(project, "manager", Role.MANAGER)
    assert project.reasoning_types.exists()


@pytest.mark.parametrize("role", ["annotator", "verifier", "outsider"])
def test_only_operators_and_managers_create_projects(personas, make_user, role):
    with pytest.raises(NotPermitted):
        project_create(name="Mine", creator=personas[role])
    assert not Project.objects.filter(name="Mine").exists()
    staff = make_user("operator", is_staff=True)
    assert project_create(name="Mine", creator=staff).slug == "mine"


def test_member_create_returns_a_working_one_time_password(personas, project):
    member, password = member_create(
        project=project, actor=personas["manager"], username="newcomer", role=Role.ANNOTATOR
    )
    user = get_user_model().objects.get(username="newcomer")
    assert user.check_password(password) and len(password) >= 16
    assert password not in user.password  # only the hash is stored
    assert (member.role, member.is_qualified) == (Role.ANNOTATOR, False)


def test_member_create_refuses_existing_names_and_bad_ones(personas, project):
    with pytest.raises(Conflict, match="exists already") as taken:
        member_create(project=project, actor=personas["manager"], username="Annotator", role=Role.ANNOTATOR)
    assert taken.value.detail == {"field": "username"}
    with pytest.raises(InvalidInput, match="cannot be a username"):
        member_create(project=project, actor=personas["manager"], username="no spaces", role=Role.ANNOTATOR)
    assert get_user_model().objects.filter(username="no spaces").count() == 0


@pytest.mark.parametrize("role", ["annotator", "verifier", "outsider"])
def test_only_managers_change_members(personas, project, role):
    target = membership(project, "annotator2", Role.ANNOTATOR)
    with pytest.raises(NotPermitted):
        member_create(project=project, actor=personas[role], username="x", role=Role.ANNOTATOR)
    with pytest.raises(NotPermitted):
        membership_set_role(project=project, actor=personas[role], membership_id=target.pk, role=Role.VERIFIER)
    with pytest.raises(NotPermitted):
        membership_remove(project=project, actor=personas[role], membership_id=target.pk)
    assert Membership.objects.filter(pk=target.pk, role=Role.ANNOTATOR).exists()
    assert not get_user_model().objects.filter(username="x").exists()


def test_the_last_manager_stays(personas, project):
    manager = membership(project, "manager", Role.MANAGER)
    with pytest.raises(InvalidInput, match="at least one manager"):
        membership_remove(project=project, actor=personas["manager"], membership_id=manager.pk)
    with pytest.raises(InvalidInput, match="at least one manager"):
        membership_set_role(project=project, actor=personas["manager"], membership_id=manager.pk, role=Role.VERIFIER)
    verifier = membership(project, "verifier", Role.VERIFIER)
    membership_set_role(project=project, actor=personas["manager"], membership_id=verifier.pk, role=Role.MANAGER)
    membership_remove(project=project, actor=personas["manager"], membership_id=manager.pk)
    assert not Membership.objects.filter(pk=manager.pk).exists()


def test_set_role_refuses_a_role_already_held(personas, project, make_user):
    from curation.services.projects import membership_add

    membership_add(project=project, actor=None, username="verifier", role=Role.ANNOTATOR)
    verifier = membership(project, "verifier", Role.VERIFIER)
    with pytest.raises(InvalidInput, match="already"):
        membership_set_role(project=project, actor=personas["manager"], membership_id=verifier.pk, role="annotator")


# Pages


def test_members_page_shows_roles_and_qualification_to_managers(client, personas, project):
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/members/").content.decode()
    assert 'data-member="novice"' in page and "Not qualified yet" in page and "Qualified since" in page
    assert f'href="/p/{project.slug}/members/"' in client.get(f"/p/{project.slug}/").content.decode()


def test_members_page_asks_before_removing(client, personas, project):
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/members/").content.decode()
    novice = Membership.objects.get(project=project, user__username="novice")
    assert f'action="/p/{project.slug}/members/{novice.pk}/remove/" data-confirm="Remove novice as annotator of' in page
    # The only manager is not offered a removal the service would refuse; with a second manager, both are.
    manager = Membership.objects.get(project=project, user__username="manager")
    assert f"/members/{manager.pk}/remove/" not in page and "the only manager" in page
    Membership.objects.filter(project=project, user__username="verifier").update(role=Role.MANAGER)
    page = client.get(f"/p/{project.slug}/members/").content.decode()
    assert f"/members/{manager.pk}/remove/" in page and "the only manager" not in page
    assert "/static/confirm.js" in page  # the script that asks, on every page (no inline script: CSP)


@pytest.mark.parametrize(("role", "expected"), [("annotator", 403), ("verifier", 403), ("outsider", 404)])
def test_members_page_refuses_non_managers(client, personas, project, role, expected):
    client.force_login(personas[role])
    assert client.get(f"/p/{project.slug}/members/").status_code == expected
    target = membership(project, "annotator2", Role.ANNOTATOR)
    assert client.post(f"/p/{project.slug}/members/{target.pk}/remove/").status_code == expected
    response = client.post(f"/p/{project.slug}/members/", {"username": "outsider", "role": "annotator", "add": ""})
    assert response.status_code == expected
    assert Membership.objects.filter(pk=target.pk).exists()
    assert not Membership.objects.filter(project=project, user__username="outsider").exists()


def test_members_page_adds_creates_changes_and_removes(client, personas, project):
    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/members/"
    response = client.post(url, {"username": "outsider", "role": "verifier", "add": ""}, follow=True)
    assert "outsider is now a verifier" in response.content.decode()
    response = client.post(url, {"username": "nobody", "role": "verifier", "add": ""})
    assert "There is no user called" in response.content.decode()
    response = client.post(url, {"username": "fresh", "email": "", "role": "annotator", "create": ""})
    page = response.content.decode()
    assert 'id="initial-password"' in page
    password = page.split('id="initial-password">')[1].split("<")[0]
    assert get_user_model().objects.get(username="fresh").check_password(password)
    assert password not in client.get(url).content.decode()  # shown once
    fresh = membership(project, "fresh", Role.ANNOTATOR)
    response = client.post(f"{url}{fresh.pk}/role/", {f"m{fresh.pk}-role": "verifier"}, follow=True)
    assert "fresh is now a verifier." in response.content.decode()
    assert Membership.objects.get(pk=fresh.pk).role == Role.VERIFIER
    response = client.post(f"{url}{fresh.pk}/role/", {f"m{fresh.pk}-role": "verifier"}, follow=True)
    assert "fresh is already a verifier; nothing changed." in response.content.decode()
    assert "is now" not in response.content.decode()
    assert Membership.objects.get(pk=fresh.pk).role == Role.VERIFIER
    client.post(f"{url}{fresh.pk}/remove/")
    assert not Membership.objects.filter(pk=fresh.pk).exists()


def test_new_project_page_for_managers_only(client, personas):
    client.force_login(personas["annotator"])
    assert client.get("/projects/new/").status_code == 403
    assert "New project" not in client.get("/").content.decode()
    client.force_login(personas["manager"])
    assert 'href="/projects/new/"' in client.get("/").content.decode()
    response = client.post("/projects/new/", {"name": "Fin papers", "slug": "", "description": ""})
    assert response.status_code == 302 and response["Location"] == "/p/fin-papers/members/"
    response = client.post("/projects/new/", {"name": "Fin papers", "slug": "", "description": ""})
    assert "exists already" in response.content.decode()


# API


def api_request(project, name):
    target = membership(project, "annotator2", Role.ANNOTATOR)
    base = f"/api/projects/{project.slug}/members/"
    return {
        "create-user": ("post", f"{base}new-user/", {"username": "viaapi", "role": "annotator"}),
        "set-role": ("patch", f"{base}{target.pk}/", {"role": "verifier"}),
        "remove": ("delete", f"{base}{target.pk}/", None),
    }[name]


API_MATRIX = {
    "create-user": (403, 403, 201, 404, 401),
    "set-role": (403, 403, 200, 404, 401),
    "remove": (403, 403, 204, 404, 401),
}


@pytest.mark.parametrize("endpoint", sorted(API_MATRIX))
@pytest.mark.parametrize("role", ROLES)
def test_member_api_permission_matrix(personas, project, api_client_for, endpoint, role):
    user = None if role == "anonymous" else personas[role]
    method, url, body = api_request(project, endpoint)
    response = getattr(api_client_for(user), method)(url, body, format="json")
    assert response.status_code == API_MATRIX[endpoint][ROLES.index(role)], response.content[:300]


def test_member_api_gives_the_password_once(personas, project, api_client_for):
    client = api_client_for(personas["manager"])
    body = client.post(
        f"/api/projects/{project.slug}/members/new-user/", {"username": "scripted", "role": "verifier"}, format="json"
    ).json()
    assert get_user_model().objects.get(username="scripted").check_password(body["initial_password"])
    assert body["member"]["role"] == "verifier"
    members = client.get(f"/api/projects/{project.slug}/members/").json()
    assert "scripted" in [m["username"] for m in members] and "initial_password" not in str(members)


def test_a_created_member_changes_the_generated_password_from_the_top_bar(client, personas, project):
    _, generated = member_create(project=project, actor=personas["manager"], username="newcomer", role=Role.ANNOTATOR)
    assert client.login(username="newcomer", password=generated)
    home = client.get("/").content.decode()
    assert 'href="/password/"' in home  # the top bar's "Password" link
    form = client.get("/password/")
    assert form.status_code == 200 and "Change your password" in form.content.decode()
    wrong = client.post("/password/", {"old_password": "nope", "new_password1": "x", "new_password2": "x"})
    assert wrong.status_code == 200 and "Your old password was entered incorrectly" in wrong.content.decode()
    new = "tables-and-text-2026"
    done = client.post(
        "/password/", {"old_password": generated, "new_password1": new, "new_password2": new}, follow=True
    )
    assert "Password changed" in done.content.decode()
    assert client.get("/").status_code == 200  # still logged in
    user = get_user_model().objects.get(username="newcomer")
    assert user.check_password(new) and not user.check_password(generated)


def test_the_password_page_asks_a_stranger_to_log_in(client):
    response = client.get("/password/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
