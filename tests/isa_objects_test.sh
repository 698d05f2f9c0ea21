#!/usr/bin/env bash
# Kernel files compiled with an ISA's flags must not emit inline code under a
# name other files also use: the linker keeps one copy per name for the whole
# library (the first it meets), so portable code could run AVX-512
# instructions on a CPU without them (see src/core/isa_namespace.h). Checks the
# library's objects:
#   1. every weak function an ISA-flagged object defines sits in an ISA
#      namespace (simd::avx2, isa_avx512, ...), and
#   2. no weak function is defined by objects compiled with different flags.
# Usage: isa_objects_test.sh NM OBJECT_LIST_FILE
set -euo pipefail
nm_tool=$1
list=$2
isa_suffix='_(amx|avx512bf16|avx512vnni|avx512|avxvnni|avx2)\.cc\.o$'
isa_namespace='::(isa_)?(amx|avx512bf16|avx512vnni|avx512|avxvnni|avx2)(::|_)'

table=$(mktemp)
trap 'rm -f "$table"' EXIT
objects=0
while IFS= read -r obj; do
  [ -n "$obj" ] || continue
  objects=$((objects + 1))
  flags=$(basename "$obj" | grep -oE "$isa_suffix" | sed -E 's/^_//; s/\.cc\.o$//' || true)
  "$nm_tool" -C --defined-only "$obj" |
    awk -v f="${flags:-portable}" -v o="$(basename "$obj")" \
      '$2 == "W" { $1 = ""; $2 = ""; sub(/^  /, ""); print f "\t" o "\t" $0 }' >>"$table"
done <"$list"
if [ "$objects" -lt 10 ]; then
  echo "only $objects objects listed in $list" >&2
  exit 1
fi

status=0
outside=$(awk -F'\t' -v ns="$isa_namespace" '$1 != "portable" && $3 !~ ns' "$table" | sort -u)
if [ -n "$outside" ]; then
  echo "weak functions of ISA-flagged objects outside an ISA namespace (flags, object, symbol):"
  echo "$outside"
  status=1
fi
shared=$(awk -F'\t' '{ if (!($3 in first)) first[$3] = $1; else if (first[$3] != $1) print $3 }' \
  "$table" | sort -u)
if [ -n "$shared" ]; then
  echo "weak functions defined by objects compiled with different flags:"
  echo "$shared"
  status=1
fi
if [ "$status" = 0 ]; then
  echo "$objects objects, $(awk -F'\t' '$1 != "portable"' "$table" | wc -l) weak functions in ISA objects: all private to their flags"
fi
exit $status
