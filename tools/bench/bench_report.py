#!/usr/bin/env python3
"""make bench's report: the tables on stdout, WORK/bench.json and WORK/bench.svg.

    bench_report.py WORK              (tables, bench.json, bench.svg)
    bench_report.py WORK --markdown   (the table of docs/benchmarks.md, from WORK/bench.json)

Reads WORK/limits.jsonl (one measurement per line, from bench_limits.sh), and when they
exist WORK/limited.jsonl (the same on a store of limited bandwidth, BENCH_STORE_MBPS),
WORK/demo.json (bench_demo.sh: the demo application and the compression baselines),
WORK/infer.json (bench_infer.sh) and WORK/crossnode.json (bench_crossnode.sh, which prints
its own table (h) and draws WORK/crossnode/crossnode.svg). Figures are medians over the rounds; ratios are of
medians. Standard library only (the plot is SVG written by hand).
"""
import json
import os
import statistics
import sys


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def mb_s(nbytes, secs):
    return nbytes / secs / 1e6 if nbytes and secs else None


def load(path):
    recs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if line:
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    sys.exit(f"bench_report: {path}:{n}: not JSON ({e})")
    return recs


def ns_of(r):
    """CPU ns per call of bench_uncaptured (robust to a busy node), else its wall ns."""
    for k in ("cpu_ns_per_call", "ns_per_call", "ns"):
        if k in r:
            return r[k]
    return None


def pick(recs, **kw):
    return [r for r in recs if all(r.get(k) == v for k, v in kw.items())]


# The checkpoint variants of bench_limits.sh: without the library, then under it.
VARIANTS = ("tmpfs", "disk_fsync", "lib", "lib_fsync")


def medians_by_variant(recs, key, variants, **sel):
    """{variant: median of key over the records of sel}, for each of variants."""
    return {v: median([r.get(key) for r in pick(recs, variant=v, **sel)]) for v in variants}


def size_keys(recs, sec="ckpt"):
    """(size label, size, ranks) of each checkpoint measured in section sec, in order."""
    keys = sorted({(r["size"], r["size_label"], r["ranks"]) for r in pick(recs, sec=sec)})
    return [(lbl, size, np) for size, lbl, np in keys]


def stat_of(r, key):
    v = r.get("stats", {}).get(key)
    return float(v) if v is not None else None


def uncaptured(recs):
    rows = []
    order = ["open_read_close", "stat", "relative_open_close"]
    kinds = {r["kind"] for r in pick(recs, sec="uncaptured")}
    for kind in sorted(kinds, key=lambda k: (order.index(k) if k in order else 9, k)):
        without = median([ns_of(r) for r in pick(recs, sec="uncaptured", kind=kind, with_lib=0)])
        with_ = median([ns_of(r) for r in pick(recs, sec="uncaptured", kind=kind, with_lib=1)])
        rows.append({"kind": kind, "ns_without": without, "ns_with": with_,
                     "ratio": ratio(with_, without)})
    return rows


def checkpoint(recs):
    rows = []
    for lbl, size, np in size_keys(recs):
        sel = dict(sec="ckpt", size=size, ranks=np)
        med = medians_by_variant(recs, "ckpt_s", VARIANTS, **sel)
        written = median([r["bytes"] for r in pick(recs, variant="tmpfs", **sel)])
        until = median([r.get("until_committed_s") for r in pick(recs, variant="lib", **sel)])
        rows.append({
            "size": size, "size_label": lbl, "ranks": np, "bytes_written": written,
            "tmpfs_s": med["tmpfs"], "disk_fsync_s": med["disk_fsync"], "lib_s": med["lib"],
            "lib_fsync_s": med["lib_fsync"], "lib_until_committed_s": until,
            "lib_over_tmpfs": ratio(med["lib"], med["tmpfs"]),
            "lib_over_disk_fsync": ratio(med["lib"], med["disk_fsync"]),
            "durable_lib_over_disk": ratio(med["lib_fsync"], med["disk_fsync"]),
            "lib_mb_s": mb_s(written, med["lib"]), "tmpfs_mb_s": mb_s(written, med["tmpfs"]),
            "disk_fsync_mb_s": mb_s(written, med["disk_fsync"]),
            "lib_fsync_mb_s": mb_s(written, med["lib_fsync"]),
            "rounds": len(pick(recs, variant="lib", **sel))})
    return rows


def next_checkpoint(recs):
    """A job's checkpoint after its first (section "next"): the next_* figures."""
    rows = []
    for lbl, size, np in size_keys(recs, sec="next"):
        sel = dict(sec="next", size=size, ranks=np)
        med = medians_by_variant(recs, "next_ckpt_s", VARIANTS, **sel)
        first = medians_by_variant(recs, "ckpt_s", ("lib", "lib_fsync"), **sel)
        rows.append({
            "size": size, "size_label": lbl, "ranks": np,
            "tmpfs_s": med["tmpfs"], "disk_fsync_s": med["disk_fsync"], "lib_s": med["lib"],
            "lib_fsync_s": med["lib_fsync"],
            "lib_first_s": first["lib"], "lib_fsync_first_s": first["lib_fsync"],
            "lib_open_s": median([r.get("next_open_s") for r in pick(recs, variant="lib", **sel)]),
            "lib_fsync_fsync_s": median([r.get("next_fsync_s")
                                         for r in pick(recs, variant="lib_fsync", **sel)]),
            "lib_over_tmpfs": ratio(med["lib"], med["tmpfs"]),
            "lib_over_disk_fsync": ratio(med["lib"], med["disk_fsync"]),
            "durable_lib_over_disk": ratio(med["lib_fsync"], med["disk_fsync"]),
            "rounds": len(pick(recs, variant="lib", **sel))})
    return rows


def fsync_single(recs):
    out = {}
    for v in ("disk", "lib"):
        rs = pick(recs, sec="fsync1", variant=v)
        out[v] = {k: median([r[k] for r in rs]) for k in ("write_s", "fsync_s", "close_s")}
        out[v]["total_s"] = median([r["write_s"] + r["fsync_s"] + r["close_s"] for r in rs])
        out["bytes"] = rs[0]["bytes"] if rs else None
    out["fsync_lib_over_disk"] = ratio(out["lib"]["fsync_s"], out["disk"]["fsync_s"])
    # The target's own terms: the application's fsync under ckptfwd against a direct
    # write + fsync of the same bytes (the application writes to memory under ckptfwd).
    out["fsync_lib_over_disk_write_fsync"] = ratio(
        out["lib"]["fsync_s"], median([r["write_s"] + r["fsync_s"]
                                       for r in pick(recs, sec="fsync1", variant="disk")]))
    out["total_lib_over_disk"] = ratio(out["lib"]["total_s"], out["disk"]["total_s"])
    return out


def stages(recs, writers):
    """Forwarder throughput per stage from the stats lines of the checkpoint writes.

    time_compress_s is the wall time of the chunk encoding fanned out over the writer
    threads, so its per-core figure divides by CKPTFWD_WRITERS; time_typed_encode_s is
    summed per chunk (already per core); infer, write and commit run on one thread each.
    """
    rows = []
    for lbl, size, np in size_keys(recs):
        for v in ("lib", "lib_fsync"):
            rs = [r for r in pick(recs, sec="ckpt", variant=v, size=size, ranks=np) if r.get("stats")]
            if not rs:
                continue

            def m(f):
                return median([f(r) for r in rs])

            cap = m(lambda r: stat_of(r, "bytes_captured"))
            row = {"size": size, "size_label": lbl, "ranks": np, "variant": v,
                   "bytes_captured": cap,
                   "bytes_stored": m(lambda r: stat_of(r, "bytes_stored")),
                   "infer_mb_s": m(lambda r: mb_s(stat_of(r, "bytes_captured"), stat_of(r, "time_infer_s"))),
                   "typed_encode_mb_s_core": m(lambda r: mb_s(stat_of(r, "typed_bytes_in"), stat_of(r, "time_typed_encode_s"))),
                   "compress_mb_s_core": m(lambda r: mb_s(stat_of(r, "bytes_captured"),
                                                          (stat_of(r, "time_compress_s") or 0) * writers)),
                   "write_mb_s": m(lambda r: mb_s(stat_of(r, "bytes_stored"), stat_of(r, "time_write_s"))),
                   "commit_s": m(lambda r: stat_of(r, "time_commit_s")),
                   "capture_mb_s": m(lambda r: mb_s(stat_of(r, "bytes_captured"), r.get("until_committed_s"))),
                   "ratio": m(lambda r: ratio(stat_of(r, "bytes_captured"), stat_of(r, "bytes_stored"))),
                   "peak_rss_bytes": m(lambda r: r.get("peak_rss_bytes") or None),
                   "peak_rss_from": rs[0].get("rss_from")}
            rows.append(row)
    return rows


def reads(recs):
    rows = []
    for lbl, size, np in size_keys(recs):
        sel = dict(sec="read", size=size, ranks=np)
        disk = median([r["ckpt_s"] for r in pick(recs, variant="disk", **sel)])
        lib = median([r["ckpt_s"] for r in pick(recs, variant="lib", **sel)
                      + pick(recs, variant="lib_fsync", **sel)])
        timed = [r for v in ("disk", "lib", "lib_fsync") for r in pick(recs, variant=v, **sel)]
        nbytes = median([r["bytes"] for r in timed])
        cold = all(r.get("cold") == 1 for r in timed)
        rows.append({"size": size, "size_label": lbl, "ranks": np, "disk_s": disk, "lib_s": lib,
                     "lib_over_disk": ratio(lib, disk), "disk_mb_s": mb_s(nbytes, disk),
                     "lib_mb_s": mb_s(nbytes, lib), "cold": cold,
                     "verified": all(r.get("verified") == 1 for r in pick(recs, **sel))})
    return rows


def small(recs):
    out = {}
    for v in ("disk_write", "disk_read", "lib_write", "lib_read"):
        rs = pick(recs, sec="small", variant=v)
        out[v + "_s"] = median([r["seconds"] for r in rs])
        if rs:
            out["files"], out["bytes"] = rs[0]["files"], rs[0]["bytes"]
    lw = pick(recs, sec="small", variant="lib_write")
    out["lib_until_committed_s"] = median([r.get("until_committed_s") for r in lw])
    out["store_files"] = median([r.get("store_files") for r in lw])
    out["store_bytes"] = median([r.get("store_bytes") for r in lw])
    out["read_lib_over_disk"] = ratio(out["lib_read_s"], out["disk_read_s"])
    out["write_lib_over_disk"] = ratio(out["lib_write_s"], out["disk_write_s"])
    out["cold"] = all(r.get("cold") == 1 for r in pick(recs, sec="small") if "cold" in r)
    return out


def store(recs):
    rows = []
    for lbl, size, np in size_keys(recs):
        rs = pick(recs, sec="ckpt", variant="lib", size=size, ranks=np)
        rows.append({"size": size, "size_label": lbl, "ranks": np, "files_written": np,
                     "bytes_written": median([r["bytes"] for r in rs]),
                     "store_files": median([r.get("store_files") for r in rs]),
                     "store_bytes": median([r.get("store_bytes") for r in rs])})
    return rows


def limited(work):
    """(b), (c) and (e) on a store of limited bandwidth (WORK/limited.jsonl), or None."""
    path = os.path.join(work, "limited.jsonl")
    if not os.path.exists(path):
        return None
    recs = load(path)
    if not recs:
        return None
    out = {"store_mbps": recs[0].get("store_mbps"), "checkpoint": checkpoint(recs),
           "restart_read": reads(recs),
           "readback_verified": all(r.get("verified") == 1 for r in pick(recs, sec="read"))}
    if pick(recs, sec="fsync1"):
        out["fsync_single"] = fsync_single(recs)
    return out


def limited_rows(lim):
    """Rows of the limited-store table: checkpoint and read figures side by side."""
    rd = {(x["size"], x["ranks"]): x for x in lim["restart_read"]}
    for c in lim["checkpoint"]:
        yield c, rd.get((c["size"], c["ranks"]), {})


def svg_plot(ck, rd, st, path):
    """Three panels of bars (MB/s): checkpoint write, restart read, forwarder stages."""
    W, BAR, GAP = 900, 12, 18
    colors = {"tmpfs": "#7f7f7f", "lib": "#d62728", "disk_fsync": "#1f77b4",
              "lib_fsync": "#ff7f0e", "disk": "#1f77b4", "infer": "#2ca02c",
              "typed": "#9467bd", "compress": "#d62728", "write": "#8c564b"}
    panels = [
        ("Checkpoint write, MB/s seen by the application (open+write+fsync+close, slowest rank)",
         [(f"{r['size_label']} x{r['ranks']}", [("tmpfs", r["tmpfs_mb_s"]), ("lib", r["lib_mb_s"]),
                                                 ("disk_fsync", r["disk_fsync_mb_s"]),
                                                 ("lib_fsync", r["lib_fsync_mb_s"])]) for r in ck]),
        ("Restart read, MB/s (every byte verified)",
         [(f"{r['size_label']} x{r['ranks']}", [("disk", r["disk_mb_s"]), ("lib", r["lib_mb_s"])])
          for r in rd]),
        # Inference (a schema applied) runs at GB/s and would flatten the other bars: table only.
        ("Forwarder stages, MB/s per core (ckptfwd runs without fsync; inference: see the table)",
         [(f"{r['size_label']} x{r['ranks']}", [("typed", r["typed_encode_mb_s_core"]),
                                                 ("compress", r["compress_mb_s_core"]),
                                                 ("write", r["write_mb_s"])])
          for r in st if r["variant"] == "lib"]),
    ]
    shown = {"tmpfs": "tmpfs", "lib": "ckptfwd", "disk_fsync": "disk+fsync", "lib_fsync": "ckptfwd+fsync",
             "disk": "disk", "infer": "infer", "typed": "typed encode", "compress": "compress",
             "write": "container write"}
    out, y = [], 10
    for title, groups in panels:
        vals = [v for _, bars in groups for _, v in bars if v]
        top = max(vals) if vals else 1.0
        out.append(f'<text x="10" y="{y + 14}" font-weight="bold">{title}</text>')
        names = []
        for _, bars in groups:
            for n, _ in bars:
                if n not in names:
                    names.append(n)
        lx = 10
        for n in names:
            out.append(f'<rect x="{lx}" y="{y + 22}" width="10" height="10" fill="{colors[n]}"/>'
                       f'<text x="{lx + 14}" y="{y + 31}">{shown[n]}</text>')
            lx += 30 + 8 * len(shown[n])
        y += 40
        for label, bars in groups:
            out.append(f'<text x="10" y="{y + BAR * len(bars) / 2 + 4:.0f}">{label}</text>')
            for n, v in bars:
                w = 600 * (v or 0) / top
                out.append(f'<rect x="110" y="{y}" width="{w:.1f}" height="{BAR - 2}" fill="{colors[n]}"/>'
                           f'<text x="{114 + w:.1f}" y="{y + BAR - 3}" font-size="10">{fmt(v, ".0f")}</text>')
                y += BAR
            y += GAP - BAR + 6
        y += 20
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{y + 10}" '
            'font-family="sans-serif" font-size="12">')
    with open(path, "w") as f:
        f.write("\n".join([head, '<rect width="100%" height="100%" fill="white"/>'] + out + ["</svg>", ""]))


def markdown(work):
    """The figures of make bench in docs/benchmarks.md, from a finished run's bench.json."""
    with open(os.path.join(work, "bench.json")) as f:
        r = json.load(f)
    rd = {(x["size"], x["ranks"]): x for x in r["restart_read"]}
    so = {(x["size"], x["ranks"]): x for x in r["store"]}
    P = print
    P("| size x ranks | tmpfs s | ckptfwd s | until committed s | disk+fsync s | ckptfwd+fsync s "
      "| read disk s | read ckptfwd s | store files | ratio | forwarder peak RSS MiB |")
    P("|---|---|---|---|---|---|---|---|---|---|---|")
    rss = {(x["size"], x["ranks"]): x["peak_rss_bytes"] for x in r["peak_rss"] if x["variant"] == "lib"}
    for c in r["checkpoint"]:
        k = (c["size"], c["ranks"])
        s = so.get(k, {})
        P(f"| {c['size_label']} x {c['ranks']} | {fmt(c['tmpfs_s'], '.2f')} | {fmt(c['lib_s'], '.2f')} "
          f"| {fmt(c['lib_until_committed_s'], '.2f')} | {fmt(c['disk_fsync_s'], '.2f')} "
          f"| {fmt(c['lib_fsync_s'], '.2f')} | {fmt(rd.get(k, {}).get('disk_s'), '.2f')} "
          f"| {fmt(rd.get(k, {}).get('lib_s'), '.2f')} | {fmt(s.get('store_files'), '.0f')} "
          f"| {fmt(ratio(s.get('bytes_written'), s.get('store_bytes')), '.2f')} "
          f"| {fmt((rss.get(k) or 0) / 1048576, '.0f')} |")
    nx = r.get("next_checkpoint")
    if nx:
        P()
        P("A job's next checkpoint (its second, after a pause; same machine, same run):")
        P()
        P("| size x ranks | tmpfs s | ckptfwd s | ratio | disk+fsync s | ckptfwd+fsync s | durable ratio |")
        P("|---|---|---|---|---|---|---|")
        for c in nx:
            P(f"| {c['size_label']} x {c['ranks']} | {fmt(c['tmpfs_s'], '.3f')} | {fmt(c['lib_s'], '.3f')} "
              f"| {fmt(c['lib_over_tmpfs'], '.2f')} | {fmt(c['disk_fsync_s'], '.3f')} "
              f"| {fmt(c['lib_fsync_s'], '.3f')} | {fmt(c['durable_lib_over_disk'], '.2f')} |")
    lim = r.get("store_limited")
    if lim:
        P()
        P(f"On a store limited to {lim['store_mbps']} MB/s (one round):")
        P()
        P("| size x ranks | ckptfwd s | disk+fsync s | ckptfwd+fsync s | durable ratio "
          "| read disk s | read ckptfwd s | read ratio |")
        P("|---|---|---|---|---|---|---|---|")
        for c, d in limited_rows(lim):
            P(f"| {c['size_label']} x {c['ranks']} | {fmt(c['lib_s'], '.2f')} | {fmt(c['disk_fsync_s'], '.2f')} "
              f"| {fmt(c['lib_fsync_s'], '.2f')} | {fmt(c['durable_lib_over_disk'], '.2f')} "
              f"| {fmt(d.get('disk_s'), '.2f')} | {fmt(d.get('lib_s'), '.2f')} | {fmt(d.get('lib_over_disk'), '.2f')} |")
        f1 = lim.get("fsync_single")
        if f1:
            P()
            P(f"One {(f1.get('bytes') or 0) / 1048576:.0f} MiB file on that store: write+fsync "
              f"{fmt(f1['disk']['write_s'] + f1['disk']['fsync_s'], '.3f')} s direct, fsync "
              f"{fmt(f1['lib']['fsync_s'], '.3f')} s through ckptfwd "
              f"({fmt(f1['fsync_lib_over_disk_write_fsync'], '.2f')}x).")
    u = {x["kind"]: x for x in r["uncaptured"]}
    P()
    P("Uncaptured calls (ns, without / with the library): " + ", ".join(
        f"{k} {fmt(u[k]['ns_without'], '.0f')} / {fmt(u[k]['ns_with'], '.0f')}" for k in u) + ".")
    fs, sm = r["fsync_single"], r["small_files"]
    P(f"One {(fs.get('bytes') or 0) / 1048576:.0f} MiB file: fsync {fmt(fs['disk']['fsync_s'], '.3f')} s on disk, "
      f"{fmt(fs['lib']['fsync_s'], '.3f')} s through ckptfwd. {sm.get('files')} small files read back: "
      f"{fmt(sm['disk_read_s'], '.2f')} s direct, {fmt(sm['lib_read_s'], '.2f')} s through ckptfwd.")
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[2] == "--markdown":
        return markdown(sys.argv[1])
    if len(sys.argv) != 2:
        sys.exit("usage: bench_report.py WORK [--markdown]")
    work = sys.argv[1]
    recs = load(os.path.join(work, "limits.jsonl"))
    writers = int(os.environ.get("CKPTFWD_WRITERS", "2") or 2)
    uc, ck, fs1 = uncaptured(recs), checkpoint(recs), fsync_single(recs)
    nx = next_checkpoint(recs)
    st, rd, sm, so = stages(recs, writers), reads(recs), small(recs), store(recs)
    lim = limited(work)
    restores = pick(recs, sec="restore")
    readback_ok = all(r.get("verified") == 1 for r in pick(recs, sec="read"))
    result = {
        "meta": {"nproc": os.cpu_count(), "writers": writers,
                 "quick": os.environ.get("BENCH_QUICK", "0") == "1",
                 "cold_reads": all(r.get("cold") == 1 for r in recs if "cold" in r)},
        "uncaptured": uc, "checkpoint": ck, "next_checkpoint": nx, "fsync_single": fs1,
        "forwarder_stages": st,
        "restart_read": rd, "small_files": sm, "store": so, "store_limited": lim,
        "peak_rss": [{k: r[k] for k in ("size", "size_label", "ranks", "variant",
                                        "peak_rss_bytes", "peak_rss_from")} for r in st],
        "restore": {"checked": len(restores),
                    "byte_exact": bool(restores) and all(r["byte_exact"] == 1 for r in restores),
                    "readback_verified": readback_ok and bool(pick(recs, sec="read")),
                    "runs": restores},
        "raw": recs,
    }
    for name in ("demo", "infer", "crossnode"):
        p = os.path.join(work, name + ".json")
        if os.path.exists(p):
            with open(p) as f:
                result[name] = json.load(f)

    P = print
    P("\n(a) uncaptured calls, ns per call (median of rounds)")
    P(f"{'call':<18} {'without':>10} {'with lib':>10} {'ratio':>7}")
    for r in uc:
        P(f"{r['kind']:<18} {fmt(r['ns_without'], '.0f'):>10} {fmt(r['ns_with'], '.0f'):>10} {fmt(r['ratio'], '.2f'):>7}")

    P("\n(b) application-visible checkpoint time, s (open+write[+fsync]+close, slowest rank)")
    P(f"{'size x ranks':<13} {'tmpfs':>8} {'ckptfwd':>8} {'/tmpfs':>7} {'disk+fsync':>10} {'/disk+fs':>8} "
      f"{'ckptfwd MB/s':>12} {'until committed':>15}")
    for r in ck:
        P(f"{r['size_label'] + ' x' + str(r['ranks']):<13} {fmt(r['tmpfs_s']):>8} {fmt(r['lib_s']):>8} "
          f"{fmt(r['lib_over_tmpfs'], '.2f'):>7} {fmt(r['disk_fsync_s']):>10} {fmt(r['lib_over_disk_fsync'], '.2f'):>8} "
          f"{fmt(r['lib_mb_s'], '.0f'):>12} {fmt(r['lib_until_committed_s']):>15}")

    P("\n(c) time until durable, s (write+fsync+close: direct on disk vs fsync through ckptfwd)")
    P(f"{'size x ranks':<13} {'disk+fsync':>10} {'ckptfwd+fsync':>13} {'ratio':>7}")
    for r in ck:
        P(f"{r['size_label'] + ' x' + str(r['ranks']):<13} {fmt(r['disk_fsync_s']):>10} "
          f"{fmt(r['lib_fsync_s']):>13} {fmt(r['durable_lib_over_disk'], '.2f'):>7}")
    mib = (fs1.get("bytes") or 0) / 1048576
    P(f"  one {mib:.0f} MiB file: write {fmt(fs1['disk']['write_s'])} fsync {fmt(fs1['disk']['fsync_s'])} s on disk; "
      f"write {fmt(fs1['lib']['write_s'])} fsync {fmt(fs1['lib']['fsync_s'])} s under ckptfwd "
      f"(fsync ratio {fmt(fs1['fsync_lib_over_disk'], '.2f')}, fsync vs direct write+fsync "
      f"{fmt(fs1['fsync_lib_over_disk_write_fsync'], '.2f')}, write+fsync+close {fmt(fs1['total_lib_over_disk'], '.2f')})")

    if nx:
        P("\n(b), (c) for a job's next checkpoint, s (the job's second, after a pause; slowest rank)")
        P(f"{'size x ranks':<13} {'tmpfs':>8} {'ckptfwd':>8} {'/tmpfs':>7} {'disk+fsync':>10} "
          f"{'ckptfwd+fsync':>13} {'ratio':>6} {'(first: ckptfwd':>16} {'+fsync)':>8}")
        for r in nx:
            P(f"{r['size_label'] + ' x' + str(r['ranks']):<13} {fmt(r['tmpfs_s']):>8} {fmt(r['lib_s']):>8} "
              f"{fmt(r['lib_over_tmpfs'], '.2f'):>7} {fmt(r['disk_fsync_s']):>10} {fmt(r['lib_fsync_s']):>13} "
              f"{fmt(r['durable_lib_over_disk'], '.2f'):>6} {fmt(r['lib_first_s']):>16} "
              f"{fmt(r['lib_fsync_first_s']):>8}")

    P(f"\n(d) forwarder throughput per stage, MB/s (per core; compress = wall x {writers} writers)")
    P(f"{'size x ranks':<13} {'variant':<10} {'infer':>8} {'typed/core':>10} {'compr/core':>10} {'write':>8} "
      f"{'commit s':>9} {'end-to-end':>10} {'ratio':>6}")
    for r in st:
        P(f"{r['size_label'] + ' x' + str(r['ranks']):<13} {r['variant']:<10} {fmt(r['infer_mb_s'], '.0f'):>8} "
          f"{fmt(r['typed_encode_mb_s_core'], '.0f'):>10} {fmt(r['compress_mb_s_core'], '.0f'):>10} "
          f"{fmt(r['write_mb_s'], '.0f'):>8} {fmt(r['commit_s'], '.4f'):>9} {fmt(r['capture_mb_s'], '.0f'):>10} "
          f"{fmt(r['ratio'], '.2f'):>6}")
    P("  end-to-end: bytes captured / (job start until mpiexec returned with everything committed)")

    temp = "cold page cache" if result["meta"]["cold_reads"] else "WARM page cache (drop_caches not allowed)"
    P(f"\n(e) restart read, s (new job; every byte verified; {temp})")
    P(f"{'size x ranks':<13} {'disk':>8} {'ckptfwd':>8} {'ratio':>7} {'disk MB/s':>10} {'ckptfwd MB/s':>12}")
    for r in rd:
        P(f"{r['size_label'] + ' x' + str(r['ranks']):<13} {fmt(r['disk_s']):>8} {fmt(r['lib_s']):>8} "
          f"{fmt(r['lib_over_disk'], '.2f'):>7} {fmt(r['disk_mb_s'], '.0f'):>10} {fmt(r['lib_mb_s'], '.0f'):>12}")
    P(f"  {sm.get('files', 0)} small files of {(sm.get('bytes') or 0) // max(1, sm.get('files') or 1)} B: "
      f"read {fmt(sm['disk_read_s'])} s on disk, {fmt(sm['lib_read_s'])} s through ckptfwd "
      f"(ratio {fmt(sm['read_lib_over_disk'], '.2f')}); written {fmt(sm['disk_write_s'])} s on disk, "
      f"{fmt(sm['lib_write_s'])} s under ckptfwd (ratio {fmt(sm['write_lib_over_disk'], '.2f')}, "
      f"all committed after {fmt(sm['lib_until_committed_s'])} s)")

    P("\n(f) what reaches the store")
    P(f"{'size x ranks':<13} {'files written':>13} {'store files':>11} {'bytes written':>14} {'store bytes':>12} {'ratio':>6}")
    for r in so:
        P(f"{r['size_label'] + ' x' + str(r['ranks']):<13} {r['files_written']:>13} {fmt(r['store_files'], '.0f'):>11} "
          f"{fmt(r['bytes_written'], '.0f'):>14} {fmt(r['store_bytes'], '.0f'):>12} "
          f"{fmt(ratio(r['bytes_written'], r['store_bytes']), '.2f'):>6}")
    P(f"  small files: {sm.get('files')} written, {fmt(sm.get('store_files'), '.0f')} files in the store "
      f"({fmt(sm.get('bytes'), '.0f')} -> {fmt(sm.get('store_bytes'), '.0f')} bytes)")

    P("\n(g) forwarder peak RSS, MiB")
    for r in st:
        P(f"  {r['size_label'] + ' x' + str(r['ranks']):<13} {r['variant']:<10} "
          f"{fmt((r['peak_rss_bytes'] or 0) / 1048576, '.1f'):>8}  ({r['peak_rss_from']})")

    if lim:
        P(f"\n(b), (c), (e) on a store limited to {lim['store_mbps']} MB/s (block-I/O cgroup on the "
          f"store's disk, one round)")
        P(f"{'size x ranks':<13} {'ckptfwd':>8} {'disk+fsync':>10} {'/disk+fs':>8} {'ckptfwd+fsync':>13} "
          f"{'ratio':>6} {'read disk':>9} {'read ckptfwd':>12} {'ratio':>6}")
        for c, d in limited_rows(lim):
            P(f"{c['size_label'] + ' x' + str(c['ranks']):<13} {fmt(c['lib_s']):>8} {fmt(c['disk_fsync_s']):>10} "
              f"{fmt(c['lib_over_disk_fsync'], '.2f'):>8} {fmt(c['lib_fsync_s']):>13} "
              f"{fmt(c['durable_lib_over_disk'], '.2f'):>6} {fmt(d.get('disk_s')):>9} {fmt(d.get('lib_s')):>12} "
              f"{fmt(d.get('lib_over_disk'), '.2f'):>6}")
        f1 = lim.get("fsync_single")
        if f1:
            P(f"  one {(f1.get('bytes') or 0) / 1048576:.0f} MiB file: write+fsync "
              f"{fmt(f1['disk']['write_s'] + f1['disk']['fsync_s'])} s direct, fsync {fmt(f1['lib']['fsync_s'])} s "
              f"through ckptfwd (ratio {fmt(f1['fsync_lib_over_disk_write_fsync'], '.2f')})")

    cx = result.get("crossnode")
    if cx:
        P("\n(h) files shared across 2 simulated nodes x 2 ranks, s (median; ratio to no library)")
        for p in cx["patterns"]:
            P(f"  {p['pattern']:<8} direct {fmt(p['direct_s'])}  group {fmt(p['group_s'])} "
              f"({fmt(p['group_over_direct'], '.2f')}x)  store only {fmt(p.get('store_s'))} "
              f"({fmt(p.get('store_over_direct'), '.2f')}x)")

    rs = result["restore"]
    P(f"\nbyte-exact: every read-back verified: {'yes' if rs['readback_verified'] else 'NO'}; "
      f"ckptfwd restore, every byte checked: {rs['checked']} checked, {'all byte-exact' if rs['byte_exact'] else 'NOT byte-exact'}"
      + (f"; on the limited store every read-back verified: {'yes' if lim['readback_verified'] else 'NO'}"
         if lim else ""))

    with open(os.path.join(work, "bench.json"), "w") as f:
        json.dump(result, f, indent=1)
    svg_plot(ck, rd, st, os.path.join(work, "bench.svg"))
    P(f"JSON: {os.path.join(work, 'bench.json')}  plot: {os.path.join(work, 'bench.svg')}")
    exact = (rs["byte_exact"] and rs["readback_verified"] and (not lim or lim["readback_verified"])
             and (not cx or cx["byte_exact"]))
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
