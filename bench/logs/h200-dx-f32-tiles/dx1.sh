#!/bin/bash
O=$OUT/dx1; mkdir -p $O
build/specl bench bench/lab/dx-f32-tiles.yaml --rows 4096 --no-naive --reps 10 --csv > $O/tiles.csv 2> $O/tiles.err
echo rc=$?
awk -F, '$1=="kernel"{for(i=1;i<=NF;i++)h[$i]=i; next} $h["variant"]=="specl"{print $1, $h["us"], $h["err"]}' $O/tiles.csv
tail -3 $O/tiles.err
