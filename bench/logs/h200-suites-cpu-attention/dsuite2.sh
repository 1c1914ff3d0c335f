#!/bin/bash
# attention and attention_backward device suites on the GPU, and the stub suite
O=$OUT/dsuite2; mkdir -p $O
( time timeout 300 build/specl_tests --only "attention:" ) > $O/suite-attention.txt 2>&1; grep -E "numeric:|tests |asserts|FAIL" $O/suite-attention.txt | head
( time timeout 180 build/specl_tests --only "attention_backward" ) > $O/suite-attention-backward.txt 2>&1; grep -E "numeric:|tests |asserts|FAIL" $O/suite-attention-backward.txt | head
( time timeout 90 build/specl_tests stub ) > $O/suite-stub.txt 2>&1; grep -E "tests |asserts|FAIL" $O/suite-stub.txt | head
