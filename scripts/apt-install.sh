#!/usr/bin/env bash
# Installs the Debian packages named as arguments (none: nothing to do), as root or through sudo;
# refreshes the package lists only when the first try fails. Shared by the test-dependency scripts.
set -euo pipefail
[ $# -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y --no-install-recommends "$@" || { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends "$@"; }
