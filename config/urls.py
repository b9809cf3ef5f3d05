from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, HttpResponseServerError
from django.shortcuts import render
from django.template import loader
from django.templatetags.static import static
from django.urls import include, path
from django.utils.http import url_has_allowed_host_and_scheme
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from annotation.services.accounts import DEMO_ACCOUNTS
from annotation.views.home import home
from api.errors import api_not_found
from core.demo import demo_accounts_allowed
from core.health import healthz
from core.observability.metrics import metrics_view


def favicon(request: HttpRequest) -> HttpResponse:
    """The SVG icon base.html links, resolved per request (the static manifest need not exist at import)."""
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))


class LoginView(auth_views.LoginView):
    """Django's sign-in page, plus the demo accounts when this server has them (issue 26: a new user did not know
    they existed). Never under production settings, where demo_accounts_ensure refuses to create them."""

    def get_context_data(self, **kwargs: object) -> dict[str, object]:
        context = super().get_context_data(**kwargs)
        context["demo_accounts"] = _demo_accounts_present()
        return context


def _demo_accounts_present() -> list[tuple[str, str, str]]:
    if not demo_accounts_allowed():  # core/demo.py: the same check that refuses to create them
        return []
    present = set(get_user_model().objects.filter(username__in=[name for _, name, _ in DEMO_ACCOUNTS], is_active=True)
                  .values_list("username", flat=True))
    return [row for row in DEMO_ACCOUNTS if row[1] in present]


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("annotate/", include("annotation.urls_annotator")),
    path("mturk/", include("annotation.urls_mturk")),
    path("analyst/", include("annotation.urls_analyst")),
    path("reports/", include("estimation.urls")),
    # The API reference (issue 26): Redoc by default (lighter than Swagger UI, from the sidecar's static files);
    # Swagger UI, to try calls, one level down. Before api.urls, whose own /api/docs/ these replace.
    path("api/docs/", SpectacularRedocView.as_view(url_name="api:schema", template_name="includes/api_docs.html"),
         name="api_docs"),
    path("api/docs/swagger/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="api_docs_swagger"),
    # REST API (issue 14): /api/v1/, /api/schema/, /api/docs/; the user's tokens page.
    path("api/", include("api.urls")),
    path("account/", include("api.urls_account")),
    path("webhooks/", include("webhooks.urls")),
    # Liveness for load balancers (core/health.py): no sign-in, no session, database and Redis.
    path("healthz", healthz, name="healthz"),
    # Prometheus metrics (docs/operations.md): a bearer token (METRICS_TOKEN) or an allowed network; else 404/403.
    path("metrics", metrics_view, name="metrics"),
    # Browsers ask for /favicon.ico on pages that link none (the MTurk and 500 pages, the API docs).
    path("favicon.ico", favicon),
    path("", home, name="home"),
]


# Error pages (issue 12 item 11): styled, with a way back, under every settings module. With DEBUG on,
# Django still shows its debug page for 404 and 500; 400 and 403 (role_required) always come here.
ERROR_PAGES = {
    400: ("Bad request", "The request could not be understood, so nothing was done."),
    403: ("Not allowed", "Your account does not have the role this page needs. "
                         "Ask an administrator if you think it should."),
    404: ("Page not found", "There is nothing at this address: the link may be old, or the item was removed."),
}


def _same_site_referer(request: HttpRequest) -> str | None:
    """The page the visitor came from, when it is on this site (never another site's or a javascript: URL)."""
    referer = request.META.get("HTTP_REFERER")
    if referer and url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()},
                                                   require_https=request.is_secure()):
        return referer
    return None


def _error_page(request: HttpRequest, status: int) -> HttpResponse:
    title, message = ERROR_PAGES[status]
    context = {"status": status, "title": title, "message": message, "back_url": _same_site_referer(request),
               "request_path": request.path}
    return render(request, "errors/http.html", context, status=status)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _error_page(request, 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _error_page(request, 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path == "/api" or request.path.startswith("/api/"):  # API clients read problem+json, not a page
        return api_not_found(request, exception)
    return _error_page(request, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    """A standalone page: no context processors, no database, no static manifest — whatever failed may fail again."""
    try:
        back = _same_site_referer(request)
    except DisallowedHost:  # a malformed Host header may be what failed (request.get_host)
        back = None
    return HttpResponseServerError(loader.get_template("errors/500.html").render({"back_url": back}))


handler400 = bad_request
handler403 = permission_denied
handler404 = page_not_found
handler500 = server_error
