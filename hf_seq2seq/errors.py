"""The base of the errors the package raises for what a user gave it, and the folder errors every layer shares.

Every error class of the package (outside `hf_seq2seq.serving`, whose errors answer HTTP requests, but for its
API keys file's error, a user's) derives from
:class:`HfSeq2SeqError`, beside the built-in class it has always been (a `ValueError`, a `FileNotFoundError`,
...), so that `except ValueError` keeps catching what it caught. The command line (`hf_seq2seq.cli.main`)
reports any of them one way: `hf-seq2seq VERB: message`, exit status 1, no traceback (the message says what is
wrong and what to do).
"""


class HfSeq2SeqError(Exception):
    """What a user gave the package that it cannot use (a folder, a file, a flag's value, a document, ...); the
    message names what is wrong and what to do."""


class FolderError(HfSeq2SeqError):
    """A folder given to a command that is not what the command needs (a model folder with files missing, an
    export of the wrong kind, ...); the message names what is wrong and what to do."""


class ExportError(FolderError, ValueError):
    """A folder that cannot be exported (not a `transformer_mt` model), or a folder that is not an export."""
