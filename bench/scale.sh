#!/usr/bin/env bash
# scale.sh: issue 34's figures on a big project and a long session, each beside its anchor in
# the same run (docs/benchmarks.md, "Scale"). Bounded: the project (100,000 generated files, a
# 100 MB file; about 200 MB under $TMPDIR/agentd-scale-*) is written once per run and removed as
# the test binary exits; the whole run takes 2-4 minutes on a quiet 2-core machine.
#
# Usage: bench/scale.sh [tools|session|all]   (default all)
#   AGENTD_SCALE_FILES=N  generate N files instead of 100,000
#   AGENTD_SCALE_TURNS=N  turns of the long session (default 1,000)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "$(date -u '+%F %H:%M UTC'), $(git rev-parse --short HEAD), $(go version), $(rg --version | sed -n 1p), $(ctags --version | sed -n 1p)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$what" = all ] || [ "$what" = tools ]; then
	go test -c -o "$out/tools.test" ./tools
	(cd "$out" && ./tools.test -test.run '^$' -test.bench 'Scale' -test.benchtime 3x -test.benchmem)
	# The semantic index: one build of the whole project (seconds), then one file changed.
	(cd "$out" && ./tools.test -test.run '^$' -test.bench 'SemindexAt100k' -test.benchtime 1x)
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if [ "$what" = all ] || [ "$what" = session ]; then
	go test -c -o "$out/session.test" ./session
	(cd "$out" && ./session.test -test.run '^$' -test.bench 'LongSession|Load100MB|ListSessions|ConcurrentSessions' -test.benchtime 1x)
	(cd "$out" && ./session.test -test.run '^$' -test.bench 'ListSessions' -test.benchtime 20x)
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
