"""Settings of one concern (identity), applied at the end of base.py so one owner edits one file.

`apply(s)` reads and extends the settings already defined (`s` is base.py's globals()): append to
`s["MIDDLEWARE"]` or `s["INSTALLED_APPS"]`, add keys; every value comes from the environment.

Three parts (issue 25, docs/deploy.md "Identity"):

* **The client's address behind the proxy.** `TRUSTED_PROXY_COUNT` (alias `AXES_IPWARE_PROXY_COUNT`) is the
  number of reverse proxies in front of the app that each append the address they saw to X-Forwarded-For.
  The client is the address the outermost trusted proxy saw (the N-th entry from the right); whatever the
  client wrote to the left of it is ignored, so it cannot choose its address. 0 (the default): REMOTE_ADDR.
  django-axes keys its lockout on username + this address (base.py `AXES_LOCKOUT_PARAMETERS`), so ten wrong
  passwords from one place lock that username from that place only, never for everyone behind the proxy.
* **Sign-in through the company's identity provider (OIDC, mozilla-django-oidc)**, on when `OIDC_RP_CLIENT_ID`
  is set: endpoints from `OIDC_OP_ISSUER`'s discovery document unless given one by one; roles from the
  claim `OIDC_GROUPS_CLAIM` through `OIDC_ROLE_MAP` (annotation/oidc.py). Local accounts keep working.
* **API tokens**: `API_TOKEN_DEFAULT_DAYS` (90) until a new token expires unless its creator picks another
  term (at most `API_TOKEN_MAX_DAYS`, 365).
"""
from __future__ import annotations

import ipaddress
import os
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# Endpoint settings that may come from the issuer's discovery document instead (annotation/oidc.py).
OIDC_ENDPOINT_SETTINGS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}
ROLES = ("analyst", "manager", "annotator")


def _int(name: str, default: int, *aliases: str) -> int:
    for key in (name, *aliases):
        value = os.environ.get(key, "").strip()
        if value:
            return int(value)
    return default


def parse_role_map(text: str) -> dict[str, str]:
    """`group=role,group=role` (a group may be given twice for two roles: `staff=manager,staff=annotator`
    is kept as the first; give one role per group) → {group: role}; an unknown role is a settings error."""
    mapping: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        group, sep, role = item.rpartition("=")
        group, role = group.strip(), role.strip().lower()
        if not sep or not group or role not in ROLES:
            raise ValueError(f"OIDC_ROLE_MAP: {item.strip()!r} is not group=role with role one of {', '.join(ROLES)}")
        mapping.setdefault(group, role)
    return mapping


def client_address(request: Any) -> str | None:
    """The client's address: the one the outermost of `TRUSTED_PROXY_COUNT` proxies saw (django-axes calls this).

    With N trusted proxies each appending to X-Forwarded-For, the last N entries were written by them; the
    N-th from the right is the client as the first of them saw it. Fewer entries than N (a request that did
    not come through every proxy) or a malformed entry: REMOTE_ADDR, which the client cannot choose.
    """
    remote = request.META.get("REMOTE_ADDR") or None
    count = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0)
    if count <= 0:
        return remote
    entries = [e.strip() for e in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if e.strip()]
    if len(entries) < count:
        return remote
    candidate = entries[-count]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


def apply(s: dict[str, Any]) -> None:
    # --- The client's address behind the proxy (django-axes lockout) -----------------------------------
    s["TRUSTED_PROXY_COUNT"] = _int("TRUSTED_PROXY_COUNT", 0, "AXES_IPWARE_PROXY_COUNT")
    s["AXES_CLIENT_IP_CALLABLE"] = "config.settings.identity.client_address"
    # Username and address together: a stranger's wrong passwords lock the username from the stranger's
    # address only (base.py sets the same; restated here because this module owns the rule).
    s["AXES_LOCKOUT_PARAMETERS"] = [["username", "ip_address"]]

    # --- API tokens ---------------------------------------------------------------------------------
    s["API_TOKEN_DEFAULT_DAYS"] = _int("API_TOKEN_DEFAULT_DAYS", 90)
    s["API_TOKEN_MAX_DAYS"] = _int("API_TOKEN_MAX_DAYS", 365)

    # --- OIDC sign-in -------------------------------------------------------------------------------
    s["OIDC_ENABLED"] = bool(os.environ.get("OIDC_RP_CLIENT_ID", "").strip())
    s["OIDC_PROVIDER_NAME"] = os.environ.get("OIDC_PROVIDER_NAME", "your company's sign-in").strip()
    s["OIDC_RP_CLIENT_ID"] = os.environ.get("OIDC_RP_CLIENT_ID", "").strip()
    s["OIDC_RP_CLIENT_SECRET"] = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
    s["OIDC_OP_ISSUER"] = os.environ.get("OIDC_OP_ISSUER", "").strip().rstrip("/")
    for name in OIDC_ENDPOINT_SETTINGS:
        s[name] = os.environ.get(name, "").strip()
    s["OIDC_RP_SCOPES"] = os.environ.get("OIDC_RP_SCOPES", "openid email profile").strip()
    s["OIDC_RP_SIGN_ALGO"] = os.environ.get("OIDC_RP_SIGN_ALGO", "RS256").strip()
    s["OIDC_GROUPS_CLAIM"] = os.environ.get("OIDC_GROUPS_CLAIM", "groups").strip()
    s["OIDC_ROLE_MAP"] = parse_role_map(os.environ.get("OIDC_ROLE_MAP", ""))
    s["OIDC_TIMEOUT"] = _int("OIDC_TIMEOUT_SECONDS", 10)
    s["OIDC_USE_PKCE"] = True
    s["OIDC_AUTHENTICATION_CALLBACK_URL"] = "account:oidc_callback"
    s["LOGIN_REDIRECT_URL_FAILURE"] = "/accounts/login/?sso=failed"
    s["OIDC_CREATE_USER"] = True
    # The sign-in page shows "Sign in with <provider>" when OIDC is on (api/views/account.py).
    s["TEMPLATES"][0]["OPTIONS"]["context_processors"].append("api.views.account.sign_in_options")
    if s["OIDC_ENABLED"]:
        missing = [n for n in ("OIDC_RP_CLIENT_SECRET",) if not s[n]]
        if not s["OIDC_OP_ISSUER"]:
            missing += [n for n in OIDC_ENDPOINT_SETTINGS if not s[n]]
        if missing:
            raise ImproperlyConfigured(
                f"OIDC sign-in is on (OIDC_RP_CLIENT_ID) but {', '.join(missing)} "
                "is not set (or set OIDC_OP_ISSUER to read the endpoints from its discovery document)."
            )
        s["AUTHENTICATION_BACKENDS"] = [*s["AUTHENTICATION_BACKENDS"], "annotation.oidc.RoleMappingOIDCBackend"]
