#!/usr/bin/python3
# Data sets of make bench-ratio (tools/bench/bench_ratio.sh), 16 per-rank files each:
#   ncarg SET_DIR DIST FORMAT   NCAR weather fields (Debian's libncarg-data): every float
#                               variable of >= 64 KiB, split across the ranks; DIST is
#                               "seg" (a contiguous slab of rows per rank, remainder spread
#                               over the first ranks) or "str" (rank r gets rows r, r+16, ...),
#                               FORMAT "nc" (netCDF classic CDF-1, big-endian, as netCDF
#                               tools write) or "h5" (HDF5 from h5py, contiguous datasets).
#   particles SET_DIR N         raw files particles_r<rank>.bin of N particles per rank:
#                               int64 n, float64 pos[n][3], float64 vel[n][3]
#                               (tools/bench/bench_particles.schema describes them).
# Every rank's file has every variable under the same name, so the forwarder's merge by
# variable key sees 16 pieces of each. Run with Debian's /usr/bin/python3 (netCDF4, h5py).
import glob
import os
import re
import sys

import numpy as np

RANKS = 16
NCARG_GLOB = "/usr/share/ncarg/data/*/*.nc"
MIN_BYTES = 64 * 1024


def ncarg_variables():
    """(name, array) of every float variable of at least MIN_BYTES, raw values (no
    masking or scaling), named <dir>_<file>_<var> so that names are unique."""
    import netCDF4

    out = []
    for path in sorted(glob.glob(NCARG_GLOB)):
        with netCDF4.Dataset(path) as d:
            d.set_auto_maskandscale(False)
            for name, v in d.variables.items():
                if v.dtype not in (np.float32, np.float64):
                    continue
                if v.size * v.dtype.itemsize < MIN_BYTES:
                    continue
                sub = os.path.basename(os.path.dirname(path))
                base = os.path.splitext(os.path.basename(path))[0]
                key = re.sub(r"[^A-Za-z0-9_]", "_", f"{sub}_{base}_{name}")
                out.append((key, np.ascontiguousarray(v[...])))
    return out


def split_axis(shape):
    """The axis the ranks split: the first with at least RANKS rows, so that every rank
    gets some (the first axis of extent > 1 may have only 2 rows, e.g. (2, 64, 128)); the
    largest one if none has that many."""
    for a, n in enumerate(shape):
        if n >= RANKS:
            return a
    return int(np.argmax(shape))


def rank_piece(arr, dist, r):
    a = split_axis(arr.shape)
    n = arr.shape[a]
    if dist == "seg":
        base, extra = divmod(n, RANKS)
        lo = r * base + min(r, extra)
        hi = lo + base + (1 if r < extra else 0)
        idx = slice(lo, hi)
    else:
        idx = slice(r, None, RANKS)
    sl = [slice(None)] * arr.ndim
    sl[a] = idx
    return np.ascontiguousarray(arr[tuple(sl)])


def write_nc(path, pieces):
    import netCDF4

    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as d:
        d.set_fill_off()
        for name, p in pieces:
            dims = []
            for k, n in enumerate(p.shape):
                dims.append(f"{name}_d{k}")
                d.createDimension(dims[-1], n)
            v = d.createVariable(name, p.dtype, tuple(dims))
            v.set_auto_maskandscale(False)
            v[...] = p


def write_h5(path, pieces):
    import h5py

    with h5py.File(path, "w") as f:
        for name, p in pieces:
            f.create_dataset(name, data=p)  # no chunks, no filters: contiguous


def ncarg(set_dir, dist, fmt):
    variables = ncarg_variables()
    if len(variables) < 50:
        sys.exit(f"bench_ratio_data: only {len(variables)} variables in {NCARG_GLOB}; "
                 "is libncarg-data installed (make deps)?")
    writer = write_nc if fmt == "nc" else write_h5
    for r in range(RANKS):
        pieces = [(name, rank_piece(arr, dist, r)) for name, arr in variables]
        writer(os.path.join(set_dir, f"rank{r:02d}.{fmt}"), pieces)
    print(f"{len(variables)} variables, {sum(a.nbytes for _, a in variables)} bytes of data")


def particles(set_dir, n):
    # Positions: a random walk along the particle index (neighbours close, as in a
    # spatially sorted particle list) inside a periodic box; velocities: Gaussian noise
    # around a slowly varying drift. Low-order mantissa bits are random: the hard case.
    rng = np.random.default_rng(20240601)
    for r in range(RANKS):
        start = rng.uniform(0.0, 100.0, size=3)
        pos = np.mod(start + np.cumsum(rng.normal(0.0, 0.05, size=(n, 3)), axis=0), 100.0)
        drift = np.sin(np.linspace(0.0, 6.0, n))[:, None] * np.array([1.0, 0.5, -0.25])
        vel = drift + rng.normal(0.0, 0.3, size=(n, 3))
        with open(os.path.join(set_dir, f"particles_r{r:02d}.bin"), "wb") as f:
            f.write(np.int64(n).astype("<i8").tobytes())
            f.write(pos.astype("<f8").tobytes())
            f.write(vel.astype("<f8").tobytes())


def main():
    kind, set_dir = sys.argv[1], sys.argv[2]
    os.makedirs(set_dir, exist_ok=True)
    if kind == "ncarg":
        ncarg(set_dir, sys.argv[3], sys.argv[4])
    elif kind == "particles":
        particles(set_dir, int(sys.argv[3]))
    else:
        sys.exit(f"bench_ratio_data: unknown kind {kind}")


if __name__ == "__main__":
    main()
