#!/usr/bin/python3
# The report of make bench-ratio (tools/bench/bench_ratio.sh): reads the JSON lines of one
# run (bench_ratio_driver, bench_anchors and the CLI anchors) and prints
#   1. per data set, each scheme's ratio at each group size and its improvement over
#      Agnostic = gzip -6 of the concatenated files (the layout of mcrEngine's Table IV);
#   2. per data set, ratio and per-core compress / decompress MB/s of every anchor and of
#      each ckptfwd scheme at the largest group size;
# writes all records and the table as JSON, and an SVG: per data set, ratio against group
# size per scheme, and ratio against compress MB/s for anchors and schemes; and the two
# tables as Markdown (OUT.md, next to OUT.json) for docs/benchmarks.md; and, when bench_lossy ran,
#   3. per data set and error bound, the float variables' ratio for each opt-in lossy chain,
# with its plot (OUT-lossy.svg: ratio against bound) and table.
#   bench_ratio_report.py RECORDS.jsonl OUT.json OUT.svg
# Exit status 1 when a record says a run failed (a restore not byte-exact included).
import datetime
import json
import math
import os
import sys

BASELINE = "gzip-6"  # concatenated: mcrEngine's "Agnostic"
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def ordered(seq):
    out = []
    for x in seq:
        if x not in out:
            out.append(x)
    return out


def fmt_ratio(r):
    return f"{r['ratio']:.3f}" if r.get("ok") else "FAIL"


def table_iv(recs, sets, schemes, groups):
    rows = {}
    for s in sets:
        base = next((r for r in recs if r["set"] == s and r.get("anchor") == BASELINE), None)
        b = base["ratio"] if base and base.get("ok") else None
        raw = next((r["raw_bytes"] for r in recs if r["set"] == s and "raw_bytes" in r), 0)
        # The share of the bytes inference mapped to variables: what an aware scheme can use.
        mapped = next((r["mapped_bytes"] for r in recs if r["set"] == s and r.get("ok")
                       and "mapped_bytes" in r), None)
        share = f"{100 * mapped / raw:.1f}% of bytes in variables" if mapped is not None else ""
        nfiles = next((r["files"] for r in recs if r["set"] == s and "files" in r), 0)
        print(f"\n{s}: {raw / 1e6:.1f} MB in {nfiles} files, {share}; Agnostic (gzip -6 "
              f"concatenated) " + (f"{b:.3f}" if b else "missing"))
        print(f"  {'scheme':<16}" + "".join(f"{'g=' + str(g):>17}" for g in groups))
        for sc in schemes:
            cells = []
            for g in groups:
                r = next((r for r in recs if r["set"] == s and r.get("scheme") == sc
                          and r.get("group") == g), None)
                if r is None:
                    cells.append(f"{'-':>17}")
                    continue
                imp = (r["ratio"] / b - 1) * 100 if b and r.get("ok") else None
                rows.setdefault(s, {}).setdefault(sc, {})[str(g)] = {
                    "ratio": r.get("ratio"), "improvement_pct": imp}
                txt = fmt_ratio(r) + (f" ({imp:+.1f}%)" if imp is not None else "")
                cells.append(f"{txt:>17}")
            print(f"  {sc:<16}" + "".join(cells))
    return rows


def speed_table(recs, sets, schemes, gmax):
    for s in sets:
        print(f"\n{s}: ratio and per-core MB/s (of the raw bytes)")
        print(f"  {'compressor':<30} {'ratio':>7} {'compress':>9} {'decompress':>11} "
              f"{'wall':>7} {'first':>7} {'1st ratio':>9} {'trials':>7}")
        entries = [r for r in recs if r["set"] == s and r["kind"] in ("cli", "anchor")]
        entries.sort(key=lambda r: -r.get("ratio", 0))
        for sc in schemes:
            r = next((r for r in recs if r["set"] == s and r.get("scheme") == sc
                      and r.get("group") == gmax), None)
            if r:
                entries.append(r)
        for r in entries:
            name = (f"ckptfwd {r['scheme']} g={r['group']}" if r["kind"] == "ckptfwd"
                    else r["anchor"] + (" (lib)" if r["kind"] == "anchor" else ""))
            if not r.get("ok"):
                print(f"  {name:<30} FAILED: {r.get('error', '?')}")
                continue
            wall = f"{r['wall_mbs']:>7.1f}" if "wall_mbs" in r else f"{'':>7}"
            first = (f"{r['compress_first_mbs']:>7.1f}" if "compress_first_mbs" in r
                     else f"{'':>7}")
            first_ratio = (f"{r['first_ratio']:>9.3f}" if "first_ratio" in r else f"{'':>9}")
            # The trials run before the first checkpoint's encoding, as a share of the
            # later checkpoint's CPU time (which runs none).
            trials = (f"{100 * r['first_trial_s'] / r['compress_s']:>6.0f}%"
                      if r.get("first_trial_s") is not None and r.get("compress_s") else f"{'':>7}")
            print(f"  {name:<30} {r['ratio']:>7.3f} {r['compress_mbs']:>9.1f} "
                  f"{r['decompress_mbs']:>11.1f} {wall} {first} {first_ratio} {trials}".rstrip())


def svg(recs, sets, schemes, groups, path):
    pw, ph, ml, mt = 440, 240, 50, 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * pw + 20}" '
           f'height="{40 + len(sets) * (ph + 30)}" font-family="sans-serif" font-size="11">',
           '<text x="10" y="20" font-size="14">make bench-ratio: compression ratio by group '
           'size (left) and ratio against per-core compress MB/s (right)</text>']

    def axes(x0, y0, title, xlabel):
        out.append(f'<rect x="{x0 + ml}" y="{y0 + mt}" width="{pw - ml - 20}" '
                   f'height="{ph - mt - 40}" fill="none" stroke="#888"/>')
        out.append(f'<text x="{x0 + ml}" y="{y0 + mt - 8}" font-weight="bold">{title}</text>')
        out.append(f'<text x="{x0 + pw // 2}" y="{y0 + ph - 8}" text-anchor="middle">'
                   f'{xlabel}</text>')

    for i, s in enumerate(sets):
        y0 = 40 + i * (ph + 30)
        mine = [r for r in recs if r["set"] == s and r.get("ok")]
        if not mine:
            continue
        lo = min(r["ratio"] for r in mine)
        hi = max(r["ratio"] for r in mine)
        lo, hi = lo - 0.05 * (hi - lo + 0.1), hi + 0.05 * (hi - lo + 0.1)

        def yv(v):
            return y0 + mt + (ph - mt - 40) * (hi - v) / (hi - lo)

        def yticks(x0):
            for k in range(5):
                v = lo + (hi - lo) * k / 4
                out.append(f'<text x="{x0 + ml - 4}" y="{yv(v) + 4:.1f}" '
                           f'text-anchor="end">{v:.2f}</text>')

        # Left: ratio against group size, log2 spaced.
        axes(0, y0, f"{s}: ratio by group size", "group size (files merged)")
        yticks(0)
        gl = [math.log2(g) for g in groups]
        g0, g1 = min(gl), max(gl) if max(gl) > min(gl) else min(gl) + 1

        def xg(g):
            return ml + 10 + (pw - ml - 50) * (math.log2(g) - g0) / (g1 - g0)

        for g in groups:
            out.append(f'<text x="{xg(g):.1f}" y="{y0 + ph - 26}" text-anchor="middle">{g}</text>')
        base = next((r for r in mine if r.get("anchor") == BASELINE), None)
        if base:
            out.append(f'<line x1="{ml}" x2="{pw - 20}" y1="{yv(base["ratio"]):.1f}" '
                       f'y2="{yv(base["ratio"]):.1f}" stroke="#555" stroke-dasharray="4 3"/>')
            out.append(f'<text x="{pw - 24}" y="{yv(base["ratio"]) - 3:.1f}" '
                       f'text-anchor="end" fill="#555">gzip -6 (Agnostic)</text>')
        for k, sc in enumerate(schemes):
            pts = [(xg(r["group"]), yv(r["ratio"])) for g in groups for r in mine
                   if r.get("scheme") == sc and r["group"] == g]
            if not pts:
                continue
            c = COLORS[k % len(COLORS)]
            out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="'
                       + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
            out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{c}"/>' for x, y in pts]
            # The legend in the middle of the height, where the agnostic and the aware
            # curves leave room between them.
            ly = y0 + mt + (ph - mt - 40) / 2 - 6 * len(schemes) + 12 * k
            out.append(f'<text x="{pw - 130}" y="{ly:.1f}" fill="{c}">{sc}</text>')

        # Right: ratio against compress MB/s, log x.
        x0 = pw + 20
        axes(x0, y0, f"{s}: ratio vs compress speed", "compress MB/s per core (log)")
        yticks(x0)
        gmax = max(groups)
        pts = [r for r in mine if r["kind"] != "ckptfwd" or r["group"] == gmax]
        speeds = [r["compress_mbs"] for r in pts if r.get("compress_mbs", 0) > 0]
        # Room on the right for the labels of the fastest points.
        s0, s1 = math.log10(min(speeds)) - 0.1, math.log10(max(speeds)) + 0.5

        def xs(v):
            return x0 + ml + (pw - ml - 20) * (math.log10(v) - s0) / (s1 - s0)

        for e in range(math.floor(s0), math.ceil(s1) + 1):
            if s0 <= e <= s1:
                out.append(f'<text x="{xs(10 ** e):.1f}" y="{y0 + ph - 26}" '
                           f'text-anchor="middle">{10 ** e:g}</text>')
        for r in pts:
            if r.get("compress_mbs", 0) <= 0:
                continue
            x, y = xs(r["compress_mbs"]), yv(r["ratio"])
            if r["kind"] == "ckptfwd":
                c = COLORS[schemes.index(r["scheme"]) % len(COLORS)]
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{c}"/>')
                if r["scheme"] in (schemes[0], schemes[-1]):
                    out.append(f'<text x="{x + 6:.1f}" y="{y + 4:.1f}" fill="{c}">ckptfwd '
                               f'{r["scheme"]}</text>')
            else:
                out.append(f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" '
                           f'fill="#444"/>')
                out.append(f'<text x="{x + 5:.1f}" y="{y - 4:.1f}" fill="#444">'
                           f'{r["anchor"]}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def mbs(v):
    return f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def markdown(recs, sets, schemes, groups, path):
    """The two tables in the layout of docs/benchmarks.md (docs/benchmarks.md, "Compression benchmark")."""
    gmax = max(groups)
    out = ["| set | Agnostic (gzip -6) | scheme | " + " | ".join(f"g={g}" for g in groups) + " |",
           "|---|---|---|" + "---|" * len(groups)]
    for s in sets:
        base = next((r for r in recs if r["set"] == s and r.get("anchor") == BASELINE), None)
        b = base["ratio"] if base and base.get("ok") else None
        for sc in schemes:
            cells = []
            for g in groups:
                r = next((r for r in recs if r["set"] == s and r.get("scheme") == sc
                          and r.get("group") == g), None)
                if r is None or not r.get("ok"):
                    cells.append("FAIL" if r else "-")
                    continue
                imp = f" ({(r['ratio'] / b - 1) * 100:+.1f}%)" if b else ""
                cells.append(f"{r['ratio']:.3f}{imp}")
            out.append(f"| {s} | {b:.3f} | {sc} | " + " | ".join(cells) + " |" if b else
                       f"| {s} | - | {sc} | " + " | ".join(cells) + " |")
    out += ["", "| compressor | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
    names = [("ckptfwd", sc) for sc in schemes] + ordered(
        (r["kind"], r["anchor"]) for r in recs if r["kind"] in ("cli", "anchor"))
    for kind, name in names:
        cells = []
        for s in sets:
            if kind == "ckptfwd":
                r = next((r for r in recs if r["set"] == s and r.get("scheme") == name
                          and r.get("group") == gmax), None)
            else:
                r = next((r for r in recs if r["set"] == s and r.get("anchor") == name), None)
            ok = r and r.get("ok")
            cells.append(f"{r['ratio']:.3f}, {mbs(r['compress_mbs'])} / {mbs(r['decompress_mbs'])}"
                         if ok else ("FAIL" if r else "-"))
        label = f"ckptfwd {name} g={gmax}" if kind == "ckptfwd" else name
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


LOSSY_CHAINS = ["quant+lorenzo", "quant+wavelet", "auto", "auto-without-wavelet"]


def lossy_table(lossy, sets):
    """Per set and bound: the float variables' ratio for each lossy chain (bench_lossy)."""
    rows, lines = [], []
    head = f"{'set':<16} {'bound':>7} {'lossless':>9} " + " ".join(f"{c:>21}" for c in
                                                                       LOSSY_CHAINS)
    lines.append(head + f" {'max err/bound':>14}")
    md = ["| set | bound (of the value range) | lossless | " + " | ".join(LOSSY_CHAINS) +
          " | largest error / bound |", "|---|---|---|" + "---|" * len(LOSSY_CHAINS) + "---|"]
    for s in sets:
        mine = [r for r in lossy if r["set"] == s]
        if not mine:
            continue
        exact = next((r for r in mine if r["chain"] == "lossless"), None)
        ex = f"{exact['ratio']:.3f}" if exact and exact.get("ok") else "FAIL"
        for b in sorted({r["bound"] for r in mine if r["bound"] > 0}, reverse=True):
            cells, worst = [], 0.0
            for c in LOSSY_CHAINS:
                r = next((r for r in mine if r["bound"] == b and r["chain"] == c), None)
                cells.append(f"{r['ratio']:.3f}" if r and r.get("ok") else ("FAIL" if r else "-"))
                if r and r.get("ok"):
                    worst = max(worst, r["max_err_over_bound"])
            rows.append({"set": s, "bound": b, "lossless": ex,
                         **dict(zip(LOSSY_CHAINS, cells)), "max_err_over_bound": worst})
            lines.append(f"{s:<16} {b:>7g} {ex:>9} " + " ".join(f"{c:>21}" for c in cells) +
                         f" {worst:>14.4f}")
            md.append(f"| {s} | {b:g} | {ex} | " + " | ".join(cells) + f" | {worst:.4f} |")
    print("\n".join(lines))
    return rows, md


def lossy_svg(lossy, sets, path):
    """Per set: float ratio against the error bound (log-log) for each lossy chain."""
    sets = [s for s in sets if any(r["set"] == s and r["bound"] > 0 and r.get("ok") and
                                   r["ratio"] > 0 for r in lossy)]
    pw, ph, ml, mt, cols = 300, 220, 50, 30, 3
    rows_n = (len(sets) + cols - 1) // cols
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * pw + 20}" '
           f'height="{50 + rows_n * (ph + 20)}" font-family="sans-serif" font-size="11">',
           '<text x="10" y="20" font-size="14">make bench-ratio, lossy (opt-in): ratio of the '
           'float variables against the error bound (of each variable\'s value range); dashed: '
           'lossless</text>']
    for i, c in enumerate(LOSSY_CHAINS):
        out.append(f'<text x="{10 + i * 170}" y="38" fill="{COLORS[i]}">&#9632; {c}</text>')
    for k, s in enumerate(sets):
        x0, y0 = (k % cols) * pw, 50 + (k // cols) * (ph + 20)
        mine = [r for r in lossy if r["set"] == s and r.get("ok") and r["ratio"] > 0]
        bounds = sorted({r["bound"] for r in mine if r["bound"] > 0})
        if not bounds:
            continue
        ratios = [r["ratio"] for r in mine]
        lo, hi = math.log10(min(ratios)) - 0.05, math.log10(max(ratios)) + 0.05
        b0, b1 = math.log10(bounds[0]), math.log10(bounds[-1])
        b1 = b1 if b1 > b0 else b0 + 1

        def xb(b):
            return x0 + ml + 10 + (pw - ml - 40) * (math.log10(b) - b0) / (b1 - b0)

        def yr(v):
            return y0 + mt + (ph - mt - 40) * (hi - math.log10(v)) / (hi - lo)

        out.append(f'<rect x="{x0 + ml}" y="{y0 + mt}" width="{pw - ml - 20}" '
                   f'height="{ph - mt - 40}" fill="none" stroke="#888"/>')
        out.append(f'<text x="{x0 + ml}" y="{y0 + mt - 8}" font-weight="bold">{s}</text>')
        out.append(f'<text x="{x0 + pw // 2}" y="{y0 + ph - 8}" text-anchor="middle">'
                   f'error bound (log)</text>')
        for b in bounds:
            out.append(f'<text x="{xb(b):.1f}" y="{y0 + ph - 24}" text-anchor="middle">'
                       f'{b:g}</text>')
        for e in range(math.floor(lo), math.ceil(hi) + 1):
            for m in (1, 2, 5):
                v = m * 10 ** e
                if lo <= math.log10(v) <= hi:
                    out.append(f'<text x="{x0 + ml - 4}" y="{yr(v) + 4:.1f}" '
                               f'text-anchor="end">{v:g}</text>')
        exact = next((r for r in mine if r["chain"] == "lossless"), None)
        if exact and lo <= math.log10(exact["ratio"]) <= hi:
            out.append(f'<line x1="{x0 + ml}" x2="{x0 + pw - 20}" y1="{yr(exact["ratio"]):.1f}" '
                       f'y2="{yr(exact["ratio"]):.1f}" stroke="#444" stroke-dasharray="4 3"/>')
        for i, c in enumerate(LOSSY_CHAINS):
            pts = [(xb(r["bound"]), yr(r["ratio"])) for r in sorted(
                (r for r in mine if r["chain"] == c and r["bound"] > 0), key=lambda r: r["bound"])]
            if pts:
                out.append(f'<polyline fill="none" stroke="{COLORS[i]}" stroke-width="1.5" '
                           f'points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}"/>')
                for x, y in pts:
                    out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{COLORS[i]}"/>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    recs_path, json_path, svg_path = sys.argv[1:4]
    every = load(recs_path)
    lossy = [r for r in every if r["kind"] == "lossy"]
    recs = [r for r in every if r["kind"] != "lossy"]
    sets = ordered(r["set"] for r in recs)
    schemes = ordered(r["scheme"] for r in recs if r["kind"] == "ckptfwd")
    groups = sorted(set(r["group"] for r in recs if r["kind"] == "ckptfwd"))
    print("\n== Ratio per scheme and group size; in parentheses the improvement over "
          "Agnostic (gzip -6 of the concatenated files)")
    rows = table_iv(recs, sets, schemes, groups)
    print("\n== Anchors and ckptfwd on the same bytes (MB/s per core = raw bytes / CPU "
          "seconds; ckptfwd: compress = the whole write_container of a job's later "
          "checkpoint (inference, merge, codec chains remembered, write), first = the "
          "same for its first checkpoint (codec chains tried on samples: the largest in "
          "full, the others quickly, their full trials after the commit), 1st ratio = "
          "the first checkpoint's ratio, trials = the CPU time of its trials as a share of "
          "the later checkpoint's, wall = wall time of the later one with fsync, "
          "decompress = reading every file back)")
    speed_table(recs, sets, schemes, max(groups) if groups else 0)
    lossy_rows, lossy_md = [], []
    lossy_svg_path = os.path.splitext(svg_path)[0] + "-lossy.svg"
    if lossy:
        print("\n== Lossy (opt-in), the float variables only (bench_lossy): ratio per chain "
              "at each error bound, a fraction of each variable's value range; every value "
              "checked against its bound")
        lossy_rows, lossy_md = lossy_table(lossy, ordered(r["set"] for r in lossy))
    failed = [r for r in every if not r.get("ok")]
    with open(json_path, "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"),
                   "cores": os.cpu_count(), "baseline": BASELINE + " (concatenated)",
                   "table": rows, "lossy_table": lossy_rows, "records": every,
                   "failed": len(failed)}, f, indent=1)
    md_path = os.path.splitext(json_path)[0] + ".md"
    if groups:
        svg(recs, sets, schemes, groups, svg_path)
        markdown(recs, sets, schemes, groups, md_path)
    if lossy:
        lossy_svg(lossy, ordered(r["set"] for r in lossy), lossy_svg_path)
        with open(md_path, "a" if groups else "w") as f:
            f.write("\n" + "\n".join(lossy_md) + "\n")
    print(f"\nJSON: {json_path}; plots: {svg_path}" +
          (f", {lossy_svg_path}" if lossy else "") + f"; tables for docs/benchmarks.md: {md_path}")
    if failed:
        print(f"{len(failed)} run(s) FAILED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
