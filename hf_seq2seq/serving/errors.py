"""The translation service's errors: `ServeError` is answered as ``{"error": message}`` with its status; the
others tell a request's handler why its translations did not come."""

from __future__ import annotations


class ServeError(Exception):
    """An error answered as ``{"error": message}`` with `status` (and `headers`)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


class QueueFull(ServeError):
    def __init__(self, queued: int, retry_after: int):
        super().__init__(
            503,
            f"the server is busy: {queued} sentences are queued; retry in {retry_after} s",
            {"Retry-After": str(retry_after)},
        )


class BatchFailed(Exception):
    """The worker's batch call raised on the batch that held a request's sentences."""


class BatchTimeout(Exception):
    """The worker's batch call ran past the batch timeout; `call` is its future, still running."""

    def __init__(self, seconds: float, call):
        super().__init__(f"translation timed out: the model took more than {seconds:g} s on the batch")
        self.call = call


class ClientGone(Exception):
    """The client disconnected before its translations were ready."""
