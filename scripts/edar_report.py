"""Generates docs/edar.md and its plots from the EdAR evaluation runs.

  python scripts/edar_report.py --dir docs/edar --out docs/edar.md

Reads <dir>/<experiment>/results.jsonl (written by `mpquic-bench run`, see
scripts/edar-eval.sh), the training record (<dir>/train.log,
<dir>/train-time.txt, <dir>/collect-summary.json) and the hand-written
analysis <dir>/analysis.md, which is inserted verbatim. Every number in the
page comes from those files. Needs numpy and matplotlib (.venv-train).
"""

import argparse
import json
import math
import os
import re

import numpy as np

ORDER = ["minrtt", "blest", "peekaboo", "edar", "edar-o"]
LABEL = {"minrtt": "minRTT", "blest": "BLEST", "peekaboo": "Peekaboo", "edar": "EdAR-p", "edar-o": "EdAR-o"}
STABLE = [(0, 20), (40, 60), (80, 100)]
HANDOFF = [(20, 40), (60, 80)]


def load(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def label(s):
    if s in LABEL:
        return LABEL[s]
    for k, v in LABEL.items():
        if s.startswith(k + "-"):
            return v + s[len(k):]
    return s


def sched_order(names):
    known = [n for n in ORDER if n in names]
    return known + sorted(n for n in names if n not in ORDER)


def mean_ci(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    if not xs:
        return float("nan"), float("nan"), 0
    m = float(np.mean(xs))
    if len(xs) < 2:
        return m, float("nan"), len(xs)
    # t quantiles for 95% two-sided
    t = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}.get(len(xs), 1.96)
    return m, t * float(np.std(xs, ddof=1)) / math.sqrt(len(xs)), len(xs)


def fmt(m, ci, scale=1.0, digits=2):
    if math.isnan(m):
        return "–"
    if math.isnan(ci):
        return f"{m / scale:.{digits}f}"
    return f"{m / scale:.{digits}f} ± {ci / scale:.{digits}f}"


def ok(r):
    return not r.get("error") and r.get("sha256_ok")


def window_goodput(r, windows):
    s = r.get("goodput_series_bps") or []
    step = r.get("series_step_s") or 0.1
    vals = []
    for a, b in windows:
        i0, i1 = int(round(a / step)), int(round(b / step))
        seg = s[i0:i1]
        if len(seg) < (i1 - i0) * 0.9:
            return None
        vals.extend(seg)
    return float(np.mean(vals)) if vals else None


def plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as p
    return p


def handoff_section(d, out):
    rows = load(os.path.join(d, "handoff", "results.jsonl"))
    if not rows:
        return "_handoff experiment not run_\n", {}
    by = {}
    for r in rows:
        by.setdefault(r["scheduler"], []).append(r)
    names = sched_order(by)
    stats = {}
    lines = ["| scheduler | runs ok | goodput stable windows, Mbit/s | goodput handoff windows, Mbit/s | goodput whole run, Mbit/s | out-of-order segments | redundant / sent bytes |",
             "|---|---|---|---|---|---|---|"]
    for n in names:
        rs = [r for r in by[n] if ok(r)]
        st = mean_ci([window_goodput(r, STABLE) for r in rs])
        ho = mean_ci([window_goodput(r, HANDOFF) for r in rs])
        whole = mean_ci([r["goodput_bps"] for r in rs])
        ooo = mean_ci([r["ooo_segments"] for r in rs])
        red = mean_ci([r["redundant_bytes"] / max(r["sent_bytes"], 1) for r in rs])
        stats[n] = {"stable": st[0], "handoff": ho[0], "ooo": ooo[0]}
        lines.append(f"| {label(n)} | {len(rs)}/{len(by[n])} | {fmt(*st[:2], 1e6)} | {fmt(*ho[:2], 1e6)} | {fmt(*whole[:2], 1e6)} | "
                     f"{fmt(*ooo[:2], 1, 0)} | {fmt(red[0] * 100, red[1] * 100, 1, 1)}% |")
    # Fig. 8 analogue: goodput over time, mean over seeds.
    p = plt()
    fig, ax = p.subplots(figsize=(9, 3.6))
    for n in names:
        ss = [r["goodput_series_bps"] for r in by[n] if ok(r) and r.get("goodput_series_bps")]
        if not ss:
            continue
        L = min(len(s) for s in ss)
        m = np.mean([s[:L] for s in ss], axis=0)
        step = by[n][0].get("series_step_s") or 0.1
        k = max(1, int(round(1.0 / step)))  # 1 s moving average
        m = np.convolve(m, np.ones(k) / k, mode="same")
        ax.plot(np.arange(L) * step, m / 1e6, label=label(n), lw=1.2)
    for a, b in HANDOFF:
        ax.axvspan(a, b, color="0.9", zorder=0)
    ax.set(xlabel="time, s (grey: path 2 handoff)", ylabel="goodput, Mbit/s (1 s mean)", title="Table III scenario: goodput over time (mean of seeds)")
    ax.legend(ncol=5, fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "handoff-goodput.png"), dpi=100)
    p.close(fig)
    # Fig. 9a analogue
    fig, ax = p.subplots(figsize=(6, 3.2))
    x = np.arange(len(names))
    ax.bar(x - 0.2, [stats[n]["stable"] / 1e6 for n in names], 0.4, label="stable (0-20, 40-60, 80-100 s)")
    ax.bar(x + 0.2, [stats[n]["handoff"] / 1e6 for n in names], 0.4, label="handoff (20-40, 60-80 s)")
    ax.set_xticks(x, [label(n) for n in names])
    ax.set(ylabel="goodput, Mbit/s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "handoff-windows.png"), dpi=100)
    p.close(fig)
    return "\n".join(lines) + "\n", stats


def stable_section(d):
    rows = load(os.path.join(d, "stable", "results.jsonl"))
    if not rows:
        return "_stable experiment not run_\n", {}
    by = {}
    for r in rows:
        by.setdefault(r["scheduler"], []).append(r)
    names = sched_order(by)
    base = None
    if "minrtt" in by:
        base = mean_ci([r["redundant_bytes"] / max(r["sent_bytes"], 1) for r in by["minrtt"] if ok(r)])[0]
    out = {}
    lines = ["| scheduler | runs ok | goodput, Mbit/s | redundant / sent bytes | above minRTT's retransmissions |", "|---|---|---|---|---|"]
    for n in names:
        rs = [r for r in by[n] if ok(r)]
        g = mean_ci([r["goodput_bps"] for r in rs])
        red = mean_ci([r["redundant_bytes"] / max(r["sent_bytes"], 1) for r in rs])
        extra = red[0] - base if base is not None else float("nan")
        out[n] = red[0]
        lines.append(f"| {label(n)} | {len(rs)}/{len(by[n])} | {fmt(*g[:2], 1e6)} | {fmt(red[0] * 100, red[1] * 100, 1, 2)}% | {extra * 100:+.2f} pp |")
    return "\n".join(lines) + "\n", out


def settings_section(d):
    rows = load(os.path.join(d, "settings", "results.jsonl"))
    if not rows:
        return "_settings experiment not run_\n"
    scen = sorted({r["scenario"] for r in rows}, key=lambda s: ["i", "ii", "iii", "iv", "v"].index(s.split("-")[2].split(".")[0]))
    names = sched_order({r["scheduler"] for r in rows})
    lines = ["| setting | scheduler | runs ok | goodput, Mbit/s | FCT, s | out-of-order segments | redundant / sent |", "|---|---|---|---|---|---|---|"]
    agg = {}
    for s in scen:
        for n in names:
            rs = [r for r in rows if r["scenario"] == s and r["scheduler"] == n]
            good = [r for r in rs if ok(r)]
            g = mean_ci([r["goodput_bps"] for r in good])
            f = mean_ci([r["fct_s"] for r in good])
            o = mean_ci([r["ooo_segments"] for r in good])
            red = mean_ci([r["redundant_bytes"] / max(r["sent_bytes"], 1) for r in good])
            agg[(s, n)] = (g[0], f[0], o[0])
            sid = s.split("-")[2].split(".")[0]
            lines.append(f"| {sid} | {label(n)} | {len(good)}/{len(rs)} | {fmt(*g[:2], 1e6)} | {fmt(*f[:2], 1, 1)} | {fmt(*o[:2], 1, 0)} | {red[0] * 100:.1f}% |")
    p = plt()
    fig, axs = p.subplots(1, 3, figsize=(12, 3.4))
    x = np.arange(len(scen))
    w = 0.8 / max(1, len(names))
    for k, n in enumerate(names):
        for j, (title, scale) in enumerate([("goodput, Mbit/s", 1e6), ("FCT, s", 1), ("out-of-order segments", 1)]):
            axs[j].bar(x + (k - len(names) / 2 + 0.5) * w, [agg[(s, n)][j] / scale for s in scen], w, label=label(n))
            axs[j].set_xticks(x, [s.split("-")[2].split(".")[0] for s in scen])
            axs[j].set(title=title, xlabel="setting")
    axs[1].set_yscale("log")
    axs[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "settings.png"), dpi=100)
    p.close(fig)
    return "\n".join(lines) + "\n"


def sweep_value(name):
    m = re.search(r"@\w+=([0-9.]+)(ms|%)?", name)
    return float(m.group(1)) if m else float("nan")


def sweep_section(d, exp, xlabel):
    rows = load(os.path.join(d, exp, "results.jsonl"))
    if not rows:
        return f"_{exp} experiment not run_\n"
    vals = sorted({sweep_value(r["scenario"]) for r in rows})
    names = sched_order({r["scheduler"] for r in rows})
    head = "| scheduler | " + " | ".join(f"{v:g}" for v in vals) + " |"
    lines = [f"FCT, s (mean ± 95% CI) by {xlabel}:", "", head, "|---|" + "---|" * len(vals)]
    p = plt()
    fig, ax = p.subplots(figsize=(6, 3.4))
    for n in names:
        cells, ms, cs = [], [], []
        for v in vals:
            rs = [r for r in rows if r["scheduler"] == n and sweep_value(r["scenario"]) == v]
            good = [r for r in rs if ok(r)]
            f = mean_ci([r["fct_s"] for r in good])
            cells.append(fmt(*f[:2], 1, 2) + ("" if len(good) == len(rs) else f" ({len(rs) - len(good)} failed)"))
            ms.append(f[0])
            cs.append(0 if math.isnan(f[1]) else f[1])
        lines.append(f"| {label(n)} | " + " | ".join(cells) + " |")
        ax.errorbar(vals, ms, yerr=cs, marker="o", capsize=3, label=label(n))
    ax.set(xlabel=xlabel, ylabel="FCT, s")
    if "loss" in exp:
        ax.set_xscale("log")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, f"{exp}.png"), dpi=100)
    p.close(fig)
    return "\n".join(lines) + "\n"


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="docs/edar")
    ap.add_argument("--out", default="docs/edar.md")
    a = ap.parse_args()
    d = a.dir
    rel = os.path.relpath(d, os.path.dirname(os.path.abspath(a.out)) or ".")
    ho, hstats = handoff_section(d, a.out)
    stb, _ = stable_section(d)
    summary = ""
    for line in read(os.path.join(d, "train.log")).splitlines():
        if line.startswith("summary "):
            summary = line[len("summary "):]
    tr = json.loads(summary) if summary else {}
    coll = json.loads(read(os.path.join(d, "collect-summary.json"), "{}") or "{}")
    runs = {e: json.loads(read(os.path.join(d, e, "run.json"), "{}") or "{}") for e in ["handoff", "stable", "settings", "fig10", "fig11"]}
    onl = {e: json.loads(read(os.path.join(d, e, "online.json"), "{}") or "{}") for e in ["handoff", "settings", "fig10", "fig11"]}

    ratio = ""
    if "minrtt" in hstats:
        parts = []
        for n in ["edar", "edar-o", "blest", "peekaboo"]:
            if n in hstats and hstats["minrtt"]["handoff"] > 0:
                parts.append(f"{label(n)}/minRTT = {hstats[n]['handoff'] / hstats['minrtt']['handoff']:.2f}")
        ratio = "Handoff-window goodput ratios: " + ", ".join(parts) + " (the paper reports about 2× for EdAR)."

    md = []
    md.append("# EdAR in mpqsched: data collection, training, evaluation\n")
    md.append("_Generated by `scripts/edar-eval.sh` (runs) and `scripts/edar_report.py` (this page) from the files under "
              f"[{rel}/]({rel}/); the analysis section is [{rel}/analysis.md]({rel}/analysis.md). All runs are in virtual time "
              "(testing/synctest over the in-process emulator) with real quic-go._\n")
    md.append("> **History.** This page evaluates the EdAR model trained on data from the first version of the session, "
              "before issue 25. `testdata/edar.onnx` is now the model retrained through the training environment; its "
              "evaluation is [edar-gym.md](edar-gym.md) (`make edar-eval`).\n")
    md.append(read(os.path.join(d, "analysis.md")))
    md.append("\n## Data collection and training\n")
    if coll:
        per = ", ".join(f"{k}: {v}" for k, v in (coll.get("per_setting") or {}).items())
        md.append(f"- Data collection (Algorithm 1, `cmd/edar-collect`): {coll.get('flows')} flows over settings {coll.get('settings')} "
                  f"({per}), transfer sizes uniform in {coll.get('bytes_range')}; "
                  f"{coll.get('normal_flows')} flows with μ(s) = normal and {coll.get('redundant_flows')} with μ(s) = redundant; "
                  f"{coll.get('transitions')} transitions ({coll.get('mb_on_disk')} MB on disk), "
                  f"{coll.get('emulated_seconds')} s of emulated transfers, {coll.get('wall_seconds')} s of wall time summed over flows "
                  f"(two at a time; elapsed time below); "
                  f"{coll.get('errors')} transfers ended with an error.\n")
    if tr:
        md.append(f"- Training (`make train`, JAX + optax on CPU): {tr.get('steps')} DQN steps, batch 32, Adam 1e-4, γ = 0.6, τ = 0.01, "
                  f"on {tr.get('transitions')} transitions (10% held out); {tr.get('train_seconds')} s of training, "
                  f"{tr.get('total_seconds')} s for the whole trainer run; {tr.get('params')} parameters; "
                  f"ONNX/JAX parity max |ΔQ| = {tr.get('parity_max_abs'):.1e} on held-out states (gate 1e-5).\n")
    tt = read(os.path.join(d, "train-time.txt")).strip()
    if tt:
        md.append("- Times recorded by `make train`:\n\n```\n" + tt + "\n```\n")
    md.append(f"\n![training curve]({rel}/training-curve.png)\n")
    md.append("\n## Table III: handoff scenario (Figs. 8-9)\n")
    md.append("`edar-handoff`, the full 100 s timed run: path 1 10 Mbit/s, 25 ms, 0.1%; path 2 10 Mbit/s, 50 ms, 0.1% with handoffs at 20-40 s and 60-80 s; "
              f"receive buffer 128 KB. Seeds 1..{runs['handoff'].get('seeds', '?')} (mean ± 95% CI over seeds). "
              "Windows are cut from each run's goodput series (0.1 s samples).\n")
    md.append(ho)
    md.append("\n" + ratio + "\n")
    md.append(f"\n![goodput over time]({rel}/handoff-goodput.png)\n\n![windows]({rel}/handoff-windows.png)\n")
    md.append("\n### Redundancy overhead in stable conditions\n")
    md.append("The results record redundant bytes per run, not per window, so the stable windows are measured on their own: "
              f"[`edar-handoff-stable`]({rel}/scenarios/edar-handoff-stable.json), the Table III paths without handoff, 20 s timed. "
              "`redundant_bytes` counts every byte sent beyond a segment's first transmission, so it includes loss retransmissions; "
              "the last column subtracts minRTT's. XLINK's production figure is 2.1%.\n")
    md.append(stb)
    md.append("\n## Settings i-v (Table II, Fig. 12)\n")
    md.append("Transfers shrunk to 5 MB with `-max-bytes` (scenario.Short scales each setting's handoff timeline by the same factor, "
              "so handoffs come proportionally as often). Settings iv and v are not in the offline data.\n")
    md.append(settings_section(d))
    md.append(f"\n![settings]({rel}/settings.png)\n")
    md.append("\n## Fig. 10: FCT vs path 2 delay\n")
    md.append("`edar-fig10-delay`, 4 MB per run (the paper: 10 MB); path 1 10 Mbit/s, 25 ms, 0.1%; path 2 10 Mbit/s, 0.1%, one-way delay swept.\n")
    md.append(sweep_section(d, "fig10", "path 2 one-way delay, ms"))
    md.append(f"\n![fig10]({rel}/fig10.png)\n")
    md.append("\n## Fig. 11: FCT vs path 2 loss\n")
    md.append("`edar-fig11-loss`, 4 MB per run; path 2 10 Mbit/s, 25 ms, random loss swept (%).\n")
    md.append(sweep_section(d, "fig11", "path 2 random loss, %"))
    md.append(f"\n![fig11]({rel}/fig11.png)\n")
    md.append("\n## Run record\n")
    md.append("| experiment | flags | seeds | wall s | EdAR-o warm-up flows | online training rounds |\n|---|---|---|---|---|---|\n")
    fam = {"handoff": "handoff", "stable": "handoff", "settings": "settings", "fig10": "fig10", "fig11": "fig11"}
    for e, r in runs.items():
        o = onl.get(fam[e], {}) or json.loads(read(os.path.join(d, e, "online.json"), "{}") or "{}")
        md.append(f"| {e} | `{r.get('flags', '')}` | {r.get('seeds', '')} | {r.get('wall_seconds', '')} | {o.get('warmup_flows', '')} | {o.get('training_rounds', '')} |\n")
    with open(a.out, "w") as f:
        f.write("\n".join(x.rstrip("\n") + "\n" for x in md))
    print("wrote " + a.out)


if __name__ == "__main__":
    main()
