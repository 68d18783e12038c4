#!/bin/sh
# Runs Botan's XTS(Serpent) speed test and this package's XTS benchmark
# (4096-byte sectors, every code path) back to back, for a ratio measured in
# one session. The machine may be shared: run several rounds and compare
# rounds, not single numbers. Usage: testdata/bench-vs-botan.sh [rounds]
set -e
cd "$(dirname "$0")/.."
rounds=${1:-3}
i=0
while [ "$i" -lt "$rounds" ]; do
	i=$((i + 1))
	echo "== round $i: $(uptime)"
	botan speed --msec=2000 --buf-size=4096 'XTS(Serpent)' | grep buffer
	go test -run '^$' -bench '^BenchmarkXTS$' -benchtime 1s . | grep '^Benchmark'
done
