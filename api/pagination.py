"""Limit/offset pagination with hard ceilings, so a list is never the whole table at once and a deep page never
makes the database walk past millions of rows: `limit` is capped at `max_limit`, and an `offset` past
MAX_OFFSET is refused (400) with the reason — narrow the list with its filters (e.g. a topic's judgments
`?since=`) instead."""
from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

MAX_OFFSET = 100_000


class Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 1000

    def get_offset(self, request: Request) -> int:
        raw = request.query_params.get(self.offset_query_param, "")
        if raw.strip().isdigit() and int(raw) > MAX_OFFSET:
            raise ValidationError({self.offset_query_param: [
                f"An offset past {MAX_OFFSET:,} is not served (the database would walk past every row before it); "
                "narrow the list with its filters instead."]})
        return super().get_offset(request)
