"""Small template helpers of the report pages."""
from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """mapping[key], or None: lets a template look up a label by a computed key."""
    if isinstance(mapping, dict):
        return mapping.get(key)
    return None
