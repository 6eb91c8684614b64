#!/usr/bin/env bash
# Installs Debian's Slurm (slurm-wlm: slurmctld, slurmd and the client commands) and munge, for the
# scheduler tests: test/helpers/slurm.ts starts a private one-node cluster on loopback from them
# (shared notes, testing-offline §"A real Slurm on loopback"). Only installs: the tests run their own
# daemons on private ports and files, never the packages' system services.
# Does nothing that is already done. About 25 s.
set -euo pipefail
need=()
{ command -v slurmctld && command -v slurmd && command -v sbatch; } >/dev/null 2>&1 || need+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || need+=(munge)
"$(dirname "$0")/apt-install.sh" ${need[@]+"${need[@]}"}
