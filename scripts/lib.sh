# Shared by the scripts (sourced, not run): where the kiln binaries are, and a timed command.
#
#   kiln_bin_dir CONFIGURATION [PRODUCT ...]
#       Prints the folder holding the built products: $KILN_BIN when set (nothing is built), otherwise the products
#       are built with `swift build -c CONFIGURATION` (extra flags from the array kiln_build_flags, e.g. a scratch
#       path) and SwiftPM's folder for that configuration is printed.
#   timed FILE COMMAND [ARG ...]
#       Runs COMMAND under /usr/bin/time and writes one line to FILE: wall seconds, user seconds, system seconds,
#       peak resident memory (KB). Its exit status is COMMAND's.
#   read_timed FILE
#       Prints that line's fields as `read -r wall user system memory` takes them.

kiln_build_flags=("${kiln_build_flags[@]+"${kiln_build_flags[@]}"}")

kiln_bin_dir() {
  local configuration="$1"; shift
  if [ -n "${KILN_BIN:-}" ]; then
    (cd "$KILN_BIN" && pwd)
    return
  fi
  local product
  for product in "$@"; do
    swift build -c "$configuration" "${kiln_build_flags[@]+"${kiln_build_flags[@]}"}" --product "$product" --quiet >&2
  done
  [ $# -gt 0 ] || swift build -c "$configuration" "${kiln_build_flags[@]+"${kiln_build_flags[@]}"}" --quiet >&2
  swift build -c "$configuration" "${kiln_build_flags[@]+"${kiln_build_flags[@]}"}" --show-bin-path
}

timed() {
  local file="$1"; shift
  /usr/bin/time -f "%e %U %S %M" -o "$file" "$@"
}

read_timed() {
  tail -1 "$1"
}
