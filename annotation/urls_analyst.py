"""Analyst pages (every view requires annotation.configure_topics)."""
from django.urls import path

from annotation.views import classifiers, corpora, topics

app_name = "analyst"
urlpatterns = [
    path("", topics.topics_list, name="topics"),
    path("topics/new/", topics.topic_new, name="topic_new"),
    path("topics/<int:topic_id>/", topics.topic_detail, name="topic"),
    path("topics/<int:topic_id>/edit/", topics.topic_edit, name="topic_edit"),
    path("topics/<int:topic_id>/hit-preview/", topics.topic_hit_preview, name="topic_hit_preview"),
    path("topics/<int:topic_id>/launch/", topics.topic_launch, name="topic_launch"),
    path("topics/<int:topic_id>/top-up/", topics.topic_topup, name="topic_topup"),
    path("topics/<int:topic_id>/pause/", topics.topic_pause_or_resume, name="topic_pause"),
    path("corpora/", corpora.corpora_list, name="corpora"),
    path("corpora/upload/", corpora.corpus_upload, name="corpus_upload"),
    path("corpora/uploads/<int:upload_id>/", corpora.upload_detail, name="upload"),
    path("corpora/uploads/<int:upload_id>/retry/", corpora.upload_retry, name="upload_retry"),
    path("corpora/uploads/<int:upload_id>/status.json", corpora.upload_status, name="upload_status"),
    path("corpora/<int:corpus_id>/", corpora.corpus_detail, name="corpus"),
    path("corpora/<int:corpus_id>/classifiers/keywords/", classifiers.classifier_keywords_new, name="classifier_keywords"),
    path("corpora/<int:corpus_id>/classifiers/preview/", classifiers.keyword_preview_fragment, name="keyword_preview"),
    path("corpora/<int:corpus_id>/classifiers/suggest/", classifiers.neighbour_terms, name="neighbour_terms"),
    path("corpora/<int:corpus_id>/classifiers/upload/", classifiers.classifier_upload, name="classifier_upload"),
    path("classifiers/<int:classifier_id>/", classifiers.classifier_detail, name="classifier"),
    path("classifiers/<int:classifier_id>/threshold/", classifiers.classifier_threshold, name="classifier_threshold"),
]
