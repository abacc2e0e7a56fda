#!/bin/bash
# Submit a sharded sweep to Slurm: an array of N shard tasks, then a merge
# job that depends on the whole array.
#
#   deploy/slurm/submit.sh paper_configs/vof.toml 16            # full profile
#   PROFILE=quick deploy/slurm/submit.sh experiments/demo.toml 4
#
# Shard databases go to out/shards/<config name>/, the merged one to
# out/<config name>/results.db (the config's default, so `sgplab report
# CONFIG` finds it). Run from the repository root with bin/sgplab built
# (make build) or sgplab on PATH.
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: $0 CONFIG.toml N" >&2
	exit 2
fi
config=$1 n=$2
# The config's name key: its results go to out/<name>/ by default.
name=$(sed -n 's/^name *= *"\([^"]*\)".*/\1/p' "$config" | head -n 1)
name=${name:-$(basename "$config" .toml)}
export CONFIG=$config SHARDS=$n OUT=${OUT:-out/shards/$name} DB=${DB:-out/$name/results.db}
export PROFILE=${PROFILE:-full} SGPLAB=${SGPLAB:-$(command -v sgplab || echo "$PWD/bin/sgplab")}
mkdir -p out/slurm "$(dirname "$DB")"
array=$(sbatch --parsable --array="0-$((n - 1))" --export=ALL deploy/slurm/shard.sbatch)
merge=$(sbatch --parsable --dependency="afterany:${array%%;*}" --export=ALL deploy/slurm/merge.sbatch)
echo "submitted shard array $array (${n} tasks) and merge job $merge; logs in out/slurm/"
