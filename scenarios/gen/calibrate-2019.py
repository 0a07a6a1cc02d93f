#!/usr/bin/env python3
"""calibrate-2019.py: re-derives the four calibrated knobs of scenarios/pools-2019.json, each from its own
published target only, by running cuts of the month over a small grid, and prints the table.

Run from the repository root after building (build/sim/sim):

    python3 scenarios/gen/calibrate-2019.py                       # all four knobs, 20,000-height cuts
    python3 scenarios/gen/calibrate-2019.py --knob stratum --heights 5000 --jobs 2
    python3 scenarios/gen/calibrate-2019.py --set network.nodes=2000   # the same at another model setting
    python3 scenarios/gen/calibrate-2019.py --confirm-only --seeds 1,2 # the targets at the scenario's values

The knobs and their targets (scenarios/data/ethereum-2019.json, calibration_targets; docs/model.md "Calibrated"):

    knob                                        scenario path                    target
    message-call gas limit median               transactions.mc_gas_median       transactions included per second: 7.7
    stratum (work-distribution) delay median    network.stratum.median_ms        uncles per 100 main blocks 6.9-7.6
    empty-template window                       chain.empty_window_ms            empty blocks, share of all: 1.43%
    template refresh interval (Geth: recommit)  chain.recommit_s                 one-miner forks with the same tx set: 56%

The gas knob comes first: the transactions' gas sets how many fit in a block, so whether the pools keep a
backlog (2019: 8.2 unique transactions per second created, 7.7 included; the rest waited and was dropped),
and with it both the empty blocks and the block sizes (import time, so the uncles). The included rate is
the month's transactions in main blocks over its duration (heights x mean interval), as the published
figure was derived.

Method. The knobs are taken in that order, once each. The knobs interact a little (empty blocks are small,
so they spread faster and change the uncle rate); the confirmation run at the end shows by how much. For
each knob, every grid value is run with the other knobs at their current values: the scenario's,
or for a knob already calibrated in this invocation, its new value. A straight line through the grid's
(value, metric) points, weighted by the inverse sampling variance, is solved for the target (the middle of
the uncle range), and the result is rounded (5 ms, 1 ms, 0.05 s) and clamped to the grid. The grid should
bracket the target; the table says when it does not. Last, one confirmation run at the three new values
(--confirm-heights 0: over the whole month, whose sampling errors are about 3 times smaller); a target it
misses by more than 2 standard errors is named, with one more step along that knob's line.
Nothing is written into the scenario: put the values into scenarios/gen/pools-2019.py and regenerate.

Sampling errors (one standard error, printed beside each value): the included rate, batch means over 20
consecutive parts of the main chain (blocks.csv; arrivals come in bursts, so transactions are not
independent); uncles per 100 main blocks, Poisson on the uncle count (100 sqrt(uncles) / main); the empty
share, binomial over all blocks; the same-tx-set share, binomial over the one-miner forks. Repeat with --seeds 1,2,3 to average replicates (errors then shrink by
sqrt(seeds)).

Runs are kept in --out (default results/calibrate-2019/), one directory per (sim binary, scenario file,
--set; then knob values, seed, heights); a run whose directory holds a complete result is not run again, so
an interrupted calibration resumes where it stopped, and a rebuilt binary or an edited scenario starts afresh.
"""
import argparse, concurrent.futures, csv, hashlib, json, math, os, subprocess, sys, time

KNOBS = [
    # name, scenario path, metric key, target, target low/high (for "in range"), rounding step, unit, grid
    dict(name="gas", path="transactions.mc_gas_median", metric="transactions included per second",
         target=7.7, lo=7.7, hi=7.7, step=500, unit="gas", grid=[82000, 87000, 92000]),
    dict(name="stratum", path="network.stratum.median_ms", metric="uncles per 100 main blocks",
         target=7.25, lo=6.9, hi=7.6, step=5, unit="ms", grid=[375, 425, 475]),
    dict(name="empty", path="chain.empty_window_ms", metric="empty blocks, % of all",
         target=1.43, lo=1.43, hi=1.43, step=1, unit="ms", grid=[175, 195, 215]),
    dict(name="recommit", path="chain.recommit_s", metric="one-miner forks with the same tx set, %",
         target=56.0, lo=56.0, hi=56.0, step=0.05, unit="s", grid=[1.2, 1.6, 2.0]),
]


def included_rate(d, summary, batches=20):
    """Transactions in main blocks per second over the run's heights, and its standard error by batch means
    over `batches` consecutive parts of the main chain (the run directory's blocks.csv)."""
    c = summary["chain"]
    rate = summary["tx"]["committed"] / (c["heights"] * c["mean_interval_s"])
    main = []
    with open(os.path.join(d, "blocks.csv")) as f:
        for r in csv.DictReader(f):
            if r["type"] == "main":
                main.append((int(r["height"]), float(r["mined_s"]), int(r["n_tx"])))
    main.sort()
    n = len(main) // batches
    if n < 2:
        return rate, float("nan")
    rates, t0 = [], 0.0
    for b in range(batches):
        part = main[b * n:(b + 1) * n]
        rates.append(sum(x[2] for x in part) / (part[-1][1] - t0))
        t0 = part[-1][1]
    m = sum(rates) / batches
    return rate, math.sqrt(sum((x - m) ** 2 for x in rates) / (batches - 1) / batches)


def measure(knob, summary):
    """(value, standard error, count it rests on) of `knob`'s target metric in one run's summary.json."""
    c = summary["chain"]
    if knob == "gas":
        rate, se = included_rate(summary["_dir"], summary)
        return rate, se, summary["tx"]["committed"]
    if knob == "stratum":
        main, unc = c["main"], c["uncles_included"]
        return 100.0 * unc / main, 100.0 * math.sqrt(unc) / main, unc
    if knob == "empty":
        n = c["blocks_total"]
        k = round(c["empty_share"] * n)
    else:
        f = summary["one_miner_forks"]
        n = f["count"]
        k = round((f.get("same_txset_share") or 0.0) * n)
    if not n:
        return float("nan"), float("nan"), 0
    ps = (k + 0.5) / (n + 1)  # for the error only, so that 0 of n or n of n still has one
    return 100.0 * k / n, 100.0 * math.sqrt(ps * (1 - ps) / n), k if knob == "empty" else n


def fmt(x):
    return ("%g" % x) if isinstance(x, float) else str(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default="build/sim/sim", help="the sim binary (default build/sim/sim)")
    ap.add_argument("--scenario", default="scenarios/pools-2019.json")
    ap.add_argument("--heights", type=int, default=20000, help="heights of each cut (default 20000)")
    ap.add_argument("--seeds", default="1", help="comma-separated seeds; results are averaged (default 1)")
    ap.add_argument("--knob", action="append", choices=[k["name"] for k in KNOBS],
                    help="calibrate only this knob (repeatable; default all three, in order)")
    for k in KNOBS:
        ap.add_argument("--%s-grid" % k["name"], metavar="V,V,...",
                        help="grid of %s (%s; default %s)" % (k["path"], k["unit"], ",".join(map(fmt, k["grid"]))))
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="passed to every run (e.g. network.nodes=2000); not for the knobs themselves")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    ap.add_argument("--threads", type=int, default=1, help="sim run --threads (default 1)")
    ap.add_argument("--no-confirm", action="store_true", help="skip the run at the three new values")
    ap.add_argument("--confirm-heights", type=int, metavar="N",
                    help="heights of the confirmation run (default --heights; 0: the scenario's own, the month)")
    ap.add_argument("--confirm-only", action="store_true",
                    help="no grid: only the confirmation run, at the scenario's values (a check after a model change)")
    ap.add_argument("--out", default="results/calibrate-2019", help="where the runs are kept")
    a = ap.parse_args()

    seeds = [int(s) for s in a.seeds.split(",")]
    knobs = [] if a.confirm_only else [k for k in KNOBS if not a.knob or k["name"] in a.knob]
    for k in KNOBS:
        g = getattr(a, "%s_grid" % k["name"])
        if g:
            k["grid"] = [float(v) for v in g.split(",")]
    for s in a.set:
        if any(s.startswith(k["path"] + "=") for k in KNOBS):
            sys.exit("calibrate-2019.py: --set %s: the knobs are set by the grid, not by --set" % s)
    scen = json.load(open(a.scenario))

    def get(path):
        d = scen
        for p in path.split("."):
            d = d[p]
        return d

    current = {k["name"]: get(k["path"]) for k in KNOBS}
    # Kept runs are found again only for the same binary, scenario file and --set: after any change of the
    # model (a rebuild that changes the binary) everything runs again.
    h = hashlib.sha1()
    for path in (a.sim, a.scenario):
        with open(path, "rb") as f:
            h.update(f.read())
    h.update("\n".join(a.set).encode())
    tag = "%s-%s" % (os.path.basename(a.scenario).removesuffix(".json"), h.hexdigest()[:10])
    print("# %s, %d heights, seeds %s%s; starting values: %s" % (
        a.scenario, a.heights, a.seeds, "".join("; --set " + s for s in a.set),
        ", ".join("%s %s %s" % (k["path"], fmt(current[k["name"]]), k["unit"]) for k in KNOBS)), flush=True)

    def run(values, seed, heights):
        """Runs (or finds) one cut; returns its summary.json as a dict and its wall seconds (None: reused)."""
        sets = ["stop.heights=%d" % heights] + list(a.set) + \
               ["%s=%s" % (k["path"], fmt(values[k["name"]])) for k in KNOBS]
        key = ",".join("%s=%s" % (k["name"], fmt(values[k["name"]])) for k in KNOBS) + ",seed=%d,h=%d" % (seed, heights)
        d = os.path.join(a.out, tag, key)
        if os.path.exists(os.path.join(d, ".sim-result")):
            return dict(json.load(open(os.path.join(d, "summary.json"))), _dir=d), None
        cmd = [a.sim, "run", a.scenario, "--quiet", "--seed", str(seed), "--threads", str(a.threads), "--out", d]
        for s in sets:
            cmd += ["--set", s]
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit("calibrate-2019.py: %s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
        return dict(json.load(open(os.path.join(d, "summary.json"))), _dir=d), time.monotonic() - t0

    def run_all(points, heights=a.heights):
        """points: list of value dicts; returns per point the list of (summary, wall) over the seeds."""
        jobs = [(i, v, s) for i, v in enumerate(points) for s in seeds]
        res = [[None] * len(seeds) for _ in points]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = {ex.submit(run, v, s, heights): (i, j) for i, v, s in jobs for j in [seeds.index(s)]}
            for f in concurrent.futures.as_completed(futs):
                i, j = futs[f]
                res[i][j] = f.result()
        return res

    def combine(name, runs):
        """Mean over seeds of the metric, its standard error, the counts summed."""
        ms = [measure(name, s) for s, _ in runs]
        m = sum(x[0] for x in ms) / len(ms)
        se = math.sqrt(sum(x[1] ** 2 for x in ms)) / len(ms)
        return m, se, sum(x[2] for x in ms)

    def walls(runs):
        w = [t for _, t in runs if t is not None]
        return ("%.0f s" % (sum(w) / len(w))) if w else "kept"

    chosen = dict(current)
    rows, notes = [], []
    for k in knobs:
        points = [dict(chosen, **{k["name"]: v}) for v in k["grid"]]
        res = run_all(points)
        xs, ys, ws = [], [], []
        print("\n## %s (%s, %s) against %s, target %s%s; others: %s" % (
            k["name"], k["path"], k["unit"], k["metric"], fmt(k["target"]),
            " (range %s-%s)" % (fmt(k["lo"]), fmt(k["hi"])) if k["lo"] != k["hi"] else "",
            ", ".join("%s %s" % (o["name"], fmt(chosen[o["name"]])) for o in KNOBS if o is not k)))
        print("| %s | %s | SE | counted | wall per run |" % (k["path"], k["metric"]))
        print("|---|---|---|---|---|")
        for v, runs in zip(k["grid"], res):
            m, se, n = combine(k["name"], runs)
            print("| %s | %.3f | %.3f | %d | %s |" % (fmt(v), m, se, n, walls(runs)), flush=True)
            if not math.isnan(se):
                xs.append(v); ys.append(m); ws.append(1.0 / se ** 2)
        # weighted least squares line y = a + b x, solved for the target
        if len(xs) >= 2:
            W = sum(ws); mx = sum(w * x for w, x in zip(ws, xs)) / W; my = sum(w * y for w, y in zip(ws, ys)) / W
            sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs)); sxy = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys))
            b = sxy / sxx if sxx > 0 else 0.0
            if b != 0:
                x = mx + (k["target"] - my) / b
                bracketed = min(k["grid"]) <= x <= max(k["grid"])
                x = min(max(x, min(k["grid"])), max(k["grid"]))
                x = round(round(x / k["step"]) * k["step"], 6)
                if k["unit"] in ("ms", "gas"):
                    x = int(x)
                print("line: %s = %.4g + %.4g x value; target %s at %s %s%s" % (
                    k["metric"], my - b * mx, b, fmt(k["target"]), fmt(x), k["unit"],
                    "" if bracketed else " (NOT bracketed by the grid: clamped; widen the grid)"))
                # sampling error of the solved value: the fitted line's error at the target, over the slope
                x0 = mx + (k["target"] - my) / b
                se_line = math.sqrt(1.0 / W + (x0 - mx) ** 2 / sxx)
                print("sampling error of the solved value: +-%.3g %s (the line's SE at the target / slope)" % (
                    se_line / abs(b), k["unit"]))
                rows.append((k, current[k["name"]], x, b))
                chosen[k["name"]] = x
                continue
        print("no slope: the grid does not move the metric; %s kept at %s" % (k["name"], fmt(chosen[k["name"]])))
        rows.append((k, current[k["name"]], chosen[k["name"]], 0.0))

    slopes = {k["name"]: b for k, _, _, b in rows if b}
    if not a.no_confirm:
        ch = a.heights if a.confirm_heights is None else (a.confirm_heights or get("stop.heights"))
        (runs,) = run_all([chosen], ch)
        print("\n## confirmation at the new values, %d heights: %s" % (ch, ", ".join(
            "%s %s %s" % (k["path"], fmt(chosen[k["name"]]), k["unit"]) for k in KNOBS)))
        print("| knob | before | after | target | result at the new values | SE |")
        print("|---|---|---|---|---|---|")
        for k in KNOBS:
            m, se, n = combine(k["name"], runs)
            tgt = ("%s-%s" % (fmt(k["lo"]), fmt(k["hi"]))) if k["lo"] != k["hi"] else fmt(k["target"])
            print("| %s | %s | %s | %s: %s | %.3f | %.3f |" % (
                k["path"], fmt(current[k["name"]]), fmt(chosen[k["name"]]), k["metric"], tgt, m, se))
            miss = (k["lo"] - m) if m < k["lo"] else (m - k["hi"]) if m > k["hi"] else 0.0
            if miss > 2 * se:
                b = slopes.get(k["name"])  # None with --confirm-only: no grid, no line to step along
                step = ""
                if b:
                    x = round(round((chosen[k["name"]] + (k["target"] - m) / b) / k["step"]) * k["step"], 6)
                    step = (" one more step along the grid's line gives %s %s (put it into scenarios/gen/pools-2019.py, "
                            "regenerate, check with --confirm-only)" % (fmt(x), k["unit"]))
                notes.append("%s misses its target by %.1f standard errors;%s" % (k["name"], miss / se, step))
        s0 = runs[0][0]
        c0 = s0["chain"]
        print("checks (not targets): stale share %.4f, mean interval %.2f s, vantage delay median %.1f ms, "
              "transactions created %.3f/s (published: 8.2 unique), evicted %.3f/s, wall %s" % (
            c0["stale_share"], c0["mean_interval_s"], s0["propagation"]["vantage_delay_ms"]["median"],
            s0["tx"]["created"] / (c0["heights"] * c0["mean_interval_s"]),
            s0["tx"]["evicted"] / (c0["heights"] * c0["mean_interval_s"]), walls(runs)))
        for n in notes:
            print("note:", n)


if __name__ == "__main__":
    main()
