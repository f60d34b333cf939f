#!/usr/bin/env bash
# Shows that the property tests catch a deliberately broken machine: builds
# xcsh-machine with its test-only `broken-steer` feature (steers delivered as soon as one
# tool call settles, mid-step) and runs the proptests crate against it; the test
# passes when the invariants fail and the failure shrinks to at most 6 inputs. The
# shrunk script is printed (--nocapture). The other property, crash and fault tests
# are compiled out under the feature.
#
# usage: scripts/check-broken-machine.sh     (PROPTEST_CASES=N for more cases)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p xcsh-proptests --features broken-steer -- --nocapture
