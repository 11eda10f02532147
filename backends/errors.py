"""Errors raised by backends. Messages are one readable sentence and never contain secrets."""


class BackendError(Exception):
    """A model backend could not be built or could not answer."""


class UnknownBackendError(BackendError):
    pass


class TooManyImagesError(BackendError):
    """The request carries more images than the backend accepts (callers may step frames down)."""

    def __init__(self, message: str, *, limit: int | None = None, sent: int | None = None):
        super().__init__(message)
        self.limit = limit
        self.sent = sent


class ReplayMissError(BackendError):
    """A replay backend was asked a call that is not in its trace."""


class GenerationStopped(BackendError):
    """Generation was stopped by the user."""
