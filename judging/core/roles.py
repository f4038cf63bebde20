"""Roles: admin (staff and superuser), researcher and annotator (Django groups).

A user may hold several roles (an admin who also judges, a researcher who annotates). Accounts
are created and their roles changed through ``judging.core.accounts``.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, User

ADMIN = "admin"
RESEARCHER = "researcher"
ANNOTATOR = "annotator"
ROLE_GROUPS = (RESEARCHER, ANNOTATOR)
ROLES = (ADMIN, RESEARCHER, ANNOTATOR)  # in the order roles_of lists them

UserLike = AbstractBaseUser | AnonymousUser  # who is asking (``request.user``): reads take this
Account = User  # the stored user (settings.AUTH_USER_MODEL): writes that record a person take this


def account(user: UserLike) -> Account:
    """The stored user behind ``request.user``; an anonymous caller is refused (views check roles
    first, so this narrows the type and guards a service against a missed check)."""
    from judging.core.errors import NotAllowed

    if not isinstance(user, User) or not user.is_authenticated:
        raise NotAllowed("sign in first")
    return user


def _group_names(user: UserLike) -> set[str]:
    if not user.is_authenticated:
        return set()
    cached: set[str] | None = getattr(user, "_pooljudge_groups", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))  # type: ignore[attr-defined]
        user._pooljudge_groups = cached  # type: ignore[attr-defined]
    return cached


def is_admin(user: UserLike) -> bool:
    return bool(user.is_authenticated and getattr(user, "is_staff", False))


def is_researcher(user: UserLike) -> bool:
    return is_admin(user) or RESEARCHER in _group_names(user)


def is_annotator(user: UserLike) -> bool:
    """Admins judge only when they are also in the annotator group."""
    return ANNOTATOR in _group_names(user)


def roles_of(user: UserLike) -> list[str]:
    roles = []
    if is_admin(user):
        roles.append(ADMIN)
    if RESEARCHER in _group_names(user):
        roles.append(RESEARCHER)
    if is_annotator(user):
        roles.append(ANNOTATOR)
    return roles


def grant(user: AbstractBaseUser, role: str) -> None:
    if role not in ROLE_GROUPS:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLE_GROUPS)}")
    group, _ = Group.objects.get_or_create(name=role)
    user.groups.add(group)  # type: ignore[attr-defined]
    if hasattr(user, "_pooljudge_groups"):
        del user._pooljudge_groups


def roles_set(user: Account, roles: set[str]) -> None:
    """Give ``user`` exactly ``roles`` (known ones; the caller validated them). Admin is staff and
    superuser, as ``createsuperuser`` makes: the pages ask for staff, the admin site's models for
    the superuser's permissions. Saves the user."""
    user.is_staff = user.is_superuser = ADMIN in roles
    user.save(update_fields=["is_staff", "is_superuser"])
    wanted = [Group.objects.get_or_create(name=role)[0] for role in ROLE_GROUPS if role in roles]
    user.groups.remove(
        *user.groups.filter(name__in=ROLE_GROUPS).exclude(pk__in=[g.pk for g in wanted])
    )
    user.groups.add(*wanted)
    if hasattr(user, "_pooljudge_groups"):
        del user._pooljudge_groups
