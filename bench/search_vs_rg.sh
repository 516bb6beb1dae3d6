#!/usr/bin/env bash
# search_vs_rg.sh: time agentd's search_text engine against ripgrep on Go's own source tree, in
# the same `go test -bench` run (BenchmarkSearchGOROOT in ./tools runs both, per query), and
# print the ratio per query. The budget is agentd <= 1.5x ripgrep.
#
# Usage: bench/search_vs_rg.sh [count]   (count: benchmark repetitions, default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-5}"

if ! command -v rg >/dev/null 2>&1; then
	echo "ripgrep not found; installing it with apt-get" >&2
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y ripgrep >&2 || { apt-get update >&2 && apt-get install -y ripgrep >&2; }
	else
		sudo apt-get install -y ripgrep >&2
	fi
fi

src="$(go env GOROOT)/src"
echo "corpus: $src ($(find "$src" -type f | wc -l) files), $(rg --version | sed -n 1p), $(go version)"
# Warm the page cache so both read from memory.
rg -c --no-messages zzzzzz "$src" >/dev/null || true

out="$(go test -run '^$' -bench 'BenchmarkSearchVsRipgrep' -benchtime 5x -count "$count" ./tools/)"
echo "$out" | grep -E '^Benchmark'

# BenchmarkSearchVsRipgrep alternates the two engines inside each iteration (same load on this
# shared machine) and reports agentd-ms, rg-ms and their ratio; take the median of each.
echo "$out" | awk '
/^BenchmarkSearchVsRipgrep\// {
	split($1, p, "/"); q = p[2]; sub(/-[0-9]+$/, "", q)
	if (!(q in n)) order[++nq] = q
	c = ++n[q]
	for (i = 3; i < NF; i += 2) val[q, $(i + 1), c] = $i
}
function median(q, unit,   i, j, t, c, a) {
	c = n[q]; for (i = 1; i <= c; i++) a[i] = val[q, unit, i]
	for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}
END {
	fail = 0
	printf "\n%-10s %11s %9s %13s %14s\n", "query", "agentd ms", "rg ms", "median ratio", "matched lines"
	for (k = 1; k <= nq; k++) {
		q = order[k]
		r = median(q, "ratio")
		flag = (r <= 1.5) ? "" : "  OVER BUDGET (1.5x)"
		if (flag != "") fail = 1
		printf "%-10s %11.1f %9.1f %12.2fx %14d%s\n", q, median(q, "agentd-ms"), median(q, "rg-ms"), r, median(q, "lines"), flag
	}
	if (!nq) { print "no results (is ripgrep installed?)"; fail = 1 }
	exit fail
}'
