#!/usr/bin/env python3
"""pools-2019.py: writes scenarios/pools-2019.json and scenarios/scale/100k-day.json from the published
inputs in scenarios/data.

Run from the repository root: python3 scenarios/gen/pools-2019.py [--out DIR] (DIR defaults to scenarios/;
the scale scenario goes to DIR/scale/). Every number in the scenarios comes
from scenarios/data (cited in the scenario's comment) or is a documented choice made here. Both files are
written by every run, from one model, so that the scale scenario stays in step with the month: they differ
only in name, comment, node count and heights.
"""
import argparse, copy, csv, json, math, os, sys

ap = argparse.ArgumentParser(description="Writes pools-2019.json and scale/100k-day.json from scenarios/data.")
ap.add_argument("--out", metavar="DIR", default=os.path.join(os.path.dirname(__file__), ".."),
                help="directory to write into (default: scenarios/, beside this script's folder)")
args = ap.parse_args()

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
eth = json.load(open(os.path.join(DATA, "ethereum-2019.json")))

# ---- cities: data-centre places of vantage points and pool gateways, RTT from WonderNetwork (Nov 2018) ----
CITY_REGION = {  # SimBlock region of each city used
    "Lisbon": "EU", "Prague": "EU", "Frankfurt": "EU", "Amsterdam": "EU", "Moscow": "EU", "Warsaw": "EU",
    "New York": "NA", "Washington": "NA", "Los Angeles": "NA", "Chicago": "NA",
    "Shanghai": "AP", "Hangzhou": "AP", "Shenzhen": "AP", "Hong Kong": "AP", "Singapore": "AP", "Seoul": "AP",
    "Tokyo": "JP",
}
names = [r["city"] for r in csv.DictReader(open(os.path.join(DATA, "ping-2018-11", "cities.csv")))]
rows = list(csv.reader(open(os.path.join(DATA, "ping-2018-11", "rtt_avg_ms.csv"))))
header = rows[0][1:]
rtt = {r[0]: {header[j]: r[j + 1] for j in range(len(header))} for r in rows[1:]}
cities = list(CITY_REGION)
def pair(a, b):
    if a == b:
        return 0.0
    vals = [float(x) for x in (rtt[a][b], rtt[b][a]) if x not in ("", None)]
    return round(sum(vals) / len(vals), 2) if vals else None  # mean of both directions
rtt_ms = [[pair(a, b) for b in cities] for a in cities]
missing = [(a, b) for i, a in enumerate(cities) for j, b in enumerate(cities) if rtt_ms[i][j] is None]

# ---- regions: SimBlock's 2019 tables; node shares from the Ethereum country shares ----
reg = eth["regions_2019"]
country = eth["node_population"]["country_shares_2021_03"]
known = {"NA": country["US"], "EU": country["DE"] + country["FR"], "AP": country["SG"]}
btc = dict(zip(reg["names"], reg["bitcoin_node_share_2019"]))
share = [known.get(r, 0.0) + country["rest"] * btc[r] for r in reg["names"]]
share = [round(s / sum(share), 4) for s in share]
share[0] = round(1 - sum(share[1:]), 4)

# ---- pools and their gateways (choices: the data file says gateway regions are not published) ----
GATEWAYS = {
    "Ethermine": ["Frankfurt", "New York", "Singapore"],   # European-run, servers on several continents
    "Sparkpool": ["Shanghai", "Hangzhou"],                  # Chinese pools
    "F2pool2": ["Hangzhou", "Shenzhen"],
    "Nanopool": ["Frankfurt", "New York", "Singapore"],     # European-run, eu/us/asia servers
    "MiningPoolHub": ["Los Angeles", "Frankfurt", "Seoul"],
    "HuoBi.pro": ["Shanghai"],
    "Pandapool": ["Hong Kong"],
    "DwarfPool": ["Amsterdam", "New York"],
    "Xnpool": ["Shenzhen"],
    "Uupool": ["Hangzhou"],
    "Minerall": ["Moscow"],
    "Firepool": ["Hong Kong"],
    "Zhizhu": ["Shanghai"],
    "MiningExpress": ["Hong Kong"],
    "Hiveon": ["Moscow", "Frankfurt"],
    "Others": ["Frankfurt", "New York", "Shanghai", "Warsaw", "Chicago", "Tokyo", "Hong Kong", "Amsterdam"],
}
pools = []
for p in eth["pools"]["shares"]:
    if p["name"].startswith("remaining"):
        pools.append({"name": "Others", "hash_share": p["share"], "miners": 40,
                      "comment": "'remaining miners (many small)' in the study: 8.39% of blocks by many addresses. "
                                 "Modelled as 40 independent miners (0.21% each, below the smallest named pool), "
                                 "so they do not form runs together; the count is a choice."})
    else:
        pools.append({"name": p["name"], "hash_share": p["share"]})

# ---- coinbase addresses: each named pool's real one (ethereum-2019-04/pool_addresses.csv, the study's
# script names), so that EMC logs of a run carry the addresses the study's scripts map to pool names ----
SCRIPT_NAME = {"MiningPoolHub": "miningpoolhub1", "DwarfPool": "DwarfPool1"}  # others differ in case only
addr = {r["name_in_dsn2020_scripts"].lower(): r["address"]
        for r in csv.DictReader(open(os.path.join(DATA, "ethereum-2019-04", "pool_addresses.csv")))
        if r["name_in_dsn2020_scripts"]}
for p in pools:
    if p["name"] != "Others":
        p["coinbase"] = addr[SCRIPT_NAME.get(p["name"], p["name"]).lower()]

# Vantage points: peer counts are the study's (--maxpeers of its Geth run scripts), the cities are choices.
VANTAGE_CITY = {"WE": "Lisbon", "CE": "Prague", "NA": "New York", "EA": "Shanghai"}
vantages = [{"name": v["name"], "city": VANTAGE_CITY[v["name"]], "peers": v["max_peers"]} for v in eth["vantage_points"]]

# Ordinary nodes: the 2019 count of listening nodes (ethernodes, as reported by The Block). The data-centre
# nodes (vantage points, pool gateways) come on top; they are fewer than the count's rounding.
NODES = eth["node_population"]["listening_nodes_approx"]

# The four calibrated knobs, each from its own published target and nothing else: re-derive them with
# scenarios/gen/calibrate-2019.py whenever the model changes (docs/model.md "Calibrated").
# The transactions' gas, through the message calls' median gas limit (the type shares and the other gas
# figures are choices, see `sim models`): 2019's blocks were full and its mempools held a backlog, because
# more was sent than fitted (ethereum-2019.json transactions: 8.2 unique per second seen, 7.7 included; the
# difference waited and was dropped). So the gas per transaction is set for 7.7 included per second at 8.2
# created; the empty blocks and the rest follow from the backlog, none is fitted to them.
MC_GAS_MEDIAN = 80500    # message-call gas limit median -> transactions included per second 7.7
STRATUM_MEDIAN_MS = 410  # work-distribution delay median -> uncles per 100 main blocks 6.9-7.6
EMPTY_WINDOW_MS = 176    # empty-template window -> empty blocks 1.43% of all
RECOMMIT_S = 1.5         # template refresh interval -> one-miner forks with the same tx set 56%
geth = eth["geth_1_8_23_relay"]
scenario = {
    "name": "pools-2019",
    "comment": [
        "Ethereum mainnet, 1 April - 2 May 2019 (blocks 7479573-7680658): the month of the reference measurement study.",
        "Generated by scenarios/gen/pools-2019.py from scenarios/data (ethereum-2019.json, ping-2018-11).",
        "Chain: 201,086 heights; Byzantium/Constantinople difficulty (EIP-100) from the late-May 2019 difficulty "
        "(2088.5 TH, mean of 2028.6-2148.4) and hash rate (164 TH/s) on Etherscan; rewards 2 ETH, uncles "
        "(u+8-b)/8, nephew 1/32; 16 pool shares from the study.",
        "Transactions: created at 8.2 per second (21.96 M unique seen / 31 days) by sender sessions; types, gas "
        "limits, sizes, session lengths and the shares of the study's gas price classes are choices documented in "
        "`sim models` and the README, but for the message calls' median gas limit "
        f"({MC_GAS_MEDIAN:,}), calibrated so that 7.7 transactions per second are included (the published "
        "included rate: more was sent than fitted, so blocks are full and mempools keep a backlog); block gas "
        "limit 8 M; mempools of 5120 (Geth 1.8: 4096 + 1024 slots), the cheapest dropped when full. "
        "Commit times, out-of-order share and transaction propagation are checks, not tuned.",
        "Network: SimBlock's 2019 region tables (latency, bandwidth); node shares per region from the Ethereum "
        "country shares (US 36.9%, DE+FR 26.7%, SG 4.8%), the remaining 31.5% spread by Bitcoin's 2019 "
        f"regional shares. {NODES:,} ordinary nodes, the 2019 count of listening nodes (ethernodes as "
        "reported by The Block; ethereum-2019.json node_population.listening_nodes_approx); the vantage points and pool gateways "
        "come on top. Each node dials 8 peers (Geth: maxpeers 25 / 3), half of them in its own region "
        "(geo_bias 0.5, a choice).",
        "Data-centre nodes (pool gateways, vantage points) at 1 Gb/s, latency between two data centres = half the "
        "measured RTT between their cities (WonderNetwork, Nov 2018). Vantage points WE (Lisbon, 1500 peers), CE "
        "(Prague, 800), NA (New York, 800), EA (Shanghai, 800): cities are choices, peer counts the study's.",
        "Gateway cities are choices (the data file says they are not published): Chinese pools in Chinese cities, "
        "European-run pools in Frankfurt/New York/Singapore and the like; see gateways.",
        "Relay: Geth 1.8.23 (push to sqrt(peers lacking it), at least 4; announce after import; fetch after 500 ms; "
        "5 s fetch timeout). Import time 10 ms + 25 ms per Mgas is a choice (no source).",
        "Calibration, four knobs for four published calibration targets and nothing else, by "
        f"scenarios/gen/calibrate-2019.py at {NODES:,} nodes: the message calls' median gas limit "
        f"({MC_GAS_MEDIAN:,} gas) for the included transaction rate (7.7 per second); the stratum (work distribution) delay median "
        f"({STRATUM_MEDIAN_MS} ms) for uncles per 100 main blocks (6.9-7.6); the empty-template window "
        f"({EMPTY_WINDOW_MS} ms) for the empty-block share (1.43%); the template refresh interval ({RECOMMIT_S} s; "
        "Geth's default is 3 s) for the share of one-miner forks with the same transaction set (56%). "
        "Propagation statistics, runs, commit times are checks and are not tuned.",
        "Pool behaviour: after a pool finds a block its own miners get work on it only after the work distribution "
        "delay, so they may find a second block on the old parent (a one-miner fork); after any new work they mine "
        "an empty template first.",
    ],
    "seed": 1,
    "stop": {"heights": eth["window"]["heights"], "settle_heights": 7},
    "chain": {
        "difficulty": "byzantium",
        "initial_difficulty": round(sum(eth["chain"]["difficulty_th_late_may_2019"]) / 2 * 1e12),
        "hashrate_hps": eth["chain"]["hashrate_ths_late_may_2019_mean"] * 1e12,
        "block_reward_eth": eth["chain"]["block_reward_eth"],
        "header_bytes": 540,
        "block_gas_limit": eth["chain"]["block_gas_limit"],
        "empty_window_ms": EMPTY_WINDOW_MS, "recommit_s": RECOMMIT_S,
        "first_block_number": eth["window"]["first_block"],
    },
    "uncles": {"model": "ethereum", "max_uncles": eth["chain"]["max_uncles_per_block"],
               "generations": eth["chain"]["max_uncle_generations"], "uncle_base": 8, "nephew_divisor": 32},
    "network": {
        "model": "geo",
        "nodes": NODES, "out_peers": 8, "max_peers": geth["default_max_peers"], "geo_bias": 0.5,
        "dc_upload_bps": 1e9, "dc_download_bps": 1e9, "gateway_peers": 50,
        "jitter": {"model": "pareto"},
        "relay": {"model": "geth-1.8.23", "push_min": 4, "verify_ms": 5, "import_base_ms": 10,
                  "import_ms_per_mgas": 25, "arrive_timeout_ms": geth["fetcher_arrive_timeout_ms"],
                  "fetch_timeout_ms": geth["fetcher_fetch_timeout_ms"], "fetch_fail_prob": 0},
        "stratum": {"model": "lognormal", "median_ms": STRATUM_MEDIAN_MS, "sigma": 1.0},
        "regions": {"names": reg["names"], "latency_ms": reg["latency_ms_mean"], "upload_bps": reg["upload_bps"],
                    "download_bps": reg["download_bps"], "node_share": share},
        "cities": {"names": cities, "region": [CITY_REGION[c] for c in cities], "rtt_ms": rtt_ms},
        "vantage_points": vantages,
        "gateways": [{"pool": p, "cities": c} for p, c in GATEWAYS.items()],
    },
    "pools": pools,
    "transactions": {
        "rate_per_s": eth["transactions"]["unique_rate_per_s"],
        "mc_gas_median": MC_GAS_MEDIAN,
        "propagation": "region",
    },
}
if missing:
    print("note: RTT not measured for", missing, file=sys.stderr)

# ---- the scale scenario: the same model at 100,000 nodes for one day of blocks ----
SCALE_NODES = 100000
DAY_HEIGHTS = 6659  # BENCH.md's workload D, RBlockSim's day (24 h at 13 s), so that the figures compare
scale = copy.deepcopy(scenario)
scale["name"] = "100k-day"
scale["comment"] = [
    "Scale scenario: pools-2019.json's model (every section but the node count and the heights) at "
    "%s ordinary nodes for one day of blocks, %s heights (BENCH.md's workload D: RBlockSim's 24 h at 13 s). "
    "RBlockSim's authors report about 48 GB for 100,000 nodes; BENCH.md's target here is under 2 GB. "
    "Written by scenarios/gen/pools-2019.py together with pools-2019.json, so the two stay in step; "
    "the month's comment follows." % (f"{SCALE_NODES:,}", f"{DAY_HEIGHTS:,}"),
] + scenario["comment"]
scale["stop"]["heights"] = DAY_HEIGHTS
scale["network"]["nodes"] = SCALE_NODES

for doc, rel in ((scenario, "pools-2019.json"), (scale, os.path.join("scale", "100k-day.json"))):
    out = os.path.join(args.out, rel)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print("wrote", os.path.normpath(out), file=sys.stderr)
print("node shares", dict(zip(reg["names"], share)), file=sys.stderr)
