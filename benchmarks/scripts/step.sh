# step.sh: sourced by the suite scripts. step NAME LIMIT CMD... runs CMD
# under a time limit of LIMIT×SCALE seconds with its output in
# $OUT/NAME.log, and appends its exit status and duration to
# $OUT/steps.txt.
step() {
	local name=$1 limit=$(($2 * SCALE)) t0=$SECONDS rc
	shift 2
	timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
	rc=$?
	echo "step $name: exit $rc in $((SECONDS - t0))s (limit ${limit}s)" | tee -a "$OUT/steps.txt"
}
