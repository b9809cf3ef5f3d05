"""Where a webhook may be sent: only to hosts the operator allowed, never to a private address unless allowed.

Two settings decide (docs/webhooks.md):

* ``WEBHOOK_ALLOWED_HOSTS`` — host names or ``fnmatch`` patterns (``hooks.example.com``,
  ``*.example.com``, ``127.0.0.1``).  Empty: nothing is allowed, so a deploy that never
  set it can never send a request anywhere.
* ``WEBHOOK_ALLOW_PRIVATE_NETWORKS`` — off by default: every address the host name
  resolves to must be globally routable (no loopback, RFC 1918, link-local, CGNAT,
  unique-local, multicast, reserved or unspecified address, IPv4-mapped ones included).

Both are checked when an endpoint is registered and again at every send, after DNS
resolution; the send then connects to the very address that was checked (no second
lookup, so a DNS answer that changes in between — rebinding — cannot redirect it).
"""
from __future__ import annotations

import fnmatch
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from core.errors import ApplicationError


class WebhookAddressRefused(ApplicationError):
    """The URL's host is not allowed, or resolves to an address that is not."""


@dataclass(frozen=True)
class WebhookTarget:
    """A checked URL: where to connect (``address``) and what to ask for (host, path, TLS)."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


def _host_allowed(host: str) -> bool:
    host = host.lower().rstrip(".")
    return any(fnmatch.fnmatchcase(host, pattern.strip().lower().rstrip("."))
               for pattern in settings.WEBHOOK_ALLOWED_HOSTS if pattern.strip())


def _address_refused(address: str) -> str | None:
    """Why the address may not be contacted, or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified or ip.is_multicast:
        return "an unspecified or multicast address"
    if settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS:
        return None
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private or not ip.is_global:
        return "a private or reserved address"
    return None


def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise WebhookAddressRefused(f"The host name {host!r} could not be resolved ({exc}).") from exc
    addresses: list[str] = []
    for *_rest, sockaddr in infos:
        if str(sockaddr[0]) not in addresses:
            addresses.append(str(sockaddr[0]))
    if not addresses:
        raise WebhookAddressRefused(f"The host name {host!r} has no address.")
    return addresses


def webhook_url_parse(*, url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an http(s) URL with a host; refuses anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise WebhookAddressRefused(f"This is not a valid URL ({exc}).") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookAddressRefused("A webhook URL must start with http:// or https:// and name a host.")
    if parts.username or parts.password:
        raise WebhookAddressRefused("A webhook URL may not carry a user name or password; the secret signs requests.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


def webhook_target_check(*, url: str) -> WebhookTarget:
    """Check the URL against the settings now (host allowed, every resolved address allowed).

    Returns where to connect; raises WebhookAddressRefused with the reason.  Called at
    registration and at every send.
    """
    scheme, host, port, path = webhook_url_parse(url=url)
    if not _host_allowed(host):
        raise WebhookAddressRefused(
            f"The host {host!r} is not in WEBHOOK_ALLOWED_HOSTS: the operator has not allowed webhooks to it.")
    addresses = _resolve(host, port)
    for address in addresses:
        reason = _address_refused(address)
        if reason is not None:
            raise WebhookAddressRefused(
                f"The host {host!r} resolves to {address}, {reason}; private networks are refused "
                "unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is on.")
    return WebhookTarget(scheme=scheme, host=host, port=port, path=path, address=addresses[0])
