"""The one place that talks to a Label Studio server (label-studio-sdk 2.x ``LabelStudio`` client).

Every failure — bad token, server unreachable, project deleted, label config rejected, odd
answers — comes out as :class:`LabelStudioError` with a message an annotator can act on, so the
command, the background job and the web page never show an SDK traceback.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from casebook.lazy import lazy_module

httpx = lazy_module("httpx")  # with the SDK, imported when Label Studio is first called (start-up)

T = TypeVar("T")
DEFAULT_TIMEOUT = 60.0


class LabelStudioError(Exception):
    """A Label Studio request failed; ``str(error)`` is a human message, ``status`` the HTTP status."""

    def __init__(self, message: str, *, status: int | None = None, kind: str = "error") -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind  # "auth", "unreachable", "not_found", "not_label_studio", "config", "bad_request", "server", "error"


def _body_text(body: Any) -> str:
    """The useful part of an error body: Label Studio answers ``{"detail": "Validation error",
    "validation_errors": {...}}``, and the second part is the one that says what is wrong."""
    if isinstance(body, dict):
        parts = []
        for key in ("detail", "validation_errors", "label_config", "error"):
            value = body.get(key)
            if value:
                parts.append(str(value).rstrip(". ") if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        return ": ".join(parts) if parts else json.dumps(body, ensure_ascii=False)[:500]
    return str(body or "").rstrip(". ")[:500]


def translate(exc: Exception, *, url: str, what: str) -> LabelStudioError:
    """Turn an SDK / httpx exception into a :class:`LabelStudioError` naming the action that failed."""
    if isinstance(exc, LabelStudioError):
        return exc
    from label_studio_sdk.core.api_error import ApiError  # the SDK is imported where it is used (start-up)

    if isinstance(exc, ApiError):
        status, detail = exc.status_code, _body_text(exc.body)
        if status in (401, 403):
            return LabelStudioError(
                f"Label Studio at {url} refused the access token ({status}) while trying to {what}: {detail or 'check the token'}. "
                "Use the legacy API token from Account & Settings.", status=status, kind="auth")
        if status == 404:
            return LabelStudioError(f"Label Studio at {url} could not {what}: not found (404). "
                                    "The project or task may have been deleted in Label Studio."
                                    + (f" ({detail})" if detail and detail.lower() not in ("not found", "") else ""),
                                    status=status, kind="not_found")
        if status == 400 and "label_config" in json.dumps(exc.body, ensure_ascii=False, default=str):
            return LabelStudioError(f"Label Studio at {url} rejected the labeling config: {detail}", status=status, kind="config")
        if status is not None and status >= 500:
            return LabelStudioError(f"Label Studio at {url} failed while trying to {what} (server error {status}): {detail}",
                                    status=status, kind="server")
        return LabelStudioError(f"Label Studio at {url} refused to {what} ({status}): {detail}", status=status, kind="bad_request")
    if isinstance(exc, httpx.TimeoutException):
        return LabelStudioError(f"Label Studio at {url} did not answer in time while trying to {what}.", kind="unreachable")
    if isinstance(exc, (httpx.ConnectError, httpx.NetworkError)):
        return LabelStudioError(f"Cannot reach Label Studio at {url} ({exc}). Is the server running and the URL right?",
                                kind="unreachable")
    if isinstance(exc, httpx.HTTPError):
        return LabelStudioError(f"HTTP error talking to Label Studio at {url} while trying to {what}: {exc}", kind="unreachable")
    if isinstance(exc, (ValueError, json.JSONDecodeError)):
        return LabelStudioError(f"Label Studio at {url} sent an answer that is not what an API sends while trying to {what} "
                                f"({exc}). Is {url} really a Label Studio server?", kind="bad_request")
    return LabelStudioError(f"Label Studio at {url}: could not {what}: {exc}")


def normalise_url(url: str) -> str:
    """``HTTP://Host:80/`` → ``http://host``: scheme and host lower-cased, default port and trailing slash dropped."""
    from urllib.parse import urlsplit, urlunsplit

    url = (url or "").strip().rstrip("/")
    if not url.lower().startswith(("http://", "https://")):
        raise LabelStudioError(f"Label Studio URL {url!r} must start with http:// or https://", kind="bad_request")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise LabelStudioError(f"Label Studio URL {url!r} is not a valid URL ({exc})", kind="bad_request") from None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if not host:
        raise LabelStudioError(f"Label Studio URL {url!r} names no host", kind="bad_request")
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[scheme]
    netloc = host if port in (None, default) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), "", ""))


class LabelStudioClient:
    """A thin wrapper over the SDK calls the bridge uses; each method raises only :class:`LabelStudioError`."""

    def __init__(self, url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = normalise_url(url)
        if not (token or "").strip():
            raise LabelStudioError("A Label Studio access token is required (Account & Settings → Legacy token).", kind="auth")
        from label_studio_sdk import LabelStudio

        self.sdk = LabelStudio(base_url=self.url, api_key=token.strip(), timeout=timeout, max_retries=0)

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - every failure becomes one clear exception type
            raise translate(exc, url=self.url, what=what) from exc

    @contextmanager
    def _step(self, what: str) -> Iterator[None]:
        try:
            yield
        except Exception as exc:  # noqa: BLE001
            raise translate(exc, url=self.url, what=what) from exc

    # --- checks -----------------------------------------------------------------------------
    def check(self) -> str:
        """Fail early with a clear message when the server or the token is wrong; returns the LS version."""
        try:
            info = self._call("read its version", lambda: self.sdk.versions.get())
        except LabelStudioError as exc:
            if exc.kind in ("not_found", "bad_request"):
                raise LabelStudioError(f"{self.url} is not a Label Studio server (GET /api/version/ answered "
                                       f"{exc.status or 'something else'}). Check the URL.", status=exc.status,
                                       kind="not_label_studio") from exc
            raise
        if not any(getattr(info, k, None) for k in ("release", "label_studio_os_package")):
            raise LabelStudioError(f"{self.url} is not a Label Studio server (GET /api/version/ names no Label Studio "
                                   "release). Check the URL.", kind="not_label_studio")
        # /api/version/ is public: also hit an endpoint that needs the token.
        self._call("list projects", lambda: self.sdk.projects.list(page_size=1).items)
        version = getattr(info, "release", None) or getattr(info, "label_studio_os_package", None)
        if isinstance(version, dict):
            version = version.get("version")
        return str(version or "unknown")

    # --- projects ---------------------------------------------------------------------------
    def create_project(self, *, title: str, description: str, label_config: str) -> tuple[int, str]:
        """The new project's id and its creation stamp (see :func:`project_stamp`)."""
        project = self._call("create the project",
                             lambda: self.sdk.projects.create(title=title[:50], description=description, label_config=label_config))
        return int(project.id), project_stamp(project)

    def get_project(self, project_id: int) -> dict[str, Any]:
        project = self._call(f"open project {project_id}", lambda: self.sdk.projects.get(id=project_id))
        return {"id": project.id, "title": project.title, "label_config": getattr(project, "label_config", ""),
                "description": getattr(project, "description", "") or "", "created": project_stamp(project)}

    def find_project(self, project_id: int) -> dict[str, Any] | None:
        """The project as :meth:`get_project` gives it, or None when the server has no such project."""
        try:
            return self.get_project(project_id)
        except LabelStudioError as exc:
            if exc.kind == "not_found":
                return None
            raise

    def project_exists(self, project_id: int) -> bool:
        return self.find_project(project_id) is not None

    def update_project(self, project_id: int, *, title: str, description: str, label_config: str) -> None:
        self._call(f"update project {project_id}", lambda: self.sdk.projects.update(
            id=project_id, title=title[:50], description=description, label_config=label_config))

    def delete_project(self, project_id: int) -> None:
        self._call(f"delete project {project_id}", lambda: self.sdk.projects.delete(id=project_id))

    # --- tasks and predictions -------------------------------------------------------------
    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> list[int]:
        """Import task data dicts; returns the new task ids in the same order."""
        if not tasks:
            return []
        result = self._call(f"import {len(tasks)} task(s) into project {project_id}", lambda: self.sdk.projects.import_tasks(
            id=project_id, request=tasks, return_task_ids=True))
        ids = list(getattr(result, "task_ids", None) or [])
        if len(ids) != len(tasks):
            raise LabelStudioError(f"Label Studio at {self.url} created {len(ids)} task(s) for {len(tasks)} sent; "
                                   "cannot match them to Casebook objects.")
        return [int(i) for i in ids]

    def update_task_data(self, task_id: int, data: dict[str, Any]) -> None:
        self._call(f"update task {task_id}", lambda: self.sdk.tasks.update(id=str(task_id), data=data))

    def get_task(self, task_id: int) -> dict[str, Any]:
        """The task's data and annotations (plain dicts)."""
        task = self._call(f"read task {task_id}", lambda: self.sdk.tasks.get(id=str(task_id)))
        annotations = self._call(f"read the annotations of task {task_id}", lambda: list(self.sdk.annotations.list(id=task_id)))
        return {"id": task.id, "data": dict(task.data or {}),
                "annotations": [{"id": a.id, "result": list(a.result or [])} for a in annotations]}

    def replace_predictions(self, task_id: int, predictions: list[dict[str, Any]], *, prefix: str) -> None:
        """Delete the task's predictions whose model_version starts with ``prefix``, then send ``predictions``."""
        with self._step(f"replace the predictions of task {task_id}"):
            for old in self.sdk.predictions.list(task=task_id):
                if str(old.model_version or "").startswith(prefix):
                    self.sdk.predictions.delete(id=old.id)
            for p in predictions:
                self.sdk.predictions.create(task=task_id, result=p["result"], model_version=p["model_version"],
                                            score=p.get("score"))

    def import_predictions(self, predictions: list[dict[str, Any]], project_id: int) -> int:
        """``predictions``: dicts with task, result, model_version, score; returns how many were sent."""
        if not predictions:
            return 0
        from label_studio_sdk import PredictionRequest

        request = [PredictionRequest(**p) for p in predictions]
        self._call(f"import {len(predictions)} prediction(s) into project {project_id}",
                   lambda: self.sdk.projects.import_predictions(id=project_id, request=request))
        return len(request)

    def export_tasks(self, project_id: int) -> list[dict[str, Any]]:
        """All tasks of the project with their annotations (plain dicts, Label Studio JSON export)."""
        data = self._call(f"export project {project_id}", lambda: self.sdk.projects.exports.as_json(project_id))
        if not isinstance(data, list):
            raise LabelStudioError(f"Label Studio at {self.url} sent an export of project {project_id} that is not a task list.")
        return data

    def users(self) -> dict[int, str]:
        """Label Studio user id → the name shown for them (email, else username)."""
        rows = self._call("list its users", lambda: list(self.sdk.users.list()))
        return {int(u.id): (u.email or u.username or f"user {u.id}") for u in rows}

    def create_annotation(self, task_id: int, result: list[dict[str, Any]], *, user_id: int | None = None) -> int:
        """Used by tests and demos to act as an annotator would (``user_id``: as that Label Studio user)."""
        extra = {"completed_by": user_id} if user_id is not None else {}
        annotation = self._call(f"annotate task {task_id}", lambda: self.sdk.annotations.create(id=task_id, result=result, **extra))
        return int(annotation.id)


def project_stamp(project: Any) -> str:
    """The project's ``created_at`` as text: with the project id, it names the server whatever its URL."""
    created = getattr(project, "created_at", None)
    return created.isoformat() if hasattr(created, "isoformat") else str(created or "")
