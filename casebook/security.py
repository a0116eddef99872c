"""What keeps uploaded files inert and pages locked down: content sniffing, safe stored names and
the Content-Security-Policy headers.

Uploaded files are served from Casebook's own origin, so the browser must never treat one as a
page: the type comes from the file's first bytes (never its name), only raster images are shown
inline, and every media response carries ``nosniff`` and a CSP that forbids scripts.
"""
from __future__ import annotations

from pathlib import PurePosixPath

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.utils.text import slugify

from casebook.images import sniff_media_type

EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/bmp": ".bmp",
              "image/tiff": ".tif", "image/webp": ".webp", "application/pdf": ".pdf"}
TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
INLINE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/bmp", "image/webp"}

MEDIA_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"
# Pages: everything from our own origin only. Inline script/style stay allowed because a few
# templates carry small inline scripts; no external origin, plugin, framing or foreign form target.
PAGE_CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data: blob:; object-src 'none'; base-uri 'self'; form-action 'self'; "
            "frame-ancestors 'none'")


def safe_file_name(name: str, data: bytes) -> str:
    """A storage name that cannot pass for a page: a slug of the stem plus the extension of the
    sniffed type (``.txt``/``.md`` kept for text, ``.bin`` for anything else)."""
    path = PurePosixPath(name.replace("\\", "/"))
    stem = slugify(path.stem, allow_unicode=True)[:80] or "file"
    extension = EXTENSIONS.get(sniff_media_type(data[:18]))
    if extension is None:
        extension = path.suffix.lower() if path.suffix.lower() in TEXT_SUFFIXES else ".bin"
    return stem + extension


class ContentSecurityPolicyMiddleware:
    """Adds ``PAGE_CSP`` to responses that do not set their own (media responses set a stricter one)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", PAGE_CSP)
        return response


def _fernet():
    """Fernet keyed from SECRET_KEY: secrets that must wait in the database for a worker are kept
    encrypted there (the worker shares the settings, hence the key)."""
    import base64
    import hashlib

    from cryptography.fernet import Fernet

    digest = hashlib.sha256(b"casebook-sealed-secret:" + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def seal(secret: str) -> str:
    """``secret`` encrypted for storage (e.g. in ``Job.params``); empty stays empty."""
    return _fernet().encrypt(secret.encode()).decode() if secret else ""


def unseal(sealed: str) -> str:
    """The secret from :func:`seal`; raises ValueError when it was sealed under another SECRET_KEY."""
    from cryptography.fernet import InvalidToken

    if not sealed:
        return ""
    try:
        return _fernet().decrypt(sealed.encode()).decode()
    except InvalidToken as exc:
        raise ValueError("the stored secret cannot be decrypted (was SECRET_KEY changed?); start the job again") from exc


class ThrottledLoginView(LoginView):
    """Django's login, refusing further attempts for a while after too many failures for the same
    username from the same address (counted in Django's cache; a lockout never reveals whether
    the username exists)."""

    def _key(self) -> str:
        username = self.request.POST.get("username", "").strip().lower()[:150]
        return f"login-failures:{self.request.META.get('REMOTE_ADDR', '')}:{username}"

    def post(self, request, *args, **kwargs):
        if cache.get(self._key(), 0) >= settings.CASEBOOK_LOGIN_ATTEMPTS:
            minutes = max(1, settings.CASEBOOK_LOGIN_LOCKOUT_SECONDS // 60)
            form = self.get_form()
            form.errors.clear()
            context = self.get_context_data(form=form, locked_out=minutes)
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        key = self._key()
        cache.add(key, 0, settings.CASEBOOK_LOGIN_LOCKOUT_SECONDS)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, settings.CASEBOOK_LOGIN_LOCKOUT_SECONDS)
        return super().form_invalid(form)

    def form_valid(self, form):
        cache.delete(self._key())
        return super().form_valid(form)
