"""WSGI entry point (gunicorn casebook.wsgi)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casebook.settings")
application = get_wsgi_application()
