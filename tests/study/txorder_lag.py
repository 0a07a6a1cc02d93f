#!/usr/bin/env python3
"""txorder_lag.py: how late the lower nonces come for the transactions received out of order (the intended
definition: numeric nonces; a transaction is out of order when a lower nonce of its sender is received after
it). Reads one EMC vantage point's transaction log (TxMsg.log or txs.log) as tests/study/txorder.py does (a
tx's reception is its earliest line); prints, over every received transaction, the share out of order whose
latest lower nonce came within 1 s, 1 s to 60 s, and after more than 60 s, and the senders behind them.

Usage: python3 txorder_lag.py TXLOG [TXLOG...]
"""
import collections
import csv
import datetime
import sys


def ms_of(stamp):
    t = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f%z")
    return round(t.timestamp() * 1000)


first = {}
for path in sys.argv[1:]:
    with open(path, newline="") as f:
        for row in csv.reader(f):
            h, ms = row[1], ms_of(row[0])
            if h not in first or ms < first[h][0]:
                first[h] = (ms, row[10], int(row[5]))
by_sender = collections.defaultdict(list)
for ms, sender, nonce in first.values():
    by_sender[sender].append((nonce, ms))
n = len(first)
bins = [0, 0, 0]
near = 0
senders = collections.Counter()
for sender, txs in by_sender.items():
    txs.sort()
    for k, (nonce, ms) in enumerate(txs):
        near += any(m2 > ms and m2 - ms <= 1000 for n2, m2 in txs[:k] if n2 < nonce)
    i = 0
    latest = None  # latest reception among strictly lower nonces
    while i < len(txs):
        j = i
        group = None
        while j < len(txs) and txs[j][0] == txs[i][0]:
            ms = txs[j][1]
            if latest is not None and ms < latest:
                lag = latest - ms
                bins[0 if lag <= 1000 else 1 if lag <= 60000 else 2] += 1
                senders[sender] += 1
            group = ms if group is None else max(group, ms)
            j += 1
        latest = group if latest is None else max(latest, group)
        i = j
print(f"received {n}")
print(f"out_of_order.lag_le_1s {bins[0] / n:.6g} ({bins[0]})")
print(f"out_of_order.lag_1s_60s {bins[1] / n:.6g} ({bins[1]})")
print(f"out_of_order.lag_gt_60s {bins[2] / n:.6g} ({bins[2]})")
print(f"out_of_order.lower_within_1s {near / n:.6g} ({near})")
print(f"out_of_order.senders {len(senders)}; the two largest {sum(c for _, c in senders.most_common(2))}")
