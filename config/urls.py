from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from annotation.views.home import home

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("annotate/", include("annotation.urls_annotator")),
    path("mturk/", include("annotation.urls_mturk")),
    path("analyst/", include("annotation.urls_analyst")),
    path("reports/", include("estimation.urls")),
    path("", home, name="home"),
]
