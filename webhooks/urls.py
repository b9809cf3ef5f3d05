"""Manager pages of the webhooks (webhooks/views.py), mounted under /webhooks/."""
from django.urls import path

from webhooks import views

app_name = "webhooks"
urlpatterns = [
    path("", views.endpoints, name="endpoints"),
    path("endpoints/<int:endpoint_id>/delete/", views.endpoint_delete, name="endpoint_delete"),
    path("deliveries/", views.deliveries, name="deliveries"),
    path("deliveries/<int:delivery_id>/replay/", views.delivery_replay, name="delivery_replay"),
]
