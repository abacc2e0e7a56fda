#!/bin/sh
# One shard of a sweep: the body of a Slurm array task (deploy/slurm/shard.sbatch)
# or of a Kubernetes Indexed Job pod (deploy/kubernetes/sweep-job.yaml).
#
# Environment:
#   CONFIG   grid file, e.g. paper_configs/vof.toml              (required)
#   SHARDS   number of shards n                                (default: $SLURM_ARRAY_TASK_COUNT)
#   OUT      directory of the shard databases shard-<i>.db       (required)
#   the shard index i: SHARD_INDEX, else SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX
#   PROFILE  full or quick (default full); SGPLAB the binary (default sgplab);
#   SGPLAB_RUN_FLAGS extra flags for sgplab run, e.g. "--time-limit 2h".
#
# Exit status is sgplab run's: 0 all runs of the shard done, 3 some failed
# (the merge job still runs: it depends on afterany / runs regardless).
set -eu
index=${SHARD_INDEX:-${SLURM_ARRAY_TASK_ID:-${JOB_COMPLETION_INDEX:-}}}
if [ -z "$index" ]; then
	echo "shard.sh: no shard index: set SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or SHARD_INDEX" >&2
	exit 2
fi
shards=${SHARDS:-${SLURM_ARRAY_TASK_COUNT:-}}
: "${CONFIG:?shard.sh: set CONFIG to the grid file}" "${shards:?shard.sh: set SHARDS to the number of shards}" "${OUT:?shard.sh: set OUT to the shard database directory}"
mkdir -p "$OUT"
# SGPLAB_RUN_FLAGS is split on spaces on purpose (several flags).
# shellcheck disable=SC2086
exec "${SGPLAB:-sgplab}" run --profile "${PROFILE:-full}" --shard "$index/$shards" \
	--db "$OUT/shard-$index.db" ${SGPLAB_RUN_FLAGS:-} "$CONFIG"
