"""Element types: taskring ``DataType`` <-> numpy dtype.

==============  =================  ==============================================
taskring        numpy              note
==============  =================  ==============================================
FLOAT32         float32
FLOAT16         float16
BFLOAT16        uint16             bit pattern; pass ``Tensor(a, tag, dtype=BFLOAT16)``
                                   (``ml_dtypes.bfloat16`` arrays map directly when
                                   that package is importable; Debian 12 lacks it)
INT8/16/32/64   int8/16/32/64
UINT8/16/32/64  uint8/16/32/64
BOOL            bool
==============  =================  ==============================================

Big-endian arrays and other dtypes (float64, complex, object, ...) have no
taskring type and are rejected with :class:`~taskring.errors.InvalidArgumentError`.
"""

from __future__ import annotations

import enum

import numpy as np

from . import _taskring


class DataType(enum.IntEnum):
    """taskring element types (the upstream wire values)."""

    FLOAT32 = 0
    FLOAT16 = 1
    INT32 = 2
    INT16 = 3
    INT8 = 4
    UINT8 = 5
    BFLOAT16 = 6
    INT64 = 7
    UINT64 = 8
    UINT16 = 9
    UINT32 = 10
    BOOL = 11

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return _taskring._element_size(int(self))

    @property
    def short_name(self) -> str:
        """``"FP32"``, ``"BF16"``, ..."""
        return _taskring._data_type_name(int(self))

    def numpy_dtype(self) -> np.dtype:
        """The numpy dtype that holds this type's elements (BFLOAT16: uint16)."""
        return np.dtype(_taskring._numpy_dtype_of(int(self)))


def data_type_of(dtype) -> DataType:
    """The taskring type of a numpy dtype (or anything ``np.dtype()`` takes).

    Raises InvalidArgumentError when there is none.
    """
    from .errors import InvalidArgumentError

    dt = np.dtype(dtype)
    t = _taskring._data_type_of(dt)
    if t is None:
        raise InvalidArgumentError(f"numpy dtype {dt} has no taskring type")
    return DataType(t)


def parse_data_type(name) -> DataType:
    """A DataType from a DataType, its value, or a name in either spelling ("fp32", "float32", "bf16")."""
    from .errors import InvalidArgumentError

    if isinstance(name, DataType):
        return name
    if isinstance(name, int) and not isinstance(name, bool):
        try:
            return DataType(name)
        except ValueError:
            raise InvalidArgumentError(f"data type {name} outside 0..11") from None
    if isinstance(name, str):
        t = _taskring._parse_data_type(name)
        if t is None:
            raise InvalidArgumentError(f"unknown data type name '{name}'")
        return DataType(t)
    return data_type_of(name)


def bf16_from_float32(a) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns (uint16), rounded to nearest even."""
    f = np.ascontiguousarray(a, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    out = rounded.astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        out[nan] = 0x7FC0
    return out


def float32_from_bf16(bits) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values (exact)."""
    b = np.ascontiguousarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)
