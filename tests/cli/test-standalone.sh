#!/usr/bin/env bash
# test-standalone.sh: the repository stands alone. No file of it names a path beside or above the checkout
# (a sibling shared data folder, the source root's parent), every data path that files and tests name under
# scenarios/data/ and the real-log folders of tests/data/ exists in the tree, the files the unit tests
# build paths to exist, and each data file is described in its folder's README. Files: `git ls-files` in
# a git checkout, else every file of the tree but the top-level folders .gitignore names (build*/ ...).
# Run from the source root.
. "$(dirname "$0")/lib.sh" "$@"

# ---- the files of the repository ----
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  mode=git
  git ls-files -z >"$tmp/files"
else
  mode=tree
  prune=(-path ./.git)
  while IFS= read -r line; do # top-level folders in .gitignore: /NAME/ or /GLOB*/
    case $line in /*/) name=${line#/}; name=${name%/}; case $name in */*) ;; *) prune+=(-o -path "./$name") ;; esac ;; esac
  done <.gitignore
  find . \( "${prune[@]}" \) -prune -o -type f ! -name '*.tmp' -printf '%P\0' >"$tmp/files"
fi
nfiles=$(tr -cd '\0' <"$tmp/files" | wc -c)
if [ "$nfiles" -ge 100 ]; then ok; else bad "$mode mode: only $nfiles files listed"; fi
for f in meson.build tests/meson.build README.md tests/cli/test-standalone.sh scenarios/data/README.md; do
  if grep -qzx -- "$f" "$tmp/files"; then ok; else bad "$mode mode: $f not among the files"; fi
done
for d in build .git; do
  if grep -qz "^$d/" "$tmp/files"; then bad "$mode mode: files under $d/ listed"; else ok; fi
done

# ---- no path beside or above the checkout ----
# The forms a reference to the sibling data folder or the source root's parent has taken: a relative path,
# the path in words, the Python and meson ways of joining it, the old environment variable. Bracketed here,
# and the samples below assembled from pieces, so that this file does not name them itself.
outside='[.][.]/shared|shared[/]data|"shared"[,] *"data"|'"'shared'"' */ *'"'data'"'|SIM_SHARED_DAT[A]|source_root[(][)] */ *'"'[.][.]'"'|[$][{]?ROOT[}]?/[.][.]'
# The pattern catches each form (so a broken pattern cannot pass), and not the README's cluster example.
up=.. sh=shared SH=SHARED
printf '%s\n' "see $up/$sh/data/README.md" "a comment naming $sh/data/perf-models.json" \
  "DATA = os.path.join(here, \"$up\", \"$sh\", \"data\")" "env.set('X', root / '$sh' / 'data')" \
  "export SIM_${SH}_DATA=/x" "meson.project_source_root() / '$up' / 'x'" "cp \"\$ROOT/$up/x\" ." >"$tmp/forms"
n=$(grep -cE "$outside" "$tmp/forms")
if [ "$n" -eq 7 ]; then ok; else bad "the pattern catches $n of the 7 forms"; fi
if printf 'sim sweep merge /shared/study\n' | grep -qE "$outside"; then bad "the pattern flags the README's cluster path"; else ok; fi
xargs -0 grep -nIE "$outside" -- <"$tmp/files" >"$tmp/outside"
if [ ! -s "$tmp/outside" ]; then ok; else bad "paths outside the checkout:"; cat "$tmp/outside"; fi

# ---- data paths named in files exist ----
# Everything under scenarios/data/, and the two folders of real logs under tests/data/ (other fixtures there
# name missing files on purpose, to test the error).
xargs -0 grep -ohIE 'scenarios/data/[A-Za-z0-9._/-]*[A-Za-z0-9_-]|tests/data/emc-(rinkeby-2018-09|stage-templates)(/[A-Za-z0-9._-]*[A-Za-z0-9_-])?' \
  -- <"$tmp/files" | sort -u >"$tmp/named"
for p in scenarios/data/perf-models.json scenarios/data/ethereum-2019.json tests/data/emc-rinkeby-2018-09; do
  if grep -qx -- "$p" "$tmp/named"; then ok; else bad "$p: not found among the named data paths"; fi
done
while read -r p; do
  if [ -e "$p" ]; then ok; else bad "named but missing: $p ($(xargs -0 grep -lIF -- "$p" <"$tmp/files" | head -3 | tr '\n' ' '))"; fi
done <"$tmp/named"

# ---- the files the unit tests build paths to exist ----
# "scenarios", "data", "NAME" (g_build_filename); test_data("DIR", ...) and check_template("DIR", ...) under
# tests/data; rinkeby("FILE") and the file tables ({"FILE", EMC_KIND_...}) of the EMC tests.
built=0
for p in $(grep -ohE '"scenarios", "data", "[^"]+"' tests/*.c | sed -E 's/.*"data", "([^"]+)"/\1/' | sort -u); do
  built=$((built + 1))
  if [ -f "scenarios/data/$p" ]; then ok; else bad "a unit test reads scenarios/data/$p: missing"; fi
done
for d in $(grep -ohE '(test_data|check_template)\("[^"]+"' tests/*.c | sed -E 's/.*\("//; s/"$//' | sort -u); do
  built=$((built + 1))
  if [ -d "tests/data/$d" ]; then ok; else bad "a unit test reads tests/data/$d/: missing"; fi
done
for f in $(grep -ohE 'rinkeby\("[^"]+"' tests/test_traces.c tests/test_calibrate.c | sed -E 's/.*\("//; s/"$//' | sort -u); do
  built=$((built + 1))
  if [ -f "tests/data/emc-rinkeby-2018-09/$f" ]; then ok; else bad "tests/data/emc-rinkeby-2018-09/$f: missing"; fi
done
for f in $(grep -ohE '\{"[^"]+", EMC_KIND_' tests/test_traces.c | sed -E 's/^\{"//; s/", EMC_KIND_$//' | sort -u); do
  built=$((built + 1))
  if [ -f "tests/data/emc-rinkeby-2018-09/$f" ] || [ -f "tests/data/emc-stage-templates/$f" ]; then ok
  else bad "$f (test_traces.c): in neither tests/data/emc-rinkeby-2018-09 nor tests/data/emc-stage-templates"; fi
done
# perf-models.json (3 tests), the Rinkeby and stage folders, 5 logs, 24 table entries.
if [ "$built" -ge 30 ]; then ok; else bad "only $built paths found in the unit tests' sources"; fi

# ---- each data file is described in its folder's README ----
for f in $(cd scenarios/data && find . -type f ! -name README.md | sed 's|^\./||' | sort); do
  if grep -qF -- "$f" scenarios/data/README.md || grep -qF -- "\`$(basename "$f")\`" scenarios/data/README.md; then ok
  else bad "scenarios/data/$f is not described in scenarios/data/README.md"; fi
done
for f in $(cd tests/data && find emc-rinkeby-2018-09 emc-stage-templates -type f | sort); do
  if grep -qF -- "\`$(basename "$f")\`" tests/data/README.md; then ok
  else bad "tests/data/$f is not described in tests/data/README.md"; fi
done

echo "standalone ($mode mode, $nfiles files): $pass passed, $fail failed"
[ "$fail" -eq 0 ]
