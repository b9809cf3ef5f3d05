"""Manager pages (every view requires annotation.read_reports).

Certification pages are added below by their owner, one line each.
"""
from django.urls import path

from estimation.views import certification, reports, training_advice

app_name = "reports"
urlpatterns = [
    path("", reports.topics_overview, name="topics"),
    path("topics/<int:topic_id>/", reports.topic_report, name="topic"),
    path("topics/<int:topic_id>/print/", reports.topic_report_print, name="topic_print"),
    path("topics/<int:topic_id>/report.csv", reports.topic_report_csv, name="topic_csv"),
    path("topics/<int:topic_id>/report.json", reports.topic_report_json, name="topic_json"),
    path("topics/<int:topic_id>/judgments.csv", reports.topic_judgments_csv, name="topic_judgments_csv"),
    path("topics/<int:topic_id>/judgments.jsonl", reports.topic_judgments_jsonl, name="topic_judgments_jsonl"),
    # --- certification (estimation/views/certification.py) ---
    path("topics/<int:topic_id>/certification/", certification.certification_topic, name="certification"),
    path("certification/<int:plan_id>/", certification.certification_plan, name="certification_plan"),
    path("certification/<int:plan_id>/lock/", certification.certification_plan_lock_view, name="certification_lock"),
    path("certification/<int:plan_id>/replan/", certification.certification_plan_replan,
         name="certification_replan"),
    path("certification/<int:plan_id>/verdict/", certification.certification_verdict, name="certification_verdict"),
    path("certification/training-advice/", training_advice.training_advice, name="training_advice"),
]
