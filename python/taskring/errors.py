"""Exceptions raised by taskring.

Every error from the runtime is a :class:`TaskringError` carrying the
runtime's message and code. The class says which broad kind of error it is
(one subclass per taskring ``StatusCode``); ``runtime_code`` names the L2
runtime error when there is one (``"KERNEL_FAILED"``, ``"SCOPE_DEADLOCK"``,
...). Argument errors are also ``ValueError``s, range errors ``IndexError``s,
so generic handlers keep working.
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "TaskringError", "InvalidArgumentError", "OutOfRangeError", "NotFoundError", "AlreadyExistsError",
    "FailedPreconditionError", "ResourceExhaustedError", "DeadlineExceededError", "AbortedError",
    "InternalError", "UnimplementedError", "UnavailableError", "KeyNotFoundError",
]


class TaskringError(RuntimeError):
    """A taskring failure: ``message``, ``code`` (int), ``code_name`` and ``runtime_code``."""

    code: int = -1
    code_name: str = "UNKNOWN"

    def __init__(self, message: str, code: Optional[int] = None, code_name: Optional[str] = None,
                 runtime_code: Optional[str] = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if code_name is not None:
            self.code_name = code_name
        self.runtime_code = runtime_code

    def __str__(self) -> str:
        return f"{self.code_name}: {self.message}"


class InvalidArgumentError(TaskringError, ValueError):
    code, code_name = 1, "INVALID_ARGUMENT"


class OutOfRangeError(TaskringError, IndexError):
    code, code_name = 2, "OUT_OF_RANGE"


class NotFoundError(TaskringError, LookupError):
    code, code_name = 3, "NOT_FOUND"


class KeyNotFoundError(NotFoundError, KeyError):
    """NOT_FOUND for a lookup by key, where upstream raises ``KeyError``: both at once."""

    # KeyError's own __str__ would quote the message.
    __str__ = TaskringError.__str__


class AlreadyExistsError(TaskringError):
    code, code_name = 4, "ALREADY_EXISTS"


class FailedPreconditionError(TaskringError):
    code, code_name = 5, "FAILED_PRECONDITION"


class ResourceExhaustedError(TaskringError):
    code, code_name = 6, "RESOURCE_EXHAUSTED"


class DeadlineExceededError(TaskringError):
    code, code_name = 7, "DEADLINE_EXCEEDED"


class AbortedError(TaskringError):
    code, code_name = 8, "ABORTED"


class InternalError(TaskringError):
    code, code_name = 9, "INTERNAL"


class UnimplementedError(TaskringError, NotImplementedError):
    code, code_name = 10, "UNIMPLEMENTED"


class UnavailableError(TaskringError):
    code, code_name = 11, "UNAVAILABLE"


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, OutOfRangeError, NotFoundError, AlreadyExistsError, FailedPreconditionError,
    ResourceExhaustedError, DeadlineExceededError, AbortedError, InternalError, UnimplementedError,
    UnavailableError)}


def _from_status(code: int, code_name: str, message: str, runtime_code: Optional[str]) -> TaskringError:
    """The exception for a C++ Status (called by the extension module)."""
    cls = _BY_CODE.get(code, TaskringError)
    return cls(message, code, code_name, runtime_code)


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(message, runtime_code=None)
