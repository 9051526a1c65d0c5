#!/bin/sh
# WordCount's reducer (and combiner) for Hadoop Streaming, in shell: sums
# the counts of each run of equal words in its sorted `word<TAB>count`
# input. Words are compared as strings ("" forces it: awk would compare
# "1" and "01" as numbers) and sums printed with %.0f (exact to 2^53,
# where mawk's print would switch to exponents).
LC_ALL=C awk -F '\t' '
    {
        w = $1 ""
        if (seen && w != word) { printf "%s\t%.0f\n", word, sum; sum = 0 }
        word = w; seen = 1; sum += $2
    }
    END { if (seen) printf "%s\t%.0f\n", word, sum }
'
