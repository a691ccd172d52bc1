"""ckptfwd-report-html FILE: the page of `ckptfwd report --html FILE`.

Reads the report (`ckptfwd report --json`, docs/json.md) on stdin and writes one
self-contained HTML file: the tables of the report and its plots as inline SVG, drawn
with matplotlib (Debian python3-matplotlib). Without matplotlib the page has the tables
and says why it has no plots. Run by `ckptfwd report`, not by hand.
"""
import datetime
import html
import io
import json
import sys


def esc(x):
    return html.escape(str(x))


def human(n):
    n = float(n or 0)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def ratio(r):
    return "-" if r is None else f"{r:.2f}"


def table(headers, rows):
    out = ["<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def plots(m):
    """The plots as SVG texts, or (None, why)."""
    try:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return None, f"no plots: matplotlib is not installed ({e}); Debian: apt-get install python3-matplotlib"
    svgs = []

    def svg_of(fig):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        plt.close(fig)
        text = buf.getvalue()
        return text[text.index("<svg"):]

    waves = m["waves"]
    if waves:
        t0 = min(w["first_close_ns"] for w in waves)
        fig, ax = plt.subplots(figsize=(8, 3.5))
        for node in sorted({w["node"] for w in waves}):
            ws = [w for w in waves if w["node"] == node]
            xs = [(w["first_close_ns"] - t0) / 1e9 for w in ws]
            ax.plot(xs, [w["blocked_s"] for w in ws], marker="o", label=f"{node} blocked")
            ax.plot(xs, [w["durable_s"] for w in ws], marker="x", linestyle="--", label=f"{node} to durable")
        ax.set_xlabel("time since the first checkpoint (s)")
        ax.set_ylabel("seconds")
        ax.set_title("Checkpoint time over the job, per node")
        ax.legend(fontsize="small")
        svgs.append(("checkpoint-time", svg_of(fig)))
    cps = [c for c in m["checkpoints"] if c["step"] != "-"]
    if cps:
        fig, ax = plt.subplots(figsize=(8, 3.5))
        steps = [c["step"] for c in cps]
        ax.plot(range(len(cps)), [c["ratio"] or 0 for c in cps], marker="o")
        ax.set_xticks(range(len(cps)), steps, rotation=45, ha="right")
        ax.set_xlabel("checkpoint step")
        ax.set_ylabel("ratio (bytes in / stored)")
        ax.set_title("Compression ratio per checkpoint")
        svgs.append(("ratio", svg_of(fig)))
        nodes = sorted({n["node"] for c in cps for n in c["nodes"]})
        fig, ax = plt.subplots(figsize=(8, 3.5))
        bottom = [0.0] * len(cps)
        for node in nodes:
            vals = [sum(n["bytes"] for n in c["nodes"] if n["node"] == node) / 2**20 for c in cps]
            ax.bar(range(len(cps)), vals, bottom=bottom, label=node)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xticks(range(len(cps)), steps, rotation=45, ha="right")
        ax.set_xlabel("checkpoint step")
        ax.set_ylabel("MiB")
        ax.set_title("Checkpoint bytes per node")
        ax.legend(fontsize="small")
        svgs.append(("bytes-per-node", svg_of(fig)))
    return svgs, None


def main():
    out_path = sys.argv[1]
    m = json.load(sys.stdin)
    svgs, why = plots(m)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>ckptfwd report: {esc(m['store'])}</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:70em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:2px 8px;"
        "text-align:right}th{background:#eee}td:first-child{text-align:left}"
        ".plot{margin:1em 0}</style></head><body>",
        f"<h1>ckptfwd report</h1><p>store <code>{esc(m['store'])}</code>, jobs "
        f"{esc(', '.join(m['jobs']) or '-')}, latest complete checkpoint "
        f"<b>{esc(m['latest_complete'] or 'none')}</b>; made "
        f"{esc(datetime.datetime.now().strftime('%Y-%m-%d %H:%M:%S'))}</p>",
    ]
    parts.append("<h2>Plots</h2>")
    if svgs is None:
        parts.append(f'<p class="noplots">{esc(why)}</p>')
    else:
        for name, svg in svgs:
            parts.append(f'<div class="plot" id="plot-{name}">{svg}</div>')
    parts.append("<h2>Checkpoints</h2>")
    parts.append(table(
        ["step", "files", "ranks", "size", "stored", "ratio", "per node", "state"],
        [[c["step"] + (" (latest)" if c["latest"] else ""), c["files"], c["ranks"], human(c["bytes_in"]),
          human(c["bytes_stored"]), ratio(c["ratio"]),
          ", ".join(f"{n['node']} {human(n['bytes'])}" for n in c["nodes"]),
          "complete" if c["complete"] else "incomplete"] for c in m["checkpoints"]]))
    parts.append("<h2>Nodes</h2>")
    parts.append(table(
        ["node", "checkpoints", "blocked mean (s)", "blocked max (s)", "to durable mean (s)",
         "files committed", "bytes committed", "ratio", "fallbacks", "errors"],
        [[n["node"], n["checkpoints"], n["blocked_mean_s"], n["blocked_max_s"], n["durable_mean_s"],
          n["files_committed"], human(n["bytes_committed"]), ratio(n["ratio"]), n["fallbacks"],
          n["errors"]] for n in m["nodes"]]))
    adv = [(n["node"], n["advice"]) for n in m["nodes"] if "advice" in n]
    if adv:
        parts.append("<h2>How often to checkpoint</h2>")
        for node, a in adv:
            parts.append(f"<h3>{esc(node)}</h3><pre>{esc(json.dumps(a, indent=1))}</pre>")
    parts.append("<h2>Checkpoint records</h2>")
    parts.append(table(
        ["node", "job", "first close", "blocked (s)", "to durable (s)", "processes", "files", "bytes"],
        [[w["node"], w["job"],
          datetime.datetime.fromtimestamp(w["first_close_ns"] / 1e9).strftime("%H:%M:%S.%f")[:-3],
          w["blocked_s"], w["durable_s"], w["processes"], w["files"], human(w["bytes"])]
         for w in m["waves"]]))
    if m["variables"]:
        parts.append("<h2>Variables</h2>")
        parts.append(table(["key", "dtype", "bytes", "ratio", "chain"],
                           [[v["key"], v["dtype"], human(v["bytes_in"]), ratio(v["ratio"]), v["chain"]]
                            for v in m["variables"]]))
    s = m["size"]
    parts.append("<h2>Size</h2><ul>")
    if s["bytes_per_rank_mean"] is not None:
        parts.append(f"<li>per rank and checkpoint: {human(s['bytes_per_rank_min'])} min, "
                     f"{human(s['bytes_per_rank_mean'])} mean, {human(s['bytes_per_rank_max'])} max</li>")
    parts.append(f"<li>store: {human(s['store_bytes'])} on disk, {human(s['store_growth_per_checkpoint'])} "
                 f"more per checkpoint; keeping 1 checkpoint {human(s['store_bytes_keeping_1'])}, "
                 f"3 {human(s['store_bytes_keeping_3'])}</li>")
    lim = s["stage_limit"]
    parts.append(f"<li>staging: at most {human(s['staging_peak_node_bytes'])} of one checkpoint on one node"
                 + (f", CKPTFWD_STAGE_LIMIT {human(lim)} ({'fits' if s['staging_fits'] else 'does not fit'})"
                    if lim is not None else "") + "</li></ul>")
    if m["problems"]:
        parts.append("<h2>Problems</h2><ul>" + "".join(f"<li>{esc(p)}</li>" for p in m["problems"]) + "</ul>")
    parts.append("</body></html>")
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))


if __name__ == "__main__":
    main()
