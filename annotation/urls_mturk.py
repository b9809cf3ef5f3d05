from django.urls import path

from annotation.views import mturk

app_name = "mturk"
urlpatterns = [
    path("hit/<int:hit_id>/", mturk.hit_page, name="hit"),
]
