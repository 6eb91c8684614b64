#!/bin/bash
# Swarm Lab job template for Slurm: {{servers_per_node}} server(s) per node on {{nodes}} node(s), one per
# {{tp}} GPU(s), ports {{port_base}} and up. The job writes the hostfile itself, one line per server as
# it answers /health, so `swarm launch` (or `swarm wait`) can use the swarm while the rest still load.
#
# `swarm launch` fills the {{…}} placeholders; an #SBATCH line whose value is empty is left out.
# Copy this file into your workspace to change it, and pass it with --template.
#SBATCH --job-name={{job_name}}
#SBATCH --nodes={{nodes}}
#SBATCH --ntasks-per-node={{servers_per_node}}
#SBATCH --time={{walltime}}
#SBATCH --partition={{queue}}
#SBATCH --account={{account}}
#SBATCH --output={{job_dir}}/job-%j.out
set -u

export ENGINE={{engine}} MODEL={{model}} PORT_BASE={{port_base}} PER_NODE={{servers_per_node}} TP={{tp}}
ROLE={{role}}
HOSTFILE={{hostfile}}
VLLM_FLAGS=({{vllm_flags}})
SWARM=({{swarm}})
export no_proxy="localhost,127.0.0.1${no_proxy:+,$no_proxy}"

# One server: its GPUs are the i-th group of TP. `swarm sim` stands in for vLLM with no GPU (tests, demos).
serve() {
  local i=$1 port=$2; shift 2
  case $ENGINE in
    vllm) CUDA_VISIBLE_DEVICES=$(seq -s, $((i * TP)) $((i * TP + TP - 1))) exec vllm serve "$MODEL" --port "$port" --tensor-parallel-size "$TP" "$@" ;;
    sim) exec "$@" sim --endpoints 1 --port "$port" --model "$MODEL" ;;
    sim-llama) exec "$@" sim --engine llama --endpoints 1 --port "$port" --model "$MODEL" ;;
  esac
}
export -f serve

# The address clients use: the node's name, except `swarm sim`, which listens on loopback only.
address() { if [ "$ENGINE" = vllm ]; then echo "$1"; else echo 127.0.0.1; fi; }

mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
: > "$HOSTFILE"
pending=()
for node in "${NODES[@]}"; do
  for ((i = 0; i < PER_NODE; i++)); do
    port=$((PORT_BASE + i))
    if [ "$ENGINE" = vllm ]; then args=("${VLLM_FLAGS[@]}"); else args=("${SWARM[@]}"); fi
    srun --nodes=1 --ntasks=1 --overlap --nodelist="$node" bash -c 'serve "$@"' serve "$i" "$port" "${args[@]}" &
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
  [ ${#pending[@]} -gt 0 ] && sleep 2
done
up=$(wc -l < "$HOSTFILE")
echo "$up server(s) healthy"
# No server at all: fail the job now rather than hold its nodes until the walltime.
[ "$up" -gt 0 ] || exit 1
wait
