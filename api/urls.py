"""/api/: the versioned API (v1), its OpenAPI schema and the browsable documentation."""
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from api.errors import api_unknown_path
from api.views import (
    account,
    adjudication,
    bonuses,
    classifier_builds,
    classifiers,
    corpora,
    external_corpora,
    model_judge,
    report_exports,
    reports,
    topic_sets,
    topics,
    training_advice,
)

app_name = "api"

v1 = [
    path("me/", account.MeView.as_view(), name="me"),
    path("corpora/", corpora.CorpusCreate.as_view(), name="corpora"),
    path("corpora/<int:corpus_id>/", corpora.CorpusDetail.as_view(), name="corpus"),
    path("corpora/<int:corpus_id>/imports/", corpora.CorpusImport.as_view(), name="corpus_import"),
    path("imports/<int:upload_id>/", corpora.ImportDetail.as_view(), name="import"),
    path("corpora/<int:corpus_id>/classifiers/", classifiers.ClassifierList.as_view(), name="classifiers"),
    path("corpora/<int:corpus_id>/classifiers/keywords/", classifiers.KeywordsCreate.as_view(),
         name="classifier_keywords"),
    path("corpora/<int:corpus_id>/classifiers/ids/", classifiers.IdsCreate.as_view(), name="classifier_ids"),
    path("corpora/<int:corpus_id>/classifiers/scores/", classifiers.ScoresCreate.as_view(), name="classifier_scores"),
    path("corpora/<int:corpus_id>/classifiers/retrieved/", classifiers.RetrievedCreate.as_view(),
         name="classifier_retrieved"),
    path("classifiers/<int:classifier_id>/", classifiers.ClassifierDetail.as_view(), name="classifier"),
    path("corpora/<int:corpus_id>/classifier-builds/", classifier_builds.ClassifierBuildCreate.as_view(),
         name="classifier_builds"),
    path("classifier-builds/<int:build_id>/", classifier_builds.ClassifierBuildDetail.as_view(),
         name="classifier_build"),
    path("topics/", topics.TopicList.as_view(), name="topics"),
    path("topics/<int:topic_id>/", topics.TopicDetail.as_view(), name="topic"),
    path("topics/<int:topic_id>/plan/", topics.TopicPlan.as_view(), name="topic_plan"),
    path("topics/<int:topic_id>/quote/", topics.TopicQuote.as_view(), name="topic_quote"),
    path("topics/<int:topic_id>/launch/", topics.TopicLaunch.as_view(), name="topic_launch"),
    path("topics/<int:topic_id>/pause/", topics.TopicPause.as_view(), name="topic_pause"),
    path("topics/<int:topic_id>/resume/", topics.TopicResume.as_view(), name="topic_resume"),
    path("topics/<int:topic_id>/progress/", topics.TopicProgress.as_view(), name="topic_progress"),
    path("topics/<int:topic_id>/samples/", topics.TopicSamples.as_view(), name="topic_samples"),
    path("topics/<int:topic_id>/hits/", topics.TopicHits.as_view(), name="topic_hits"),
    path("topics/<int:topic_id>/judgments/", topics.TopicJudgments.as_view(), name="topic_judgments"),
    path("topics/<int:topic_id>/adjudication/", adjudication.TopicAdjudication.as_view(), name="topic_adjudication"),
    path("topic-sets/", topic_sets.TopicSetList.as_view(), name="topic_sets"),
    path("topic-sets/<int:topic_id>/", topic_sets.TopicSetDetail.as_view(), name="topic_set"),
    path("topic-sets/<int:topic_id>/routers/", topic_sets.TopicSetRouters.as_view(), name="topic_set_routers"),
    path("topic-sets/<int:topic_id>/routers/csv/", topic_sets.RouterCsvCreate.as_view(), name="router_csv"),
    path("topic-sets/<int:topic_id>/routers/keywords/", topic_sets.RouterKeywordsCreate.as_view(),
         name="router_keywords"),
    path("topic-sets/<int:topic_id>/preview/", topic_sets.TopicSetPreview.as_view(), name="topic_set_preview"),
    path("topic-sets/<int:topic_id>/launch/", topic_sets.TopicSetLaunch.as_view(), name="topic_set_launch"),
    path("topic-sets/<int:topic_id>/router-builds/", topic_sets.TopicSetRouterBuilds.as_view(),
         name="topic_set_router_builds"),
    path("router-builds/<int:build_id>/", topic_sets.RouterBuildDetail.as_view(), name="router_build"),
    path("routers/<int:router_id>/", topic_sets.RouterDetail.as_view(), name="router"),
    path("routers/<int:router_id>/archive/", topic_sets.RouterArchive.as_view(), name="router_archive"),
    path("topics/<int:topic_id>/report/", reports.ReportLatest.as_view(), name="report"),
    path("topics/<int:topic_id>/report/csv/", report_exports.ReportCsv.as_view(), name="report_csv"),
    path("topics/<int:topic_id>/report/versions/", reports.ReportVersions.as_view(), name="report_versions"),
    path("topics/<int:topic_id>/report/versions/<int:version>/", reports.ReportVersion.as_view(),
         name="report_version"),
    path("topics/<int:topic_id>/certification-plans/", reports.CertificationPlans.as_view(),
         name="certification_plans"),
    path("certification-plans/<int:plan_id>/", reports.CertificationPlanDetail.as_view(), name="certification_plan"),
    path("certification-plans/<int:plan_id>/lock/", reports.CertificationPlanLock.as_view(),
         name="certification_lock"),
    path("certification-plans/<int:plan_id>/verdict/", reports.CertificationVerdict.as_view(),
         name="certification_verdict"),
    path("training-advice/", training_advice.TrainingAdvice.as_view(), name="training_advice"),
    *model_judge.urlpatterns,  # the model judge (issue 28): quote, runs, report
    *external_corpora.urlpatterns,  # corpora that stay in the team's engine (issue 29)
    *bonuses.urlpatterns,  # bonuses of a topic's workers (issue 27): quote, grant, list
]

urlpatterns = [
    # Where a client guessing from the version prefix looks for the schema: the one schema, at /api/schema/.
    path("v1/schema/", RedirectView.as_view(pattern_name="api:schema", permanent=False, query_string=True)),
    path("v1/", include(v1)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI from the sidecar's static files, its script served apart (no inline script: the CSP).
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    # Last: every other path under /api/ (/api/, /api/v1/, a typo) is a problem+json 404, not the HTML page.
    re_path(r"^(?P<unknown>.*)$", api_unknown_path),
]
