#!/usr/bin/env bash
# test-report-browser.sh: the report's map and journey in a real browser engine, headless Chromium (Debian's
# chromium package; .ci/install-deps --ci installs it). From the DOM Chromium builds: the map with its land,
# node dots and markers, the slider and the animation's frames, and, through the page's #selftest hook (which
# moves the slider to the first and the last frame and steps every frame), that moving the slider changes
# the nodes' colours and that the share reached never falls. Saves a screenshot of the journey as
# BUILD/report-journey.png for a person to look at ($2: the build folder of the tests). Skipped (exit 77) only
# when chromium is missing outside CI; with CI=true a missing chromium fails.
. "$(dirname "$0")/lib.sh" "$@"
shot_dir=${2:-$tmp}

if ! command -v chromium >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: chromium not on PATH (CI installs it: sh .ci/install-deps --ci)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "skipped: chromium not on PATH"
  exit 77
fi
chrome() { # URL OUT [extra options]: the DOM after scripts, or a screenshot
  local url=$1 out=$2
  shift 2
  timeout 120 chromium --headless=new --no-sandbox --disable-gpu --disable-crash-reporter --no-first-run \
    --user-data-dir="$tmp/chromium" --virtual-time-budget=5000 "$@" "$url" >"$out" 2>"$tmp/chromium.err"
}

expect_rc 0 "run with trace" -- "$SIM" run scenarios/geo-small.json --set stop.heights=40 --quiet \
  --trace-blocks 12,25,30 --out "$tmp/run"
expect_rc 0 "report" -- "$SIM" report "$tmp/run" --quiet
chrome "file://$tmp/run/report.html#selftest" "$tmp/dom" --dump-dom
rc=$?
[ $rc -eq 0 ] && ok || bad "chromium --dump-dom: exit $rc: $(tail -3 "$tmp/chromium.err")"
is "$(python3 - "$tmp/dom" <<'PY'
import json, re, sys
d = open(sys.argv[1]).read()
bad = []
def grab(pat):
    m = re.search(pat, d, re.S)
    return m.group(0) if m else ""
m = grab(r'<svg id="map-svg".*?</svg>')
if not m: bad.append("no map svg")
if len(grab(r'<g id="map-land".*?</g>')) < 20000: bad.append("land outline missing or short")
if grab(r'<g id="map-dots".*?</g>').count("<circle") != 437: bad.append("map dots != 437")
if m.count('class="vp"') != 4: bad.append("vantage markers != 4")
if m.count('class="gw"') != 33: bad.append("gateway markers != 33")
for lab in ("WE", "CE", "NA", "EA"):
    if ">%s</text>" % lab not in m: bad.append("no label " + lab)
if not re.search(r'<input type="range" id="journey-slider" min="0" max="120"', d): bad.append("no slider")
jm = grab(r'<svg id="journey-map".*?</svg>')
if jm.count("<circle") != 437: bad.append("journey map has %d dots (the script clones them)" % jm.count("<circle"))
data = json.loads(grab(r'(?<=<script type="application/json" id="journey-data">).*?(?=</script>)'))
if len(data["frames"]) != 121 or data["frames"][0] != 0: bad.append("frames")
t = grab(r'(?<=<pre id="journey-selftest">).*?(?=</pre>)')
if not t: bad.append("the selftest did not run")
else:
    s = json.loads(t)
    if s["dots"] != 437 or s["frames"] != 121: bad.append("selftest saw %s" % t)
    if s["changed"] < 400: bad.append("moving the slider changed %d colours" % s["changed"])
    if s["grey_at_start"] < 400: bad.append("%d grey nodes at frame 0" % s["grey_at_start"])
    if s["reached_last"] != 437 or not s["monotone"]: bad.append("reached over time: %s" % t)
fills = re.findall(r'<circle[^>]*fill="(rgb\([^"]*\)|#d4d4d4)"', jm)
if len(set(fills)) < 3: bad.append("journey dots not coloured: %d distinct fills" % len(set(fills)))
print("; ".join(bad) or "ok")
PY
)" ok "report DOM in Chromium"
chrome "file://$tmp/run/report.html#selftest" /dev/null --hide-scrollbars --window-size=1000,1800 \
  --screenshot="$shot_dir/report-journey.png"
[ -s "$shot_dir/report-journey.png" ] && ok || bad "no screenshot $shot_dir/report-journey.png"
echo "screenshot: $shot_dir/report-journey.png"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
