#!/bin/sh
# WordCount's mapper for Hadoop Streaming, in shell: `word<TAB>1` per word.
# tr turns each run of the six C-locale whitespace bytes (the built-in
# WordCount's) into one newline; awk drops the empty lines that leaves.
# LC_ALL=C: bytes, not characters, whatever the input's encoding.
LC_ALL=C tr -s ' \t\n\r\013\014' '\n\n\n\n\n\n' | LC_ALL=C awk 'length($0) > 0 { print $0 "\t1" }'
