# Sourced by the suites' tool builds (test/*/tools/build*.sh): the cache of
# built tools outside the work tree, one directory per version.
#
# The script sets out (the cache directory of what it builds) and defines
# log and complete (whether out holds everything) before it calls
# cached_or_lock.

CACHE="${VIRTC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virtc-tools}"

# cached_or_lock WHAT LOCK prints out and ends the script when the cache
# holds WHAT; otherwise it takes the lock LOCK (one build at a time per
# version, across concurrent runs), looks again, and returns to build.
cached_or_lock() {
  if complete; then
    log "$1 cached in $out"
    echo "$out"
    exit 0
  fi
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.$2.lock"
  flock 9
  if complete; then
    log "$1 cached in $out"
    echo "$out"
    exit 0
  fi
}
