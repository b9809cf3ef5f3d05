"""The home page sends each role to where its work starts."""
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.roles import ANNOTATE, CONFIGURE, READ_REPORTS


def home(request: HttpRequest) -> HttpResponse:
    """Public: anonymous visitors go to sign-in; a signed-in user goes to their role's start page."""
    user = request.user
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if user.has_perm(CONFIGURE):
        return redirect("analyst:topics")
    if user.has_perm(READ_REPORTS):
        return redirect("reports:topics")
    if user.has_perm(ANNOTATE):
        return redirect("/annotate/")
    if user.is_staff:
        return redirect("admin:index")
    # Signed in but no role yet: say so rather than showing a 403.
    return render(request, "home.html", status=200)
