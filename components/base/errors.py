"""User-facing errors. The UI shows them on the message line (components/common/ui.py), the CLI prints
them and exits 2."""


class UserError(Exception):
    """Something the user can fix; the message says what and how."""


class MediaError(UserError):
    """A video, image or subtitle file is missing, empty, truncated, undecodable or badly encoded."""


class DataFormatError(UserError):
    """An annotation/result/trace file is malformed; the message names the file, record and key."""
