#!/bin/bash
O=$OUT/dsuite3; mkdir -p $O
( time timeout 140 build/specl_tests --only "attention: odd" ) > $O/suite-attention-odd.txt 2>&1; grep -E "numeric:|tests |asserts|FAIL" $O/suite-attention-odd.txt | head
( time timeout 60 build/specl_tests --only "attention_backward: odd" ) > $O/suite-abw-odd.txt 2>&1; grep -E "numeric:|tests |asserts|FAIL" $O/suite-abw-odd.txt | head
