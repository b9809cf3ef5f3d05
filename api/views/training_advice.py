"""POST /api/v1/training-advice/: when to stop training and start certifying (seed 004 Sec. 3), the same
service as the page (estimation.services.training_advice). Analysts and managers; nothing is stored."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import ReadReports
from api.serializers_training import TrainingAdviceResultSerializer, TrainingAdviceSerializer
from api.views.common import PROBLEMS, validated
from estimation.services.training_advice import training_stop_advise
from estimation.stats.training_stop import LearningPoint


class TrainingAdvice(APIView):
    permission_classes = [ReadReports]

    @extend_schema(request=TrainingAdviceSerializer, responses={200: TrainingAdviceResultSerializer, **PROBLEMS},
                   tags=["certification"],
                   description="From the learning curve measured so far (training size, cross-validated F1), the "
                               "certification sample each point would need, the total, a fitted curve projecting "
                               "the total forward, and the advice: `continue`, `stop` (certify with `test_size` "
                               "documents) or `not_reachable`, with the reason and the sequential-bias caveat. "
                               "Sizes rest on a lower confidence bound of each estimate (`margin_confidence`).")
    def post(self, request: Request) -> Response:
        data = validated(TrainingAdviceSerializer, request.data)
        points = [LearningPoint(size=p["size"], estimate=p["f1"], cv_documents=p["cv_documents"])
                  for p in data.pop("points")]
        advice = training_stop_advise(points=points, **data)
        return Response(advice.as_dict())
