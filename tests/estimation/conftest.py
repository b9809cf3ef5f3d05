import pytest

from tests.factories import judged_export_world


@pytest.fixture
def judged():
    """A launched topic whose first HITs are judged by three workers (tests/factories.py, judged_export_world)."""
    return judged_export_world()
