#!/usr/bin/env bash
# test-docs.sh: the documentation against the binary. (a) Every option `sim CMD --help` lists has its entry in
# CMD's section of sim/sim.1, written as the help writes it ("-o, --out=DIR"), and the section names no option
# CMD does not take; (b) every command and subcommand has a section in sim.1 and a row in the README's command
# table, whose options it takes; (c) the files `sim run --help` and `sim replay --help` list, with their
# conditions, are the files real runs write, and sim.1 and docs/outputs.md's Outputs list the same; (d) the
# sweep table's columns as docs/studies.md, docs/outputs.md (Reports), sim.1 and `sim sweep --help` describe
# them are the header of a real merged sweep table, and table.json's keys as docs/studies.md writes them.
# Also: every command line in the README and the other documentation (DOCS below: code spans, code blocks) and
# in every --help text names only options its command takes, docs/outputs.md's summary.json keys cover those
# of the real runs, and every relative link of every .md file resolves (its file, and its #anchor to a
# heading). Each drift is printed as FAIL: with what differs. Run from the source root.
. "$(dirname "$0")/lib.sh" "$@"

# --- real runs for (c): between them every condition of `sim run --help` holds in one and fails in another.
# runs.txt: one line per run, "DIR FLAGS" (FLAGS: the options that conditions name, comma-separated, or -).
r="$tmp/runs"
mkdir -p "$r"
geo=(scenarios/geo-small.json --set stop.heights=30 --quiet)
txs='transactions={"rate_per_s": 3}'
cens='transactions={"rate_per_s": 3, "censor": {"pools": ["Ethermine"], "sender_share": 0.2}}'
expect_rc 0 "run tiny" -- "$SIM" run scenarios/tiny.json --set stop.heights=50 --quiet --out "$r/tiny"
echo "tiny -" >>"$r/runs.txt"
expect_rc 0 "run tiny --emc-logs" -- "$SIM" run scenarios/tiny.json --set stop.heights=50 --quiet --emc-logs \
  --out "$r/tiny-emc"
echo "tiny-emc --emc-logs" >>"$r/runs.txt"
expect_rc 0 "run geo-small --emc-logs" -- "$SIM" run "${geo[@]}" --emc-logs --out "$r/geo-emc"
echo "geo-emc --emc-logs" >>"$r/runs.txt"
expect_rc 0 "run geo-small, transactions, --trace-blocks" -- "$SIM" run "${geo[@]}" --set chain.tx_rate_per_s=0 \
  --set "$txs" --trace-blocks 5,20 --out "$r/geo-tx"
echo "geo-tx --trace-blocks" >>"$r/runs.txt"
expect_rc 0 "run geo-small, censoring, --emc-logs" -- "$SIM" run "${geo[@]}" --set chain.tx_rate_per_s=0 \
  --set "$cens" --emc-logs --out "$r/geo-cens-emc"
echo "geo-cens-emc --emc-logs" >>"$r/runs.txt"
expect_rc 0 "run geo-small --mining-from" -- "$SIM" run "${geo[@]}" --mining-from WE="$r/geo-cens-emc/emc/WE" \
  --mining-from CE="$r/geo-cens-emc/emc/CE" --pools "$r/geo-cens-emc/emc/pools.csv" --out "$r/geo-trace"
echo "geo-trace --mining-from" >>"$r/runs.txt"
expect_rc 0 "replay the Rinkeby logs" -- "$SIM" replay tests/data/emc-rinkeby-2018-09 --quiet --out "$tmp/replay"

# --- sweeps for (d): 2 points x 1 replicate of tiny as two shards, merged; and docs/studies.md's example.
sw="$tmp/sw"
mkdir -p "$sw"
cp scenarios/tiny.json "$sw/tiny.json"
printf '%s\n' '{"name": "d", "base": "tiny.json", "sets": ["stop.heights=60"],' \
  ' "parameters": [{"path": "network.delay.median_ms", "values": [300, 900]}]}' >"$sw/d.json"
printf '%s\n' '{"name": "e", "base": "tiny.json", "sets": ["stop.heights=60"], "metrics": ["chain.uncle_rate"],' \
  ' "parameters": [{"path": "network.delay.median_ms", "values": [300, 900]}]}' >"$sw/e.json"
for i in 0 1; do
  expect_rc 0 "sweep shard $i/2" -- "$SIM" sweep "$sw/d.json" --out "$sw/sh$i" --shard $i/2 --jobs 1 --quiet
done
expect_rc 0 "sweep merge" -- "$SIM" sweep merge "$sw/sh0" "$sw/sh1" --out "$sw/merged" --quiet
expect_rc 0 "sweep of docs/studies.md's example" -- "$SIM" sweep "$sw/e.json" --out "$sw/example" --jobs 1 --quiet

# --- the checks: one "ok" line per check passed on fd 3, "FAIL: ..." on stdout for each drift.
python3 - "$SIM" "$tmp" 3>"$tmp/py-ok" >"$tmp/py-out" 2>&1 <<'PY'
import json, os, re, subprocess, sys

SIM, TMP = sys.argv[1], sys.argv[2]
okf = os.fdopen(3, "w")


def check(cond, msg):
    if cond:
        okf.write("ok\n")
    else:
        print("FAIL: " + msg)
    return cond


def sim_help(words):
    p = subprocess.run([SIM, *words, "--help"], capture_output=True, text=True)
    return p.returncode, p.stdout


# ---------- the binary: commands, subcommands, options ----------

def help_options(text):
    """Options of GOption's "Application Options:" block, long name -> the option column ("-o, --out=DIR")."""
    opts, block = {}, False
    for line in text.splitlines():
        if line.strip() == "Application Options:":
            block = True
            continue
        if not block:
            continue
        if not line.strip():
            break
        tag = re.split(r"\s{2,}", line.strip())[0]
        m = re.search(r"(?<![\w-])--([a-z0-9][a-z0-9-]*)", tag)
        if check(line.startswith("  -") and m, f"cannot read the option line '{line}'"):
            opts[m.group(1)] = tag
    return opts, block


def subcommands(cmd, text):
    """Subcommands a command's help names: "sim CMD WORD" or "sim CMD A|B|C" with lower-case words."""
    subs = []
    for m in re.finditer(r"\bsim " + re.escape(cmd) + r" ([a-z][a-z0-9-]*(?:\|[a-z][a-z0-9-]*)*)(?![\w.])", text):
        for w in m.group(1).split("|"):
            if w not in subs:
                subs.append(w)
    return subs


rc, top = sim_help([])
check(rc == 0, f"'sim --help' exits {rc}")
block = top.split("Commands:\n", 1)[1].split("\n\n", 1)[0] if "Commands:\n" in top else ""
tops = re.findall(r"^  ([a-z][a-z0-9-]*) +\S", block, re.M)
check(len(tops) >= 10, f"'sim --help' lists only {tops} under Commands:")

# name -> {"kind": own | shared (its --help is its parent's) | none (its --help is refused) | dispatcher,
#          "opts": long -> tag, "parent": top-level name}
cmds = {}
for c in tops:
    rc, text = sim_help([c])
    check(rc == 0 and text, f"'sim {c} --help' exits {rc}")
    subs = subcommands(c, text)
    opts, has_block = help_options(text)
    cmds[c] = {"kind": "dispatcher" if subs and not has_block else "own", "opts": opts, "parent": c}
    for s in subs:
        rc2, text2 = sim_help([c, s])
        name = f"{c} {s}"
        if rc2 != 0:
            print(f"note: 'sim {name} --help' exits {rc2}: taken as a subcommand without options")
            cmds[name] = {"kind": "none", "opts": {}, "parent": c}
        elif text2 == text:
            cmds[name] = {"kind": "shared", "opts": opts, "parent": c}
        else:
            cmds[name] = {"kind": "own", "opts": help_options(text2)[0], "parent": c}

# ---------- sim.1 ----------

def roff_args(s):
    args, i, n = [], 0, len(s)
    while i < n:
        while i < n and s[i] in " \t":
            i += 1
        if i >= n:
            break
        if s[i] == '"':
            i, a = i + 1, ""
            while i < n:
                if s[i] == '"':
                    if i + 1 < n and s[i + 1] == '"':
                        a, i = a + '"', i + 2
                        continue
                    i += 1
                    break
                a, i = a + s[i], i + 1
            args.append(a)
        else:
            j = i
            while j < n and s[j] not in " \t":
                j += 1
            args.append(s[i:j])
            i = j
    return args


def unescape(t):
    t = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", t)
    for a, b in (("\\-", "-"), ("\\(mi", "-"), ("\\(mu", "x"), ("\\(dq", '"'), ("\\(lq", '"'), ("\\(rq", '"'),
                 ("\\(em", "\u2014"), ("\\&", ""), ("\\e", "\\")):
        t = t.replace(a, b)
    return t


def render(line):
    """The text a roff line shows (macro arguments joined as the font macros join them)."""
    if line.startswith('.\\"'):
        return ""
    if line[:1] in (".", "'"):
        m = re.match(r"[.'](\S+)\s*(.*)", line)
        if not m:
            return ""
        mac, args = m.group(1), roff_args(m.group(2))
        if mac in ("B", "I", "SM", "SB", "SS", "SH"):
            return unescape(" ".join(args))
        if mac in ("BI", "BR", "IB", "IR", "RB", "RI"):
            return unescape("".join(args))
        return ""
    return unescape(line)


man_lines = open("sim/sim.1").read().splitlines()
sections, cur, in_cmds = {}, None, False
for line in man_lines:
    if line.startswith(".SH"):
        in_cmds, cur = render(line).strip() == "COMMANDS", None
        continue
    if not in_cmds:
        continue
    if line.startswith(".SS"):
        title = render(line).split()
        name = " ".join(title[1:])
        check(title[:1] == ["sim"] and name not in sections, f"sim.1: section title '.SS {' '.join(title)}' "
              "is not 'sim COMMAND' or comes twice")
        sections[name], cur = [], name
    elif cur is not None:
        sections[cur].append(line)


def entries(sec):
    """The .TP entries of a section: (tag, body), both as shown."""
    out, i = [], 0
    while i < len(sec):
        if sec[i].startswith(".TP") and i + 1 < len(sec):
            tag, j, body = render(sec[i + 1]).strip(), i + 2, []
            while j < len(sec) and not re.match(r"\.(TP|PP|P|LP|IP|SS|SH)\b", sec[j]):
                body.append(render(sec[j]))
                j += 1
            out.append((tag, " ".join(b for b in body if b).strip()))
            i = j
        else:
            i += 1
    return out


def long_of(tag):
    m = re.search(r"(?<![\w-])--([a-z0-9][a-z0-9-]*)", tag)
    return m.group(1) if m else None


MENTION = re.compile(r"(?<![\w-])--([a-z0-9][a-z0-9-]*)")
FILE_TAG = re.compile(r"^(\.sim-result|[\w<>./-]+\.(csv|json|log))$")

# (a) every option of `sim CMD --help` has its .TP entry in CMD's section, tagged as the help tags it; the
# section documents and mentions no other option.
takes = {}  # name -> the long options the command takes (what README rows may name)
for name, c in cmds.items():
    if c["kind"] == "dispatcher":
        takes[name] = {}
        continue
    sec = sections.get(name)
    if not check(sec is not None, f"sim.1 has no section for 'sim {name}' (.SS sim {name})"):
        takes[name] = c["opts"] if c["kind"] == "own" else {}
        continue
    man = {}
    for tag, _ in entries(sec):
        if tag.startswith("-"):
            L = long_of(tag)
            if check(L and L not in man, f"sim.1 'sim {name}': option entry '{tag}' has no long name or comes twice"):
                man[L] = tag
    ref = c["opts"]
    for L, tag in ref.items():
        if c["kind"] == "shared" and L not in man:
            continue  # a subcommand sharing its parent's help documents the options it takes
        if L not in man:
            check(False, f"sim {name} --{L}: 'sim {name} --help' lists '{tag}', sim.1 (section 'sim {name}') "
                  "does not document it")
        else:
            check(man[L] == tag, f"sim {name} --{L}: 'sim {name} --help' says '{tag}', sim.1 says '{man[L]}'")
    for L, tag in man.items():
        if L not in ref:
            check(False, f"sim {name}: sim.1 documents '{tag}', which 'sim {name} --help' does not list")
    takes[name] = {L: t for L, t in man.items() if L in ref} if c["kind"] == "shared" else dict(ref)
    mentioned = sorted({L for line in sec for L in MENTION.findall(render(line))})
    stray = [L for L in mentioned if L not in takes[name] and L != "help"]
    check(not stray, f"sim.1 section 'sim {name}' names " + ", ".join("--" + L for L in stray) +
          f", which 'sim {name}' does not take")
for name in sections:
    check(name in cmds, f"sim.1 has a section 'sim {name}', but sim has no such command")
for t in tops:
    fam = [n for n in cmds if n == t or n.startswith(t + " ")]
    check(any(n in sections for n in fam), f"sim.1 has no section for 'sim {t}' or its subcommands")

# ---------- README and docs ----------

readme = open("README.md").read().splitlines()
# The documentation the README links to: what it says of commands, files and tables is checked as the
# README's own text is (the README's sections moved there).
DOCS = ["README.md", "tests/README.md"] + sorted("docs/" + f for f in os.listdir("docs") if f.endswith(".md"))


def md_section(path, title):
    """Lines of the section of the markdown file `path` whose heading is `title` (up to the next heading of
    any level)."""
    lines = open(path).read().splitlines()
    i = lines.index(title)
    j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("#") and not lines[k].startswith("#!")
              and re.match(r"#+ ", lines[k])), len(lines))
    return lines[i + 1:j]


def cells(row):
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]


def resolve(span, where):
    """The command a code span "sim CMD [SUB] ..." shows, '' for sim's own options, None for other text."""
    w = span.replace("\\|", "|").split()
    if not w or w[0] != "sim":
        return None
    if len(w) >= 3 and f"{w[1]} {w[2]}" in cmds:
        return f"{w[1]} {w[2]}"
    if len(w) >= 2 and w[1] in cmds:
        return w[1]
    check(len(w) < 2 or not re.fullmatch(r"[a-z][a-z0-9-]*", w[1]) or w[1] == "help",
          f"{where}: '{span}': sim has no command '{w[1]}'")
    return ""


def span_options(span, name, where):
    stray = [L for L in MENTION.findall(span) if L not in takes.get(name, {}) and L != "help"]
    check(not stray, f"{where}: '{span}' names " + ", ".join("--" + L for L in stray) +
          f", which 'sim {name}' does not take")


# (b) the command table under "Using it": a row for every command, naming only options it takes.
head = readme.index("| command | what it does |")
rows = []
for line in readme[head + 2:]:
    if not line.startswith("|"):
        break
    rows.append(cells(line))
has_row = set()
for cols in rows:
    first = None
    for span in re.findall(r"`([^`]+)`", cols[0]):
        name = resolve(span, "README command table")
        if name:
            has_row.add(name)
            first = first or name
            span_options(span, name, "README command table")
    for span in re.findall(r"`([^`]+)`", cols[1] if len(cols) > 1 else ""):
        name = resolve(span, "README command table")
        if name:
            span_options(span, name, "README command table")
        elif name is None and span.startswith("--") and first:
            span_options(span, first, f"README command table, row of 'sim {first}'")
for name, c in cmds.items():
    if c["kind"] != "dispatcher":
        check(name in has_row, f"README's command table has no row for 'sim {name}'")
for t in tops:
    check(any(n == t or n.startswith(t + " ") for n in has_row), f"README's command table has no row for 'sim {t}'")

# Every command line anywhere in the README and DOCS (code spans, code blocks) and in every --help text names only
# options its command takes; a help text's own words name only options of its command (a dispatcher's: of
# its subcommands).
SEG = re.compile(r"(?<![\w/.-])sim (?:[a-z][\w-]*|[A-Z][\w.]*)[^'\"();|]*?(?=  |['\"();|]|$)")


def check_text(where, text, own=None):
    for line in text.splitlines():
        rest = line
        for m in SEG.finditer(line):
            name = resolve(m.group(0).strip(), where)
            if name:
                span_options(m.group(0).strip(), name, where)
            rest = rest.replace(m.group(0), " ", 1)
        if own is not None:
            allowed = set(takes[own])
            if cmds[own]["kind"] == "dispatcher":
                allowed = {L for n in cmds if n.startswith(own + " ") for L in takes[n]}
            stray = [L for L in MENTION.findall(rest) if L not in allowed and L != "help"]
            check(not stray, f"{where}: '{line.strip()}' names " + ", ".join("--" + L for L in stray) +
                  f", which 'sim {own}' does not take")


for doc in DOCS:
    fence = False
    for n, line in enumerate(open(doc).read().splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        elif fence:
            check_text(f"{doc}:{n}", line.split(" #")[0])
        else:
            for span in re.findall(r"`([^`]+)`", line):
                check_text(f"{doc}:{n}", span)
for name, c in cmds.items():
    if c["kind"] in ("own", "dispatcher"):
        check_text(f"'sim {name} --help'", sim_help(name.split())[1], name)

# The option table of "Studies (sim sweep)" (docs/studies.md): exactly the options of `sim sweep`.
studies = md_section("docs/studies.md", "# Studies (sim sweep)")
i = studies.index("**Options.**")
listed, table = set(), False
for line in studies[i + 1:]:
    if not line.startswith("|"):
        if table or line.strip():
            break
        continue
    table = True
    for span in re.findall(r"`([^`]+)`", cells(line)[0]):
        name = resolve(span, "docs/studies.md options")
        if name:
            span_options(span, name, "docs/studies.md options")
        elif span.startswith("--"):
            listed.add(long_of(span))
sweep = set(takes.get("sweep", {}))


def drift(what, extra, missing):
    """ "WHAT: lists A, B that ...; misses C" without the empty halves."""
    parts = ([f"lists {', '.join(sorted(extra))} that {what[1]} does not"] if extra else []) + \
        ([f"misses {', '.join(sorted(missing))}"] if missing else [])
    return f"{what[0]}: " + "; ".join(parts)


check(listed == sweep, drift(("docs/studies.md options table", "'sim sweep --help'"),
                             {"--" + x for x in listed - sweep}, {"--" + x for x in sweep - listed}))

# ---------- (c) the files a run writes ----------

ATOMS = {"vantage points", "four vantage points", "transactions", "censoring pools", "--emc-logs", "--mining-from",
         "--trace-blocks"}


def help_files(cmd):
    """`sim CMD --help`'s "Files written into DIR" list: name -> condition ("always", "with A and B")."""
    text = sim_help(cmd.split())[1].splitlines()
    k = next((i for i, l in enumerate(text) if l.startswith("Files written into DIR")), None)
    if not check(k is not None, f"'sim {cmd} --help' has no 'Files written into DIR' list"):
        return {}
    files = {}
    for line in text[k + 1:]:
        m = re.match(r"^  (\S+)\s{2,}([^:]+):", line)
        if not m:
            break
        check(m.group(1) not in files, f"'sim {cmd} --help' lists {m.group(1)} twice")
        files[m.group(1)] = m.group(2).strip()
    return files


def atoms(cond, where):
    if cond == "always":
        return set()
    a = set(cond[5:].split(" and ")) if cond.startswith("with ") else {cond}
    check(a <= ATOMS, f"{where}: condition '{cond}' is not 'always' or 'with' and some of {sorted(ATOMS)} joined "
          "by 'and' (teach tests/cli/test-docs.sh a new one)")
    return a


def written(d):
    return sorted(os.path.relpath(os.path.join(p, f), d) for p, _, fs in os.walk(d) for f in fs)


run_files = help_files("run")
check(len(run_files) >= 4, f"'sim run --help' lists only {sorted(run_files)}")
seen_atoms, made = {}, set()
summary_keys = set()
for line in open(os.path.join(TMP, "runs", "runs.txt")):
    d, flags = line.split()
    path = os.path.join(TMP, "runs", d)
    s = json.load(open(os.path.join(path, "summary.json")))
    summary_keys |= set(s)
    have = set() if flags == "-" else set(flags.split(","))
    prop = s.get("propagation") or {}
    vantages = sorted(prop.get("first_seen_share", {}))
    if prop:
        have.add("vantage points")
    if len(vantages) == 4:
        have.add("four vantage points")
    if "tx" in s:
        have.add("transactions")
    if ((s.get("tx") or {}).get("censorship") or {}).get("pools"):
        have.add("censoring pools")
    for a in ATOMS:
        seen_atoms.setdefault(a, set()).add(a in have)
    expect = {}
    for f, cond in run_files.items():
        if atoms(cond, "'sim run --help'") <= have:
            for v in vantages if "<V>" in f else [None]:
                expect[f.replace("<V>", v) if v else f] = f
    got = written(path)
    made |= {expect[f] for f in got if f in expect}
    extra = [f for f in got if f not in expect]
    missing = [f for f in expect if f not in got]
    check(not extra and not missing, f"run '{d}' ({', '.join(sorted(have)) or 'no condition'}): " +
          "; ".join(([f"wrote {', '.join(extra)}, which 'sim run --help' does not list for it"] if extra else []) +
                    ([f"did not write {', '.join(missing)}, which 'sim run --help' lists for it"] if missing else [])))
for f, cond in run_files.items():
    check(f in made, f"'sim run --help' lists {f} ({cond}), but no run of test-docs.sh wrote it: add a run that does")
for a, vals in seen_atoms.items():
    check(vals == {True, False}, f"the runs of test-docs.sh do not cover '{a}' both holding and not holding")

replay_files = help_files("replay")
got = written(os.path.join(TMP, "replay"))
expect = sorted(f for f, cond in replay_files.items() if not atoms(cond, "'sim replay --help'"))
check(got == expect, f"'sim replay' wrote {got}; 'sim replay --help' lists {expect}")

# sim.1 lists the same files with the same conditions, in the sections of run and replay.
for cmd, files in (("run", run_files), ("replay", replay_files)):
    man = {tag: body.split(":", 1)[0].strip() for tag, body in entries(sections.get(cmd, [])) if FILE_TAG.match(tag)}
    for f in sorted(set(files) | set(man)):
        check(files.get(f) == man.get(f), f"{f}: 'sim {cmd} --help' says {files.get(f, 'nothing')!r}, "
              f"sim.1 (section 'sim {cmd}') says {man.get(f, 'nothing')!r}")

# docs/outputs.md's Outputs: a bullet per file (a bullet may start with several names), and every top-level key
# of the runs' summary.json among the summary.json bullet's keys.
outputs = md_section("docs/outputs.md", "# Outputs")
bullets, keys, in_summary = set(), set(), False
for line in outputs:
    m = re.match(r"- ((?:`[^`]+`(?:, )?)+)", line)
    if m:
        names = re.findall(r"`([^`]+)`", m.group(1))
        bullets |= {n for n in names if FILE_TAG.match(n)}
        in_summary = names == ["summary.json"]
    elif in_summary:
        k = re.match(r"  - `([a-z_]+)", line)
        if k:
            keys.add(k.group(1))
check(bullets == set(run_files), drift(("docs/outputs.md Outputs", "'sim run --help'"), bullets - set(run_files),
                                      set(run_files) - bullets))
check(summary_keys <= keys, f"docs/outputs.md Outputs: summary.json keys {sorted(summary_keys - keys)} of real runs are "
      "not documented")

# ---------- (d) the sweep table ----------

header = open(os.path.join(TMP, "sw", "merged", "table.csv")).readline().rstrip("\n").split(",")
params = ["network.delay.median_ms"]
PHRASE = re.compile(r"(\S+), the parameter columns, (\S+), then (\S+), (\S+) and (\S+) per metric")


def flat(lines):
    return re.sub(r"\s+", " ", " ".join(lines).replace("`", ""))


def check_columns(where, text):
    m = PHRASE.findall(text)
    if not check(len(m) == 1, f"{where}: no (or more than one) sentence 'A, the parameter columns, B, then C, D "
                 "and E per metric' describing the sweep table"):
        return
    first, mid, *per = m[0]
    sfx = [p[3:] for p in per]
    n = 2 + len(params)
    rest = header[n:]
    groups = [rest[i:i + 3] for i in range(0, len(rest), 3)]
    good = (all(p.startswith("KEY") for p in per) and header[:n] == [first, *params, mid] and rest and
            len(rest) % 3 == 0 and all(g == [g[0][:len(g[0]) - len(sfx[0])] + s for s in sfx] for g in groups))
    check(good, f"{where} says the sweep table's columns are {first}, the parameters, {mid}, then {', '.join(per)} "
          f"per metric; a real merged table.csv starts {','.join(header[:n + 6])}")
    return groups


groups = check_columns("docs/studies.md", flat(studies))
check(groups and ["chain.uncle_rate:mean", "chain.uncle_rate:sd", "chain.uncle_rate:ci95"] in groups,
      "the merged sweep table has no chain.uncle_rate columns")
check_columns("docs/outputs.md (Reports)", flat(md_section("docs/outputs.md", "## Reports")))
check_columns("sim.1 (section 'sim sweep')", flat(render(l) for l in sections.get("sweep", [])))
check_columns("'sim sweep --help'", flat(sim_help(["sweep"])[1].splitlines()))

example = open(os.path.join(TMP, "sw", "example", "table.csv")).readline().rstrip("\n")
m = re.search(r"prints (point,[^ ]+?)\.?(?: |$)", flat(studies))
check(m and m.group(1) == example, f"docs/studies.md: the example header is "
      f"'{m.group(1) if m else None}', a real sweep of it writes '{example}'")

# table.json's shape as docs/studies.md writes it: {"a", "b": {...}, "c": [{...}], KEY: {...}}.
def parse_shape(s):
    pos = [0]

    def ws():
        while pos[0] < len(s) and s[pos[0]] == " ":
            pos[0] += 1

    def eat(c):
        ws()
        if s[pos[0]:pos[0] + 1] != c:
            raise ValueError(f"expected '{c}' at {pos[0]} of {s}")
        pos[0] += 1

    def obj():
        eat("{")
        items = []
        while True:
            ws()
            m = re.compile(r'"([^"]*)"|(KEY)').match(s, pos[0])
            if not m:
                raise ValueError(f"expected a key at {pos[0]} of {s}")
            pos[0] = m.end()
            key, val = m.group(1) if m.group(1) is not None else "KEY", None
            ws()
            if s[pos[0]] == ":":
                pos[0] += 1
                ws()
                if s[pos[0]] == "[":
                    pos[0] += 1
                    val = ("list", obj())
                    eat("]")
                else:
                    val = ("obj", obj())
            items.append((key, val))
            ws()
            if s[pos[0]] == "}":
                pos[0] += 1
                return items
            eat(",")

    return obj()


def compare_shape(shape, actual, path):
    keys = [k for k, _ in shape]
    if keys == ["KEY"]:
        vals = list(actual.values())
        if check(vals, f"docs/studies.md table.json shape: {path} is empty in a real table.json"):
            compare_shape(shape[0][1][1], vals[0], path + ".KEY")
        return
    if not check(isinstance(actual, dict) and list(actual) == keys,
                 f"docs/studies.md says table.json{path} has the keys {keys}; a real one has "
                 f"{list(actual) if isinstance(actual, dict) else actual}"):
        return
    for k, v in shape:
        if v:
            a = actual[k]
            if v[0] == "list":
                a = a[0] if isinstance(a, list) and a else a
            compare_shape(v[1], a, f"{path}.{k}" + ("[]" if v[0] == "list" else ""))


m = re.search(r"holds the same rows: (\{.*?\}\]\})", flat(studies))
if check(m, "docs/studies.md: no 'table.json holds the same rows: {...}' shape"):
    try:
        shape = parse_shape(m.group(1))
    except (ValueError, IndexError) as e:
        check(False, f"docs/studies.md: cannot read the table.json shape: {e}")
    else:
        compare_shape(shape, json.load(open(os.path.join(TMP, "sw", "merged", "table.json"))), "")

# ---------- links ----------

# Every relative link [text](path#anchor) of every .md file of the source tree (build and hidden directories
# at the top left out) names a file that exists, and its anchor, if any, a heading of that file (GitHub's
# slugs).


def slugs(path):
    out, fence = set(), False
    for line in open(path).read().splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#+ ", line):
            t = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", line.lstrip("#").strip()).lower()
            out.add(re.sub(r"[^\w\- ]", "", t).replace(" ", "-"))
    return out


def skipped(d):
    top = os.path.relpath(d).split(os.sep)[0]
    return top != "." and top.startswith((".", "build"))


LINK = re.compile(r"\]\(([^)\s]+)\)")
mds = sorted(os.path.relpath(os.path.join(p, f)) for p, _, fs in os.walk(".") if not skipped(p)
             for f in fs if f.endswith(".md"))
check(set(DOCS) <= set(mds), f"the .md files found, {mds}, lack some of {DOCS}")
nlinks = 0
for md in mds:
    fence = False
    for n, line in enumerate(open(md).read().splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            nlinks += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            if check(os.path.exists(dest), f"{md}:{n}: the link '{target}' names {dest}, which does not exist") \
                    and anchor:
                check(dest.endswith(".md") and anchor in slugs(dest),
                      f"{md}:{n}: the link '{target}': {dest} has no heading with the anchor '#{anchor}'")
check(nlinks >= 20, f"found only {nlinks} relative links in {len(mds)} .md files")
okf.close()
PY
pyrc=$?
cat "$tmp/py-out"
[ "$pyrc" -eq 0 ] || bad "the checks (python) exited $pyrc"
pass=$((pass + $(wc -l <"$tmp/py-ok")))
fail=$((fail + $(grep -c '^FAIL' "$tmp/py-out")))
echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
