#!/usr/bin/env bash
# What a checkpoint costs and how often to take one (docs/cli.md, "How often to checkpoint"):
# two checkpoint steps of 2 ranks (4 MiB each, written with write() and waited for at
# exit), a second apart. Then from the running forwarder:
#  - stats counts 2 measured checkpoints of exactly the bytes written per step, a blocked
#    time that is positive and no longer than the slowest step took as a whole (the
#    library and the forwarder together never count more than the processes lived);
#  - stats --mtbf 24h prints the advice with and without ckptfwd; --json's "advice" holds
#    Daly's interval and the model's time lost for C = ckpt_blocked_s, recomputed here
#    from the formulas; CKPTFWD_MTBF works the same; a bad duration is a usage error (2)
#    naming the option or variable;
#  - stats --watch 0.2 --count 3 into a file prints 3 tables with time lines and no
#    terminal codes; with --json 3 JSON lines; on a terminal (script(1)) each table clears
#    the screen first; Ctrl-C (SIGINT) ends a watch with status 0;
#  - after the forwarder's exit, stats --file --mtbf prints the advice of its record.
source "$(dirname "$0")/lib.sh"
ckf_init "$@"
ckf_std_dirs
CAPTURE="$CAP/step_*/r*.bin"
export CKPTFWD_IDLE_EXIT=60 # stays up for the queries; stopped explicitly below

step_secs=()
for n in 1 2; do
  mkdir -p "$CAP/step_$n"
  t0=$(date +%s.%N)
  for r in 0 1; do
    PMI_RANK=$r with_lib "$WRITER" big "$CAP/step_$n/r$r.bin" 4M --rank $r &
  done
  wait
  step_secs+=("$(echo "$(date +%s.%N) - $t0" | bc)")
  sleep 1
done
echo "steps took ${step_secs[*]} s"

"$CLI" stats --json >"$T/stats.json" 2>"$T/err" || fail "stats --json: $(cat "$T/err")"
/usr/bin/python3 - "$T/stats.json" "${step_secs[@]}" <<'PY' || fail "the measured checkpoint cost is wrong (above)"
import json, sys
s = json.load(open(sys.argv[1]))
longest = max(float(x) for x in sys.argv[2:])
assert s["checkpoints_measured"] == 2, f"checkpoints_measured {s['checkpoints_measured']}, want 2"
assert s["ckpt_bytes"] == 2 * 4 * 2**20, f"ckpt_bytes {s['ckpt_bytes']}, want the 8 MiB of a step"
assert 0 < s["ckpt_blocked_s"] <= longest, f"ckpt_blocked_s {s['ckpt_blocked_s']} not in (0, {longest}]"
assert s["ckpt_durable_s"] >= 0
print(f"C = {s['ckpt_blocked_s']} s, durable after {s['ckpt_durable_s']} s; containers {s['bytes_stored']} bytes in {s['time_write_s']} s")
PY
ok "2 checkpoints measured: their bytes, a blocked time within what the steps took"

"$CLI" stats --mtbf 24h >"$T/advice.txt" 2>"$T/err" || fail "stats --mtbf 24h: $(cat "$T/err")"
grep -q "with ckptfwd: *checkpoint every" "$T/advice.txt" && grep -q "without ckptfwd: *checkpoint every" "$T/advice.txt" ||
  fail "stats --mtbf 24h prints no advice: $(tail -8 "$T/advice.txt")"
"$CLI" stats --json --mtbf 24h >"$T/advice.json" || fail "stats --json --mtbf 24h failed"
CKPTFWD_MTBF=1d "$CLI" stats --json >"$T/advice-env.json" || fail "CKPTFWD_MTBF=1d stats --json failed"
/usr/bin/python3 - "$T/advice.json" "$T/advice-env.json" <<'PY' || fail "the advice is not Daly's interval for the measured C (above)"
import json, math, sys
for path in sys.argv[1:]:
    s = json.load(open(path))
    a, m = s["advice"], 86400.0
    assert a["mtbf_s"] == m, a
    for side, c in (("with_ckptfwd", s["ckpt_blocked_s"]),
                    ("without_ckptfwd", s["ckpt_bytes"] / (s["bytes_stored"] / s["time_write_s"]))):
        e = a[side]
        x = c / (2 * m)
        t = math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c if c < 2 * m else m
        lost = 1 - t / (m * math.expm1((t + c) / m))
        assert math.isclose(e["checkpoint_s"], c, rel_tol=1e-4), (side, e, c)
        assert math.isclose(e["interval_s"], t, rel_tol=1e-4), (side, e, t)
        assert math.isclose(e["lost_fraction"], lost, rel_tol=1e-4), (side, e, lost)
    print(f"{path}: every {a['with_ckptfwd']['interval_s']:.0f} s with ckptfwd, "
          f"{a['without_ckptfwd']['interval_s']:.0f} s without")
PY
for bad in "--mtbf 3x" "--mtbf"; do
  set +e
  # shellcheck disable=SC2086
  "$CLI" stats $bad >"$T/bad.out" 2>"$T/bad.err"
  rc=$?
  set -e
  [[ $rc -eq 2 ]] && grep -q -- "--mtbf" "$T/bad.err" || fail "stats $bad: exit $rc, $(cat "$T/bad.err")"
done
set +e
CKPTFWD_MTBF=soon "$CLI" stats >"$T/bad.out" 2>"$T/bad.err"
rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q "CKPTFWD_MTBF: 'soon' is not a duration" "$T/bad.err" || fail "CKPTFWD_MTBF=soon: exit $rc, $(cat "$T/bad.err")"
ok "advice with and without ckptfwd is Daly's for the measured and the estimated C; bad durations are usage errors"

"$CLI" stats --watch 0.2 --count 3 >"$T/watch.txt" 2>"$T/err" || fail "stats --watch: $(cat "$T/err")"
[[ $(grep -c "^forwarder stats" "$T/watch.txt") -eq 3 && $(grep -c "^--- [0-9:]* (ckptfwd stats, every 0.2 s)" "$T/watch.txt") -eq 3 ]] ||
  fail "stats --watch 0.2 --count 3 into a file: not 3 tables with time lines: $(head -5 "$T/watch.txt")"
! grep -q $'\033' "$T/watch.txt" || fail "stats --watch into a file printed terminal codes"
"$CLI" stats --watch 0.2 --count 3 --json >"$T/watch.json" || fail "stats --watch --json failed"
/usr/bin/python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; assert len(l)==3 and all(r["source"]=="forwarder" for r in l), l' "$T/watch.json" ||
  fail "stats --watch --count 3 --json: not 3 JSON lines"
script -qefc "$CLI stats --watch 0.2 --count 3" /dev/null >"$T/watch.tty" 2>&1 || fail "stats --watch on a terminal failed: $(tail -3 "$T/watch.tty")"
[[ $(grep -o $'\033\\[H\033\\[2J' "$T/watch.tty" | wc -l) -eq 3 ]] && grep -q "Ctrl-C to stop" "$T/watch.tty" ||
  fail "stats --watch on a terminal does not clear and redraw 3 times: $(head -c 300 "$T/watch.tty" | cat -v)"
set +e
timeout -s INT --preserve-status 1.5 "$CLI" stats --watch 0.2 >"$T/watch-int.txt" 2>&1
rc=$?
set -e
n=$(grep -c "^forwarder stats" "$T/watch-int.txt")
[[ $rc -eq 0 && $n -ge 2 ]] || fail "stats --watch stopped by SIGINT: exit $rc (want 0) after $n tables"
ok "stats --watch: tables into a file, JSON lines, redraws on a terminal, Ctrl-C ends it"

mapfile -t pids < <(session_forwarders)
[[ ${#pids[@]} -eq 1 ]] || fail "expected one forwarder for the session, found ${#pids[@]}"
kill -TERM "${pids[0]}"
wait_for '[[ -z "$(session_forwarders)" ]]' 15 || fail "the forwarder did not exit on SIGTERM"
"$CLI" stats --file "$CKPTFWD_STATS_FILE" --mtbf 24h >"$T/file.txt" 2>"$T/err" || fail "stats --file --mtbf: $(cat "$T/err")"
grep -q "checkpoints measured   2" "$T/file.txt" && grep -q "with ckptfwd: *checkpoint every" "$T/file.txt" ||
  fail "stats --file --mtbf 24h shows no advice: $(tail -10 "$T/file.txt")"
ok "the stats file's forwarder record gives the same advice"
