FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN useradd --create-home app && mkdir -p /app/var && chown -R app /app/var
USER app
# Static files are collected at build time into the image (hashed and gzipped names that
# WhiteNoise serves from gunicorn; docs/deploy.md). collectstatic needs settings that load:
# a build-time key that is never used at run time.
RUN DJANGO_SETTINGS_MODULE=config.settings.production DJANGO_SECRET_KEY=build-only-$(python -c "print('x'*60)") \
    python manage.py collectstatic --noinput
EXPOSE 8000
# Workers, threads, timeouts and recycling from config/gunicorn.py (WEB_CONCURRENCY, GUNICORN_THREADS; docs/deploy.md).
CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application"]
