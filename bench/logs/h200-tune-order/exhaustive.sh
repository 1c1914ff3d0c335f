#!/bin/bash
# Every candidate of a kernel's space timed into one database (the
# landscape the local search is replayed against); run again with the
# same database to go on where the budget ended. $1 kernel of
# bench/specs/half.yaml, $2 budget in seconds, $3 database, $4 rows
# (default 4096).
O=$OUT/exhaustive; mkdir -p $O
cp "$3" $OUT/ 2>/dev/null
build/specl tune bench/specs/half.yaml --kernel $1 --rows ${4:-4096} \
  --strategy exhaustive --budget $2 --db $OUT/$(basename $3) \
  > $O/$1-$(date +%s).txt 2>&1
echo "rc=$?"
tr "\r" "\n" < $O/$1-*.txt | grep -E "configs,|left out|evaluated [0-9]+ of|incomplete|complete:|defaults [0-9.]+ us|best [0-9.]+ us" | tail -8
