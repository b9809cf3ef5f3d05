"""Topics and topic sets: create, settings, pause/resume, launch."""
