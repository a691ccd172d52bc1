#!/usr/bin/python3
"""Writes a small HDF5 checkpoint-like input file for the HDF5 client tests.

usage: make_h5.py OUT.h5 [--check]
Deterministic: fixed data, no object timestamps (track_times=False on datasets, and no
track_order on the file: that gives the root group a v2 object header, which stores times),
so two runs give the same bytes. With --check it instead re-reads OUT.h5 and verifies every dataset's values,
printing one line per dataset (used to re-read a file through the library).
"""
import sys

import h5py
import numpy as np


def expected():
    x = np.linspace(0.0, 1.0, 32 * 24 * 16)
    return {
        "fields/temperature": (300.0 + 20.0 * np.sin(6.0 * x)).reshape(32, 24, 16),
        "fields/pressure": (1.0e5 + 50.0 * np.cos(3.0 * x)).reshape(32, 24, 16).astype(np.float32),
        "particles/id": np.arange(5000, dtype=np.int64) * 3 + 1,
        "particles/mass": np.linspace(1.0, 2.0, 5000),
        "meta/step": np.array([42], dtype=np.int32),
    }


def write(path):
    with h5py.File(path, "w") as f:
        for name, data in expected().items():
            chunks = (8, 24, 16) if data.ndim == 3 else None
            f.create_dataset(name, data=data, chunks=chunks, track_times=False)
        f["fields"].attrs["units"] = "K, Pa"
        f.attrs["code"] = "ckptfwd-test"


def check(path):
    with h5py.File(path, "r") as f:
        for name, data in expected().items():
            got = f[name][...]
            if got.dtype != data.dtype or not np.array_equal(got, data):
                sys.exit(f"make_h5.py: {path}: dataset {name} differs from what was written")
            print(f"{name} {got.dtype} {got.shape} ok")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    (check if "--check" in sys.argv[2:] else write)(sys.argv[1])
