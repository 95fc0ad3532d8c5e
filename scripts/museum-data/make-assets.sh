#!/usr/bin/env bash
# Writes raw/museum's assets (small generated images, committed) and the broken ones of Tests/Fixtures/museum-broken
# with Pillow (scripts/oracles/images.py, run by the oracle environment: scripts/oracles/install first). Rerunning it
# rewrites the same files.
set -euo pipefail
cd "$(dirname "$0")/../.."
python=$(scripts/oracles/install)
write() { "$python" scripts/oracles/images.py write "$1" "$2" "$3" "$4"; }
assets=raw/museum/assets
mkdir -p "$assets/panoramas" "$assets/exhibits" "$assets/images"
# Equirectangular panoramas: width = 2 × height.
for name in astronomy lobby physics technology; do write "$assets/panoramas/$name.jpg" JPEG 256 128; done
for name in antikythera enigma foucault newton-cradle talos telescope tesla-coil van-de-graaff; do
  write "$assets/exhibits/$name.jpg" JPEG 120 90
done
write "$assets/images/planetarium.jpg" JPEG 160 100
write "$assets/images/workshop.jpg" JPEG 160 100
# Broken: a panorama that is not 2:1, and one cut short after 300 bytes.
broken=Tests/Fixtures/museum-broken/assets/panoramas
mkdir -p "$broken"
write "$broken/lobby.jpg" JPEG 240 160
write /tmp/kiln-museum-whole.jpg JPEG 256 128
head -c 300 /tmp/kiln-museum-whole.jpg > "$broken/physics.jpg"
rm -f /tmp/kiln-museum-whole.jpg
