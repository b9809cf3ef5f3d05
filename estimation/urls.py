"""Manager pages (every view requires annotation.read_reports).

Certification pages are added below by their owner, one line each.
"""
from django.urls import path

from estimation.views import reports

app_name = "reports"
urlpatterns = [
    path("", reports.topics_overview, name="topics"),
    path("topics/<int:topic_id>/", reports.topic_report, name="topic"),
    path("topics/<int:topic_id>/print/", reports.topic_report_print, name="topic_print"),
    path("topics/<int:topic_id>/report.csv", reports.topic_report_csv, name="topic_csv"),
    path("topics/<int:topic_id>/report.json", reports.topic_report_json, name="topic_json"),
    # --- certification (estimation/views/certification.py) ---
]
