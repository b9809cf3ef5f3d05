"""Sign-in through the company's identity provider (OpenID Connect, mozilla-django-oidc): claims → roles.

Configured from the environment (config/settings/identity.py, docs/deploy.md "Identity"). The code flow with
PKCE and a nonce is mozilla-django-oidc's; this module adds what it leaves out:

* **Endpoints from discovery.** With `OIDC_OP_ISSUER` set, any endpoint not given explicitly is read from
  `<issuer>/.well-known/openid-configuration` (fetched once per process, on the first sign-in).
* **The id token checked fully**: RS256 signature against the provider's JWKS (the library), and also its
  issuer, audience (our client id) and expiry, which the library does not check.
* **Who the user is**: the provider's `sub` (with the issuer), never the e-mail address — an identity
  provider account whose address matches a local account does not take that account over. The username is
  `sso-` and a hash of issuer and subject; name and e-mail are copied from the claims at every sign-in.
* **Roles from the groups claim**: the claim `OIDC_GROUPS_CLAIM` (a list, or a space/comma-separated string)
  is mapped through `OIDC_ROLE_MAP` (group → analyst/manager/annotator). At every sign-in the user's role
  groups are set to exactly the mapped roles (a group removed at the provider removes the role); other
  groups are left alone. Someone none of whose groups maps to a role is refused: signing in would show them
  nothing.

Permissions are answered by core.auth.CachedPermissionsBackend (this backend answers none), so an OIDC user's
roles are cached and invalidated like anyone's.
"""
from __future__ import annotations

import base64
import hashlib
import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from annotation.roles import ROLE_PERMISSIONS, roles_ensure

logger = logging.getLogger(__name__)

ENDPOINT_KEYS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}
USERNAME_PREFIX = "sso-"
_discovered: dict[str, dict[str, Any]] = {}


def oidc_discovery(*, issuer: str) -> dict[str, Any]:
    """The issuer's discovery document (cached per process); its `issuer` must be the configured one."""
    if issuer not in _discovered:
        response = requests.get(f"{issuer}/.well-known/openid-configuration",
                                timeout=import_from_settings("OIDC_TIMEOUT", 10))
        response.raise_for_status()
        document = response.json()
        if str(document.get("issuer", "")).rstrip("/") != issuer:
            raise SuspiciousOperation(f"discovery document names issuer {document.get('issuer')!r}, not {issuer!r}")
        _discovered[issuer] = document
    return _discovered[issuer]


def oidc_setting(attr: str, *args: Any) -> Any:
    """A mozilla-django-oidc setting; an endpoint left empty comes from the issuer's discovery document."""
    value = import_from_settings(attr, *args)
    if attr in ENDPOINT_KEYS and not value:
        issuer = import_from_settings("OIDC_OP_ISSUER", "")
        if issuer:
            return oidc_discovery(issuer=issuer)[ENDPOINT_KEYS[attr]]
    return value


def oidc_roles_from_claims(*, claims: dict[str, Any]) -> set[str]:
    """The roles the claims give: each group in `OIDC_GROUPS_CLAIM` looked up in `OIDC_ROLE_MAP`."""
    claim = getattr(settings, "OIDC_GROUPS_CLAIM", "groups")
    raw = claims.get(claim) or []
    groups = raw.replace(",", " ").split() if isinstance(raw, str) else [str(g) for g in raw]
    mapping: dict[str, str] = getattr(settings, "OIDC_ROLE_MAP", {})
    return {mapping[g] for g in groups if g in mapping and mapping[g] in ROLE_PERMISSIONS}


def oidc_username(*, issuer: str, subject: str) -> str:
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).digest()
    return USERNAME_PREFIX + base64.b32encode(digest).decode().lower().rstrip("=")[:24]


class RoleMappingOIDCBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's code flow; users keyed on issuer + subject; roles from the groups claim."""

    # Django builds every backend for every sign-in, the password form's too: nothing here may wait on the
    # provider, so the endpoints are resolved (discovery) only when a code comes back from it.
    def authenticate(self, request: Any, **kwargs: Any) -> Any:
        if request is None or not request.GET.get("code") or not request.GET.get("state"):
            return None
        self.OIDC_OP_TOKEN_ENDPOINT = oidc_setting("OIDC_OP_TOKEN_ENDPOINT")
        self.OIDC_OP_USER_ENDPOINT = oidc_setting("OIDC_OP_USER_ENDPOINT")
        self.OIDC_OP_JWKS_ENDPOINT = oidc_setting("OIDC_OP_JWKS_ENDPOINT")
        return super().authenticate(request, **kwargs)

    # --- the id token: issuer, audience and expiry too -----------------------------------------------
    def _verify_jws(self, payload: Any, key: Any) -> dict[str, Any]:
        header = jwt.get_unverified_header(payload)
        if header.get("alg") != self.OIDC_RP_SIGN_ALGO:
            raise SuspiciousOperation(f"id token signed with {header.get('alg')!r}, not {self.OIDC_RP_SIGN_ALGO}")
        issuer = self.get_settings("OIDC_OP_ISSUER", "") or None
        try:
            return jwt.decode(payload, key, algorithms=[self.OIDC_RP_SIGN_ALGO], audience=self.OIDC_RP_CLIENT_ID,
                              issuer=issuer, options={"require": ["exp", "iat", "sub"]}, leeway=60)
        except jwt.PyJWTError as exc:
            raise SuspiciousOperation(f"id token refused: {exc}") from exc

    def verify_token(self, token: Any, **kwargs: Any) -> dict[str, Any]:
        payload = super().verify_token(token, **kwargs)
        self._id_claims = payload
        return payload

    # --- who the user is --------------------------------------------------------------------------
    def _username(self, claims: dict[str, Any]) -> str:
        id_claims = getattr(self, "_id_claims", {})
        subject = str(id_claims.get("sub") or "")
        if not subject or (claims.get("sub") and str(claims["sub"]) != subject):
            raise SuspiciousOperation("userinfo and id token name different subjects")
        return oidc_username(issuer=str(id_claims.get("iss", "")), subject=subject)

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        if not oidc_roles_from_claims(claims=claims):
            logger.warning("oidc: sign-in refused: no group in claim %r maps to a role (OIDC_ROLE_MAP)",
                           getattr(settings, "OIDC_GROUPS_CLAIM", "groups"))
            return False
        return True

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        return self.UserModel.objects.filter(username=self._username(claims))

    def create_user(self, claims: dict[str, Any]) -> Any:
        user = self.UserModel(username=self._username(claims))
        user.set_unusable_password()  # signs in through the provider only
        return self.update_user(user, claims)

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        """Name, e-mail and role groups from the claims, at every sign-in."""
        roles = oidc_roles_from_claims(claims=claims)
        with transaction.atomic():
            groups = roles_ensure()
            user.email = self.UserModel.objects.normalize_email(str(claims.get("email", "")))[:254]
            user.first_name = str(claims.get("given_name", ""))[:150]
            user.last_name = str(claims.get("family_name", ""))[:150]
            user.save()
            keep = [g for g in user.groups.all() if g.name not in ROLE_PERMISSIONS]
            user.groups.set(keep + [groups[r] for r in sorted(roles)])
        logger.info("oidc: %s signed in with roles %s", user.username, ", ".join(sorted(roles)))
        return user

    # --- permissions: answered by core.auth.CachedPermissionsBackend alone -----------------------------
    def get_user_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return set()

    def get_group_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return set()

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return set()

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        return False

    def has_module_perms(self, user_obj: Any, app_label: str) -> bool:
        return False


class SignInStartView(OIDCAuthenticationRequestView):
    get_settings = staticmethod(oidc_setting)


class SignInCallbackView(OIDCAuthenticationCallbackView):
    get_settings = staticmethod(oidc_setting)

