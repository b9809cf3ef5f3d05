"""Classifiers of every kind (keywords, ids, scores, trained, field values), their builds, pairs, routers."""
