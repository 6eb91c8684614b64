#!/bin/bash
# Swarm Lab job template for ALCF Aurora (PBS Pro), after ALCF's vLLM guide: {{servers_per_node}} vLLM
# server(s) per node on {{nodes}} node(s), each on {{tp}} tile(s) (an Aurora node has 6 GPUs of 2 tiles:
# 12 / TP servers at most), ports {{port_base}} and up. The job writes the hostfile itself, one line per
# server as it answers /health, so `swarm launch` (or `swarm wait`) can use the swarm while the rest load.
#
# `swarm launch` fills the {{…}} placeholders; a #PBS line whose value is empty is left out.
# Copy this file into your workspace to change it (filesystems, modules, weights), and pass it with --template.
#PBS -N {{job_name}}
#PBS -l select={{nodes}}
#PBS -l place=scatter
#PBS -l walltime={{walltime}}
#PBS -l filesystems=flare:home
#PBS -q {{queue}}
#PBS -A {{account}}
#PBS -j oe
#PBS -o {{job_dir}}/job.out
set -u

export ENGINE={{engine}} MODEL={{model}} PORT_BASE={{port_base}} PER_NODE={{servers_per_node}} TP={{tp}}
ROLE={{role}}
HOSTFILE={{hostfile}}
VLLM_FLAGS=({{vllm_flags}})
SWARM=({{swarm}})

if [ "$ENGINE" = vllm ]; then
  module load frameworks
  # Preloaded weights of common open models (ALCF guide, "Access Model Weights").
  export HF_HOME=/flare/datasets/model-weights HF_DATASETS_CACHE=/flare/datasets/model-weights HF_MODULES_CACHE=/flare/datasets/model-weights
  export RAY_TMPDIR=/tmp TMPDIR=/tmp
fi
# Each tile is a device of its own, so a server's TP tiles are named one by one.
export ZE_FLAT_DEVICE_HIERARCHY=FLAT
export no_proxy="localhost,127.0.0.1${no_proxy:+,$no_proxy}"

# One server on this node: tiles i*TP … i*TP+TP-1; vLLM's own traffic on the high-speed network (hsn).
serve() {
  local i=$1 port=$2; shift 2
  export ZE_AFFINITY_MASK=$(seq -s, $((i * TP)) $((i * TP + TP - 1)))
  export VLLM_HOST_IP=$(getent hosts "$(hostname).hsn.cm.aurora.alcf.anl.gov" | awk '{ print $1 }' | sort | head -n 1)
  case $ENGINE in
    vllm) exec vllm serve "$MODEL" --port "$port" --tensor-parallel-size "$TP" --distributed-executor-backend mp "$@" ;;
    sim) exec "$@" sim --endpoints 1 --port "$port" --model "$MODEL" ;;
    sim-llama) exec "$@" sim --engine llama --endpoints 1 --port "$port" --model "$MODEL" ;;
  esac
}
export -f serve

# The address clients use: the node's name, except `swarm sim`, which listens on loopback only.
address() { if [ "$ENGINE" = vllm ]; then echo "$1"; else echo 127.0.0.1; fi; }

mapfile -t NODES < <(cut -d. -f1 "$PBS_NODEFILE" | uniq)
: > "$HOSTFILE"
pending=()
for node in "${NODES[@]}"; do
  for ((i = 0; i < PER_NODE; i++)); do
    port=$((PORT_BASE + i))
    if [ "$ENGINE" = vllm ]; then args=("${VLLM_FLAGS[@]}"); else args=("${SWARM[@]}"); fi
    mpiexec -n 1 -ppn 1 --hosts "$node" bash -c 'serve "$@"' serve "$i" "$port" "${args[@]}" &
    pending+=("$(address "$node") $port $!")
  done
done

# One writer for the hostfile: a line per server once it is healthy, written whole. A server whose
# process ended before it answered is given up (its log is in the job's output).
while [ ${#pending[@]} -gt 0 ]; do
  waiting=()
  for server in "${pending[@]}"; do
    read -r host port pid <<< "$server"
    if curl --noproxy '*' -sf -m 5 -o /dev/null "http://$host:$port/health"; then
      printf '%s\t%s\trole=%s\tmodel=%s\n' "$host" "$port" "$ROLE" "$MODEL" >> "$HOSTFILE"
    elif kill -0 "$pid" 2> /dev/null; then
      waiting+=("$server")
    else
      echo "server $host:$port exited before it was healthy"
    fi
  done
  pending=("${waiting[@]+"${waiting[@]}"}")
  [ ${#pending[@]} -gt 0 ] && sleep 5
done
up=$(wc -l < "$HOSTFILE")
echo "$up server(s) healthy"
# No server at all: fail the job now rather than hold its nodes until the walltime.
[ "$up" -gt 0 ] || exit 1
wait
