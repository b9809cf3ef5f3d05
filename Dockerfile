FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    APP_VAR_DIR=/app/var
WORKDIR /app
# The lockfile pins every package, transitive ones too, with the sha256 of each file (pip-compile
# --generate-hashes from requirements.txt; docs/deploy.md): --require-hashes refuses anything else.
COPY requirements.lock .
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
# .dockerignore keeps .venv/, var/ (local databases, uploads), .git and .env out of the image.
COPY . .
# The app user owns the writable directories; compose mounts its `media` volume on /app/var/media, and a
# named volume copies the ownership of the image's directory when it is first created.
RUN useradd --create-home --uid 1000 app \
    && mkdir -p /app/var/media /app/var/staticfiles \
    && chown -R app:app /app/var
USER app
# Static files are collected at build time into the image (hashed and gzipped names that
# WhiteNoise serves from gunicorn; docs/deploy.md). collectstatic needs settings that load:
# a build-time key that is never used at run time.
RUN DJANGO_SETTINGS_MODULE=config.settings.production DJANGO_SECRET_KEY=build-only-$(python -c "print('x'*60)") \
    python manage.py collectstatic --noinput
EXPOSE 8000
# Workers, threads, timeouts and recycling from config/gunicorn.py (WEB_CONCURRENCY, GUNICORN_THREADS; docs/deploy.md).
CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application"]
