"""The error a command reports in one line (`hf-seq2seq VERB: message`, exit status 1) instead of a traceback.
Standard library only: the command line imports it before torch."""


class FolderError(Exception):
    """A folder given to a command that is not what the command needs (a model folder with files missing, an
    export of the wrong kind, ...); the message names what is wrong and what to do."""
