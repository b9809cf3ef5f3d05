"""/account/: the signed-in user's own settings (API tokens)."""
from django.urls import path

from api.views import account

app_name = "account"
urlpatterns = [
    path("tokens/", account.tokens_page, name="tokens"),
    path("tokens/<int:token_id>/revoke/", account.token_revoke, name="token_revoke"),
    path("oidc/authenticate/", account.oidc_start, name="oidc_start"),
    path("oidc/callback/", account.oidc_callback, name="oidc_callback"),
]
