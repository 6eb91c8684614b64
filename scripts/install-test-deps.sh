#!/usr/bin/env bash
# Installs what the tests use as real parts: OpenSSH server and client (tunnel tests log in to a
# throw-away sshd on loopback), code-server + Chromium (the extension runs in a real VS Code), and
# Slurm + munge (the scheduler tests launch swarms as jobs of a private one-node Slurm).
# Does nothing that is already done.
set -euo pipefail
"$(dirname "$0")/install-code-server.sh"
"$(dirname "$0")/install-slurm.sh"
need=()
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
command -v ss >/dev/null 2>&1 || need+=(iproute2)
"$(dirname "$0")/apt-install.sh" ${need[@]+"${need[@]}"}
