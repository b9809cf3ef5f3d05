"""Limit/offset pagination with a hard ceiling, so a list is never the whole table at once."""
from rest_framework.pagination import LimitOffsetPagination


class Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 1000
