#!/usr/bin/env python3
"""txorder.py: the out-of-order and arrival figures of one EMC vantage point's transaction log, computed here
independently of sim, from the raw lines (tests/cli/test-txorder.sh compares them with `sim replay`).

Usage: python3 txorder.py TXLOG [TXLOG...]   (TxMsg.log or txs.log of one vantage point, in order)
Prints one line per figure, `key value`, the keys of summary.json's tx object:
  out_of_order_seen_share.intended      every received tx; numeric nonces; a tx is out of order when it was
                                        received before a lower nonce of its sender (ties in order)
  out_of_order_seen_share.as_published  the same with nonces sorted as text and millisecond times, as the
                                        study's Step-7-Set-In-Order.py sorts (From, Nonce) read as strings
  arrival.same_ms_share                 consecutive nonces of a sender, both received, in the same millisecond
  arrival.txs_per_sender_mean, arrival.one_tx_sender_share
A tx's reception is its earliest line (duplicates from other peers dropped, as the study did); a nonce's
reception, for consecutive pairs, the earliest of its txs (replacements). Equal nonces are not lower.
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
for h, (ms, sender, nonce) in first.items():
    by_sender[sender].append((nonce, ms))


def out_of_order(txs, key):
    """Txs sorted by key; a group of equal keys is compared with the latest time before it."""
    txs = sorted(txs, key=lambda x: key(x[0]))
    ooo, best, i = 0, None, 0
    while i < len(txs):
        j, group = i, None
        while j < len(txs) and key(txs[j][0]) == key(txs[i][0]):
            if best is not None and txs[j][1] < best:
                ooo += 1
            group = txs[j][1] if group is None else max(group, txs[j][1])
            j += 1
        best = group if best is None else max(best, group)
        i = j
    return ooo


n = len(first)
intended = sum(out_of_order(v, lambda k: k) for v in by_sender.values())
published = sum(out_of_order(v, str) for v in by_sender.values())
pairs = same = 0
for v in by_sender.values():
    earliest = {}
    for nonce, ms in v:
        earliest[nonce] = min(earliest.get(nonce, ms), ms)
    for nonce, ms in earliest.items():
        if nonce + 1 in earliest:
            pairs += 1
            same += earliest[nonce + 1] == ms
print(f"out_of_order_seen_share.intended {intended / n:.15g}")
print(f"out_of_order_seen_share.as_published {published / n:.15g}")
print(f"arrival.same_ms_share {same / pairs:.15g}")
print(f"arrival.txs_per_sender_mean {n / len(by_sender):.15g}")
print(f"arrival.one_tx_sender_share {sum(1 for v in by_sender.values() if len(v) == 1) / len(by_sender):.15g}")
