#!/usr/bin/env python3
"""compare.py: checks the figures the study's own processing (run-pipeline.sh) made of a run's EMC logs, that
is what its metrics scripts read, against what sim wrote for the same run.

Usage: python3 compare.py RUN WORK REPLAY POOL_ADDRESSES [-v]
  RUN             a `sim run --emc-logs` results directory (four vantage points, transactions)
  WORK            run-pipeline.sh's work directory for RUN/emc, cut to the run's window (LAST_NUMBER)
  REPLAY          `sim replay` of RUN/emc with --pools RUN/emc/pools.csv --heights <the window>
  POOL_ADDRESSES  scenarios/data/ethereum-2019-04/pool_addresses.csv (the study's pool names by address)

"Exact" below means equal as the numbers are written (the study's times are the logs' milliseconds, as the
replay's are); "within 1 ms" means the run's figure, computed from nanosecond times, differs by less than the
logs' resolution: every time in a log is rounded towards the past to the millisecond, so each delay moves by
less than 1 ms and so does every order statistic, interpolated quantile and mean. Prints the first failed check
and exits 1 at the first failure (-v: every check).

The study's metrics scripts compute their statistics as reproduced here: 5-1-Block-Propagation-Time.py and
5-2-Transaction-Propagation-Time.py take the four <V>Diff columns together, sort them and drop the smallest
quarter (one zero per block or transaction, its first observer's), then numpy's median, mean and linear
percentiles; 5-3-Tx-Commit-Time.py the CommitTime<k> columns (which it then narrows further: only
transactions with all four, none negative); 5-8-Prevalence-of-Forks.py counts BlockType;
1-A-consec-blocks-per-mininig-pool.py and the v2 join count runs of one pool name among the main blocks.
"""
import collections
import csv
import json
import math
import os
import sys

import numpy as np
import pandas as pd

RUN, WORK, REPLAY, ADDRS = sys.argv[1:5]
VERBOSE = "-v" in sys.argv[5:]
ANG = os.path.join(WORK, "ANG")
checks = 0


def check(ok, what, detail=""):
    global checks
    checks += 1
    if not ok:
        print(f"FAIL: {what}" + (f": {detail}" if detail else ""))
        sys.exit(1)
    if VERBOSE:
        print(f"ok {checks} - {what}")


def close(a, b, tol):
    return a is not None and b is not None and abs(a - b) < tol


summary = json.load(open(os.path.join(RUN, "summary.json")))
replay = json.load(open(os.path.join(REPLAY, "summary.json")))
first = summary["header"]["scenario"]["chain"]["first_block_number"]
window = summary["sim"]["window_heights"]
last = first + window - 1
vantages = list(summary["propagation"]["first_seen_share"])  # the network's order: Angainor, Falcon, S1US, S2CN

BLOCK_COLS = ["LocalTimeStamp", "BlockHash", "Number", "GasLimit", "GasUsed", "Difficulty", "Time", "Coinbase",
              "ParentHash", "UncleHash", "BlockSize", "ListOfTxs", "ListOfUncles", "CapturedLocally", "BlockType",
              "ForkLength"]
V3_COLS = ["BlockHash", "Number", "BlockType", "AngainorTimeStamp", "FalconTimeStamp", "S1USTimeStamp",
           "S2CNTimeStamp", "FirstObservation", "AngainorDiff", "FalconDiff", "S1USDiff", "S2CNDiff", "MiningPool",
           "NumTransactions", "SameMinerSeqLen", "PositionInsideSeq", "Difficulty", "BlockSize", "InterblockTime",
           "InterblockTimePerPool"]
DIFFS = ["AngainorDiff", "FalconDiff", "S1USDiff", "S2CNDiff"]
TX_COLS = ["LocalTimeStamp", "Hash", "GasLimit", "GasPrice", "Value", "Nonce", "MsgType", "Cost", "Size", "To",
           "From", "ValidityErr", "CapturedLocally", "GasUsed", "InMainBlock", "InUncleBlocks", "InOrder",
           "NeverCommitting", "CommitTime0", "CommitTime3", "CommitTime12", "CommitTime36"]


def study_stats(frame):
    """The statistics 5-1/5-2 print, on the same sample: all four Diff columns, the smallest quarter dropped."""
    s = np.sort(pd.concat([frame[c] for c in DIFFS], ignore_index=True))
    s = s[len(s) // 4:] * 1000.0  # ms
    return {"median": float(np.median(s)), "mean": float(np.average(s)),
            **{f"p{q}": float(np.percentile(s, q)) for q in (90, 95, 99)}}


# ---- 1. Block types (Step-2, Step-3; what 5-8-Prevalence-of-Forks.py and BlockTypes.py count) -----------
stage4 = pd.read_csv(os.path.join(ANG, "blocks-stage-4.log"), names=BLOCK_COLS, dtype=str)
stage4["Number"] = stage4["Number"].astype(int)
win4 = stage4[stage4["Number"] <= last]
study_type = dict(zip(win4["BlockHash"].str[:18], win4["BlockType"]))
ours = {r["id"]: {"main": "Main", "uncle": "Recognized", "unreferenced": "Uncle"}[r["type"]]
        for r in csv.DictReader(open(os.path.join(RUN, "blocks.csv")))}
check(set(study_type) == set(ours), "the study's blocks in the window are the run's blocks",
      f"{len(study_type)} vs {len(ours)}")
wrong = [h for h in ours if study_type[h] != ours[h]]
check(not wrong, f"every block's type ({len(ours)} blocks) is the run's", wrong[:5])
counts = collections.Counter(win4["BlockType"])
chain = summary["chain"]
check(counts["Main"] == chain["main"] and counts["Recognized"] == chain["uncles_included"] and
      counts["Uncle"] == chain["forks_unreferenced"],
      f"Main {counts['Main']}, Recognized {counts['Recognized']}, Uncle {counts['Uncle']} = chain.main, "
      "uncles_included, forks_unreferenced", chain)

# ---- 2. The join table: the study's v3 against emc/blocks-propagation-times-v3.log ------------------------
study_v3 = list(csv.reader(open(os.path.join(ANG, "blocks-propagation-times-v3.log"))))
our_v3 = list(csv.reader(open(os.path.join(RUN, "emc", "blocks-propagation-times-v3.log"))))
check(all(len(r) == 20 for r in study_v3 + our_v3), "both join tables have the v3 layout's 20 columns")
S, O = {r[0]: r for r in study_v3}, {r[0]: r for r in our_v3}
check(set(S) == set(O) and len(O) == len(our_v3), f"the same {len(O)} blocks in both join tables")
check(len(O) == summary["propagation"]["blocks_seen_by_all"], "= propagation.blocks_seen_by_all")
# Pool names: the study's scripts name a block's pool by its coinbase (ALL-OTHER-MINERS when they do not
# know it); the run's table uses the scenario's names. emc/pools.csv says which address each pool mined with.
study_name = {r["address"].lower(): r["name_in_dsn2020_scripts"] for r in csv.DictReader(open(ADDRS))
              if r["name_in_dsn2020_scripts"] and not r["name_in_dsn2020_scripts"].endswith("unlabeled")}
pool_addrs = collections.defaultdict(set)
for r in csv.DictReader(open(os.path.join(RUN, "emc", "pools.csv"))):
    pool_addrs[r["name"]].add(r["address"].lower())
as_study = {p: (study_name.get(next(iter(a)), "ALL-OTHER-MINERS") if len(a) == 1 else "ALL-OTHER-MINERS")
            for p, a in pool_addrs.items()}
# InterblockTimePerPool depends on the order of a pool's rows at one Number, which the study's quicksort
# left arbitrary: compare it where the pool has one row at that Number and at the Number below.
per = collections.Counter((r[12], r[1]) for r in our_v3)
bad = []
for h, o in O.items():
    s = S[h]
    for i, col in enumerate(V3_COLS):
        if col == "MiningPool":
            want = as_study[o[i]]
        elif col == "InterblockTimePerPool":
            if as_study[o[12]] == "ALL-OTHER-MINERS":
                want = ""  # the study computed it for its 22 named pools only
            elif per[(o[12], o[1])] > 1 or per[(o[12], str(int(o[1]) - 1))] > 1:
                continue
            else:
                want = o[i]
        else:
            want = o[i]
        if s[i] != want:
            bad.append((h[:18], col, s[i], want))
check(not bad, "every field of every row is the study's, as text (pool names mapped by address)", bad[:5])
zeros = [sum(1 for r in study_v3 if float(r[8 + v]) == 0) for v in range(4)]
check(sum(zeros) >= len(study_v3), f"first receptions per vantage point (Figure 2's counts) {zeros}")

# ---- 3. Block delay after the first observation (5-1's input, blocks-propagation-times) -------------------
bp = pd.read_csv(os.path.join(ANG, "blocks-propagation-times.window.log"), names=V3_COLS[:12],
                 dtype={c: float for c in DIFFS})
st = study_stats(bp)
rep, run = replay["propagation"]["vantage_delay_ms"], summary["propagation"]["vantage_delay_ms"]
for k, v in st.items():
    check(close(v, rep[k], 1e-9), f"block delay {k} {v:.6g} ms = replay's", rep[k])
    check(close(v, run[k], 1.0), f"block delay {k} {v:.6g} ms = the run's {run[k]:.6g} within 1 ms")

# ---- 4. Runs of one pool (the v2 join's SameMinerSeqLen, as 1-A counts them) -------------------------------
mains = [r for r in study_v3 if r[2] == "Main"]
check(len(mains) == chain["main"], "every window main block is in the join table (runs are complete)")
runs = collections.Counter((r[12], int(r[14])) for r in mains if r[15] == "1")
compared = 0
for p in summary["runs"]["by_pool"]:
    name = as_study.get(p["name"], "ALL-OTHER-MINERS")
    if name == "ALL-OTHER-MINERS":
        continue  # the study merges every address it does not know into one name; the run counts per miner
    got = {k: sum(c for (q, length), c in runs.items() if q == name and length >= int(k)) for k in p["count_ge"]}
    check(got == p["count_ge"], f"runs of {p['name']} ({name}) of each length >= k = runs.by_pool count_ge",
          (got, p["count_ge"]))
    compared += 1
check(compared > 0, f"the runs of {compared} pools compared")

# ---- 5. Transactions at the first vantage point (Steps 4-7 run on Angainor only) ---------------------------
txs = pd.read_csv(os.path.join(ANG, "txs-stage-7.log"), names=TX_COLS, dtype=str)
main_numbers = dict(zip(stage4["BlockHash"], stage4["Number"]))
in_window = txs["InMainBlock"].map(lambda h: isinstance(h, str) and main_numbers.get(h, last + 1) <= last)
committed = txs[(txs["NeverCommitting"] == "Committed") & in_window]
check(len(committed) == summary["tx"]["committed"] == replay["tx"]["committed"],
      f"committed transactions {len(committed)} = tx.committed", summary["tx"]["committed"])
we = vantages[0]
rows = {(r["k"], r["vantage"]): r for r in csv.DictReader(open(os.path.join(RUN, "tx_commit.csv")))}
rrows = {(r["k"], r["vantage"]): r for r in csv.DictReader(open(os.path.join(REPLAY, "tx_commit.csv")))}
height = committed["InMainBlock"].map(main_numbers)
for k in ("0", "3", "12", "36"):
    # The run counts a commit time where the main block k heights above is in the window too.
    ct = committed["CommitTime" + k][height + int(k) <= last].dropna().astype(float).to_numpy()
    ours, rep = rows[(k, we)], rrows[(k, we)]
    check(len(ct) == int(ours["pairs"]) == int(rep["pairs"]), f"commit times k={k}: {len(ct)} = {we}'s pairs",
          ours["pairs"])
    st = {"median_s": float(np.median(ct)), "mean_s": float(np.mean(ct)), "p90_s": float(np.percentile(ct, 90))}
    for key, v in st.items():
        check(close(v, float(rep[key]), 1e-9), f"commit time k={k} {key} {v:.9g} = replay's", rep[key])
        check(close(v, float(ours[key]), 1e-3), f"commit time k={k} {key} = the run's {float(ours[key]):.9g} within 1 ms")

# ---- 6. Transaction propagation (5-2's input, txs-propagation-times) ---------------------------------------
tp = pd.read_csv(os.path.join(ANG, "txs-propagation-times.log"),
                 names=["Hash", "ValidityErr", "AngainorTimeStamp", "FalconTimeStamp", "S1USTimeStamp",
                        "S2CNTimeStamp", "FirstObservation"] + DIFFS, dtype={c: float for c in DIFFS})
check(len(tp) == summary["tx"]["unique"], f"{len(tp)} transactions seen by all four = tx.unique")
st = study_stats(tp)
rep, run = replay["tx"]["propagation_ms"], summary["tx"]["propagation_ms"]
for k in ("median", "p90", "p95"):
    check(close(st[k], rep[k], 1e-9), f"transaction propagation {k} {st[k]:.6g} ms = replay's", rep[k])
    check(close(st[k], run[k], 1.0), f"transaction propagation {k} = the run's {run[k]:.6g} within 1 ms")

print(f"compare.py: all {checks} checks hold")
