"""Traces as JSON: what a verification child records, readable by loopfix without torch.

The child (`trace.py`, which has torch) turns every tensor of its trace into
`{"__tensor__": dtype, "shape": [...], "data": base64 of its bytes}`; loopfix reads that back
as a `Tensor`, compared bit for bit (same dtype, shape and bytes: stricter than `torch.equal`
only for -0.0 against 0.0 and for NaNs, which it calls equal when their bits are). JSON rather
than pickle: the file is written by a process running the project's code, and loading it must
not run code in loopfix's own process.
"""

from __future__ import annotations

import base64
import ctypes
import json
import struct
from dataclasses import dataclass
from pathlib import Path

TENSOR = "__tensor__"
TUPLE = "__tuple__"
# struct formats of the dtypes a loss or a summary is read back as numbers from
FORMATS = {
    "torch.float64": "d",
    "torch.float32": "f",
    "torch.float16": "e",
    "torch.int64": "q",
    "torch.int32": "i",
    "torch.int16": "h",
    "torch.int8": "b",
    "torch.uint8": "B",
    "torch.bool": "?",
}


@dataclass(frozen=True)
class Tensor:
    """A recorded tensor: its dtype (as torch spells it), shape and little-endian bytes."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes

    def tolist(self) -> list | float | int | bool:
        """The values, nested as the shape says (for messages); bfloat16 is widened."""
        values = self._values()
        for size in reversed(self.shape[1:]):
            values = [values[i : i + size] for i in range(0, len(values), size)]
        return values[0] if not self.shape and values else values

    def _values(self) -> list:
        if self.dtype == "torch.bfloat16":  # the high half of a float32
            halves = struct.unpack(f"<{len(self.data) // 2}H", self.data)
            return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
        code = FORMATS.get(self.dtype)
        if code is None:
            return [f"<{self.dtype}>"]
        count = len(self.data) // struct.calcsize(code)
        return list(struct.unpack(f"<{count}{code}", self.data))


def encode(value):
    """The child's side: tensors to JSON objects, tuples kept as tuples, the rest as is."""
    import torch  # the child has torch; loopfix's process never calls this

    if isinstance(value, torch.Tensor):
        tensor = value.detach().to("cpu").contiguous().clone()
        size = tensor.numel() * tensor.element_size()
        # the bytes at once (iterating a storage goes element by element: seconds per MB)
        data = ctypes.string_at(tensor.data_ptr(), size) if size else b""
        return {
            TENSOR: str(tensor.dtype),
            "shape": list(tensor.shape),
            "data": base64.b64encode(data).decode("ascii"),
        }
    if isinstance(value, tuple):
        return {TUPLE: [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def decode(value):
    """loopfix's side: the JSON objects back to `Tensor`s and tuples."""
    if isinstance(value, dict):
        if TENSOR in value:
            data = base64.b64decode(value["data"])
            return Tensor(value[TENSOR], tuple(value["shape"]), data)
        if TUPLE in value:
            return tuple(decode(v) for v in value[TUPLE])
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def save(trace: dict, path: Path) -> None:
    """Write atomically: a child killed while saving leaves no half-written trace."""
    temporary = path.with_suffix(".partial")
    temporary.write_text(json.dumps(encode(trace)), encoding="utf-8")
    temporary.replace(path)


def load(path: Path) -> dict | None:
    try:
        return decode(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
