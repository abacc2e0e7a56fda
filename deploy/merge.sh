#!/bin/sh
# Merge the shard databases of a sweep (deploy/shard.sh) into one and show
# its status: the body of the dependent Slurm merge job
# (deploy/slurm/merge.sbatch) and of the Kubernetes merge Job.
#
# Environment: CONFIG, SHARDS, OUT as for shard.sh; DB the merged database
# (default $OUT/results.db); PROFILE (default full); SGPLAB (default sgplab);
# REPORT=1 also renders the config's report from the merged database.
#
# Exit status: 0 when every run of the config is done in the merged
# database, 3 when some are not (failed, or a shard never ran: its
# database is missing and named), 1 on errors (a damaged shard: the merge
# is all-or-nothing and leaves DB as it was).
set -eu
: "${CONFIG:?merge.sh: set CONFIG to the grid file}" "${SHARDS:?merge.sh: set SHARDS}" "${OUT:?merge.sh: set OUT}"
db=${DB:-$OUT/results.db}
sgplab=${SGPLAB:-sgplab}
set --
i=0
while [ "$i" -lt "$SHARDS" ]; do
	f="$OUT/shard-$i.db"
	if [ -f "$f" ]; then
		set -- "$@" "$f"
	else
		echo "merge.sh: $f is missing: shard $i never wrote a run" >&2
	fi
	i=$((i + 1))
done
if [ "$#" -eq 0 ]; then
	echo "merge.sh: no shard database in $OUT" >&2
	exit 1
fi
"$sgplab" results merge "$@" -o "$db"
if [ "${REPORT:-0}" = 1 ]; then
	"$sgplab" report --profile "${PROFILE:-full}" --db "$db" --out "$(dirname "$db")" "$CONFIG"
fi
exec "$sgplab" status --require-done --profile "${PROFILE:-full}" --db "$db" "$CONFIG"
