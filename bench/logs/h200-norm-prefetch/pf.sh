#!/bin/bash
O=$OUT/pf; mkdir -p $O
for round in 1 2; do for b in pf0 pf1b1 pf2b1 pf1b0 pf2b0; do
  build/lab4/specl-$b bench build/lab4/nb.yaml --rows 4096 --no-naive --reps 50 --csv > $O/$b-$round.csv 2> $O/$b-$round.err
  echo "$round $b $(awk -F, '$1=="kernel"{for(i=1;i<=NF;i++)h[$i]=i; next} $h["variant"]=="specl"{printf "%s %s/%s  ", $1, $h["us"], $h["copy_us"]}' $O/$b-$round.csv)"
done; done | tee $O/summary.txt
cd $O && tar czf all.tgz *.csv *.err && rm -f *.csv *.err
