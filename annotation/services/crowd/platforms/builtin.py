"""The built-in annotator pages (Topic.Crowd.LOCAL): annotators with an account claim open HITs on /annotate/.

Nothing is published anywhere (assignment_claim hands out open HITs), nothing is paid through a
platform (an assignment costs its reward), submissions count at once and there is nothing to
reconcile: every default of CrowdPlatform.
"""
from __future__ import annotations

from annotation.models import Topic
from annotation.services.crowd.platforms import CrowdPlatform, platform_register


class BuiltinPlatform(CrowdPlatform):
    key = Topic.Crowd.LOCAL


platform_register(BuiltinPlatform())
