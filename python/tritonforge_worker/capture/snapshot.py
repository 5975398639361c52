"""Saving a launch's tensors before and after it runs, so that it can be replayed.

Tensors that share memory (an in-place output, views into one cache) must share it again at
replay, so memory is saved per storage: the byte span of each storage that the launch's
tensors cover, once, with each tensor as (span, byte offset, dtype, shape, strides). A span
is saved before the launch and, when the launch changed it, after. Files are named by the
SHA-256 of their bytes (a weight used by many launches is saved once) under DIR/data/.
"""

from __future__ import annotations

import hashlib
import os

_ALIGN = 16  # span starts are rounded down to this many bytes


def _span_of(tensor):
    """(first byte, end byte) of the storage that `tensor` may touch."""
    item = tensor.element_size()
    if tensor.numel() == 0:
        start = tensor.storage_offset() * item
        return start, start
    last = sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride()) if n > 0)
    start = tensor.storage_offset() * item
    return start, start + (last + 1) * item


def plan(tensors):
    """Groups the launch's tensors ({parameter: tensor}) by storage: ({storage key: [start, end,
    a tensor]}, {parameter: (storage key, byte offset from the span's start)}), or None if a
    tensor has a negative stride."""
    groups, where = {}, {}
    for index, t in tensors.items():
        if any(s < 0 for s in t.stride()):
            return None
        storage = t.untyped_storage()
        key = (str(t.device), storage.data_ptr())
        start, end = _span_of(t)
        g = groups.setdefault(key, [start, end, t])
        g[0], g[1] = min(g[0], start), max(g[1], end)
        where[index] = key
    for g in groups.values():
        g[0] -= g[0] % _ALIGN
    offsets = {index: (key, tensors[index].storage_offset() * tensors[index].element_size() - groups[key][0])
               for index, key in where.items()}
    return groups, offsets


def span_bytes(group):
    """The span's bytes, copied to host memory (synchronizes with the device)."""
    import torch
    start, end, tensor = group
    raw = torch.empty(0, dtype=torch.uint8, device=tensor.device).set_(tensor.untyped_storage())
    return raw[start:end].detach().cpu().numpy().tobytes()


def total_bytes(groups) -> int:
    return sum(end - start for start, end, _ in groups.values())


class DataStore:
    """DIR/data/<sha256>.bin, with a quota on the bytes written (files already there are free)."""

    def __init__(self, folder: str, quota_bytes: int):
        self.folder = os.path.join(folder, "data")
        self.quota = quota_bytes
        self.written = 0

    def room_for(self, nbytes: int) -> bool:
        return self.written + nbytes <= self.quota

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = os.path.join(self.folder, digest + ".bin")
        if not os.path.exists(path):
            os.makedirs(self.folder, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            self.written += len(data)
        return digest


def take_before(store: DataStore, tensors):
    """Saves the spans of `tensors` ({parameter: tensor}) before the launch. Returns the state
    to finish with take_after, or (None, reason) when the launch's memory is not saved."""
    planned = plan(tensors)
    if planned is None:
        return None, "a tensor with a negative stride"
    groups, offsets = planned
    need = total_bytes(groups)
    if not store.room_for(2 * need):
        return None, f"the capture's data quota ({store.quota >> 20} MiB) is used up"
    before = {key: span_bytes(g) for key, g in groups.items()}
    return (groups, offsets, before), None


def take_after(store: DataStore, state):
    """Saves what the launch changed; returns the snapshot's JSON description."""
    groups, offsets, before = state
    spans, index_of = [], {}
    for key, g in groups.items():
        after = span_bytes(g)
        changed = after != before[key]
        index_of[key] = len(spans)
        spans.append({"device": key[0], "nbytes": g[1] - g[0], "before": store.put(before[key]),
                      "after": store.put(after) if changed else None})
    tensors = {name: {"span": index_of[key], "byte_offset": off} for name, (key, off) in offsets.items()}
    return {"spans": spans, "tensors": tensors}
