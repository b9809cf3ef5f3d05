"""Annotator pages (every view requires annotation.annotate)."""
from django.urls import path

from annotation.views import annotator

app_name = "annotator"
urlpatterns = [
    path("", annotator.annotator_home, name="home"),
    path("next/", annotator.annotator_next, name="next"),
    path("assignments/<int:assignment_id>/", annotator.annotator_assignment, name="assignment"),
    path("assignments/<int:assignment_id>/return/", annotator.annotator_release, name="release"),
    path("assignments/<int:assignment_id>/hold/", annotator.annotator_hold, name="hold"),
    path("assignments/<int:assignment_id>/correct/", annotator.annotator_correct, name="correct"),
]
