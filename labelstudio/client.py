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

import httpx
from label_studio_sdk import LabelStudio, PredictionRequest
from label_studio_sdk.core.api_error import ApiError

T = TypeVar("T")
DEFAULT_TIMEOUT = 60.0


class LabelStudioError(Exception):
    """A Label Studio request failed; ``str(error)`` is a human message, ``status`` the HTTP status."""

    def __init__(self, message: str, *, status: int | None = None, kind: str = "error") -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind  # "auth", "unreachable", "not_found", "config", "bad_request", "server", "error"


def _body_text(body: Any) -> str:
    """The useful part of an error body (Label Studio answers ``{"detail": ...}`` or field errors)."""
    if isinstance(body, dict):
        for key in ("detail", "validation_errors", "label_config", "error"):
            if key in body:
                value = body[key]
                return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return json.dumps(body, ensure_ascii=False)[:500]
    return str(body or "")[:500]


def translate(exc: Exception, *, url: str, what: str) -> LabelStudioError:
    """Turn an SDK / httpx exception into a :class:`LabelStudioError` naming the action that failed."""
    if isinstance(exc, LabelStudioError):
        return exc
    if isinstance(exc, ApiError):
        status, detail = exc.status_code, _body_text(exc.body)
        if status in (401, 403):
            return LabelStudioError(
                f"Label Studio at {url} refused the access token ({status}) while trying to {what}: {detail or 'check the token'}. "
                "Use the legacy API token from Account & Settings.", status=status, kind="auth")
        if status == 404:
            return LabelStudioError(f"Label Studio at {url} could not {what}: not found (404). "
                                    "The project or task may have been deleted in Label Studio.", status=status, kind="not_found")
        if status == 400 and "label_config" in json.dumps(exc.body, ensure_ascii=False, default=str):
            return LabelStudioError(f"Label Studio at {url} rejected the labeling config: {detail}", status=status, kind="config")
        if status is not None and status >= 500:
            return LabelStudioError(f"Label Studio at {url} failed while trying to {what} (server error {status}). {detail}",
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
    url = (url or "").strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise LabelStudioError(f"Label Studio URL {url!r} must start with http:// or https://", kind="bad_request")
    return url


class LabelStudioClient:
    """A thin wrapper over the SDK calls the bridge uses; each method raises only :class:`LabelStudioError`."""

    def __init__(self, url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = normalise_url(url)
        if not (token or "").strip():
            raise LabelStudioError("A Label Studio access token is required (Account & Settings → Legacy token).", kind="auth")
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
                raise LabelStudioError(f"{self.url} does not look like a Label Studio server (GET /api/version/ failed: "
                                       f"{exc.status or exc}). Check the URL.", status=exc.status, kind="not_found") from exc
            raise
        # /api/version/ is public: also hit an endpoint that needs the token.
        self._call("list projects", lambda: self.sdk.projects.list(page_size=1).items)
        version = getattr(info, "release", None) or getattr(info, "label_studio_os_package", None)
        if isinstance(version, dict):
            version = version.get("version")
        return str(version or "unknown")

    # --- projects ---------------------------------------------------------------------------
    def create_project(self, *, title: str, description: str, label_config: str) -> int:
        project = self._call("create the project",
                             lambda: self.sdk.projects.create(title=title[:50], description=description, label_config=label_config))
        return int(project.id)

    def get_project(self, project_id: int) -> dict[str, Any]:
        project = self._call(f"open project {project_id}", lambda: self.sdk.projects.get(id=project_id))
        return {"id": project.id, "title": project.title, "label_config": getattr(project, "label_config", "")}

    def project_exists(self, project_id: int) -> bool:
        try:
            self.sdk.projects.get(id=project_id)
        except ApiError as exc:
            if exc.status_code == 404:
                return False
            raise translate(exc, url=self.url, what=f"open project {project_id}") from exc
        except Exception as exc:  # noqa: BLE001
            raise translate(exc, url=self.url, what=f"open project {project_id}") from exc
        return True

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

    def import_predictions(self, predictions: list[dict[str, Any]], project_id: int) -> int:
        """``predictions``: dicts with task, result, model_version, score; returns how many were sent."""
        if not predictions:
            return 0
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

    def create_annotation(self, task_id: int, result: list[dict[str, Any]]) -> int:
        """Used by tests and demos to act as an annotator would."""
        annotation = self._call(f"annotate task {task_id}", lambda: self.sdk.annotations.create(id=task_id, result=result))
        return int(annotation.id)
