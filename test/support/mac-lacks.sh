#!/bin/sh
# Runs "$@" with what a Mac lacks taken away (vitest.config.ts starts it for MINO_TEST_MAC_LACKS=1):
# in a mount namespace of its own (as root), /proc is an empty tmpfs and every util-linux flock
# program is /dev/null. The real /proc stays readable at $MINO_TEST_PROC, for tests to observe
# processes with; Mino's code never names that path. Mounts end with the namespace.
set -eu
if [ "$(id -u)" != 0 ]; then
  echo "mac-lacks.sh: the mode needs root (a mount namespace of its own)" >&2
  exit 2
fi
if [ "${MINO_TEST_MAC_LACKS_INSIDE:-}" != 1 ]; then
  MINO_TEST_MAC_LACKS_INSIDE=1 exec unshare --mount --propagation private /bin/sh "$0" "$@"
fi
real=/run/mino-real-proc
mkdir -p "$real"
mount --bind /proc "$real"
mount -t tmpfs -o ro,size=4k,mode=0555 mino-no-proc /proc
for flock in /usr/bin/flock /bin/flock /usr/sbin/flock /sbin/flock /usr/local/bin/flock; do
  if [ -e "$flock" ]; then mount --bind /dev/null "$flock"; fi
done
MINO_TEST_PROC="$real" exec "$@"
