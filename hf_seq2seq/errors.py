"""The error every command reports as a clear message: a folder that is not what the command needs."""


class FolderError(Exception):
    """A folder given to a command that is not what the command needs (a model folder with files missing, an
    export of the wrong kind, ...); the message names what is wrong and what to do."""


class ExportError(FolderError, ValueError):
    """A folder that cannot be exported (not a `transformer_mt` model), or a folder that is not an export."""
