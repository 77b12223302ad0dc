"""qscheme's errors as exceptions: one class per stable error code (scheme/status.hpp).

Every error the engines, the oracle or this package report is an ``qscheme.Error`` subclass
named after its code (``malformed-scheme`` is ``MalformedScheme``), carrying the code, the
message (what is wrong and how to fix it) and, where there is one, the index of the element,
scale or text byte it refers to.
"""

from . import _qscheme


class Error(Exception):
    """A qscheme error: ``code`` (stable kebab-case name), ``message``, ``index`` or None."""

    code = None

    def __init__(self, message, index=None):
        super().__init__(message)
        self.message = message
        self.index = index

    def __str__(self):
        return f"{self.code}: {self.message}"


def _class_name(code):
    return "".join(part.capitalize() for part in code.split("-"))


#: code -> exception class, for every code the C++ libraries define.
ERRORS = {
    code: type(_class_name(code), (Error,), {"code": code, "__module__": "qscheme"})
    for code in _qscheme.error_codes()
}


def make_error(code, message, index=None):
    """The exception for an error code (the extension raises through this)."""
    return ERRORS[code](message, index)
