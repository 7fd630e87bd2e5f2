#!/usr/bin/env bash
# Ctrl-C typed at a terminal stops the shell script that runs a tool, not
# only the tool. bash waits for its foreground command, and goes on to the
# next line when the command exits on its own, even with 130; it stops only
# when the command died of the SIGINT (it then reports 130 the same way).
# So each tool, once it has said what it leaves and cleaned up, ends by the
# signal (cmd/common.hpp, finish).
#
# Each case runs `TOOL ...; echo "went on"` as a bash script on a
# pseudo-terminal (python3's pty), with the tool waiting: on a pipe that
# never ends (extwb put, mkext4 -d -, mkfat -d -, fsimg restore -) or in a
# 30-second time-based run (ddbench). Once the tool's SIGINT handler is in
# place (or, for one that reads before it installs it, a second after it
# starts waiting), ^C is typed at the terminal, as an admin would. The
# script must stop before the next line, by SIGINT (status 130); the tool
# must say it was interrupted where its handler took the signal, and leave
# its target as it was.
. "$(dirname "$0")/lib.sh"
need python3 mkfs.fat
export SOURCE_DATE_EPOCH=1700000000
truncate -s 64M "$T/e.img"; "$BUILD/cmd/mkext4" -q "$T/e.img"
truncate -s 64M "$T/f.img"
truncate -s 64M "$T/t.img"
truncate -s 64M "$T/r.img"
truncate -s 16M "$T/d.img"

# ctrl_c NAME TARGET COMMAND: COMMAND (a line of bash) is the tool, reading
# a FIFO nobody writes; TARGET must be as it was.
ctrl_c() {
  local name=$1 target=$2 cmd=$3 before
  before=$(sha "$target")
  cat > "$T/$name.sh" <<EOF
exec 7<>"$T/$name.fifo"
$cmd < "$T/$name.fifo" 2> "$T/$name.err"
echo "went on after the tool, status \$?"
EOF
  mkfifo "$T/$name.fifo"
  python3 - "$T/$name.sh" "$name" > "$T/$name.out" <<'PY' || fail "$name: $(cat "$T/$name.out") $(cat "$T/$name.err")"
import os, pty, select, sys, time

script, name = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv("/bin/bash", ["bash", script])

def tool_waiting():
    # The tool is the script's child: wait until it sleeps (on the pipe, or
    # between its reads) and, if it takes SIGINT itself, until its handler
    # is in place (SigCgt bit 1). Returns None while it is not there yet.
    for child in open("/proc/%d/task/%d/children" % (pid, pid)).read().split():
        try:
            status = dict(l.split(":", 1) for l in open("/proc/%s/status" % child).read().splitlines())
        except OSError:
            continue
        if int(status["SigCgt"], 16) & 2:
            return True
        if status["State"].split()[0] == "S":
            return False
    return None

out = b""
deadline = time.time() + 60
handler = None
while handler is None or (not handler and time.time() < settle):
    if time.time() > deadline:
        sys.exit("%s: the tool never started waiting" % name)
    was, handler = handler, tool_waiting()
    if was is None and handler is not None:
        settle = time.time() + 1  # a tool that reads before it installs its handler gets a second
    time.sleep(0.05)
time.sleep(0.2)
os.write(fd, b"\x03")  # ^C, as typed: the terminal sends SIGINT to the foreground group
while True:
    r, _, _ = select.select([fd], [], [], 30)
    if not r:
        sys.exit("%s: still running 30 s after ^C" % name)
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
text = out.decode(errors="replace")
if "went on" in text:
    sys.exit("%s: the script went on after ^C: %r" % (name, text))
if not os.WIFSIGNALED(status) or os.WTERMSIG(status) != 2:
    sys.exit("%s: the script ended with status %#x, not by SIGINT" % (name, status))
print("%s: the script stopped at the tool%s" % (name, "" if handler else " (^C came before its handler: the default action)"))
PY
  if grep -q "default action" "$T/$name.out"; then
    [ ! -s "$T/$name.err" ] || fail "$name: killed before its handler, yet it said: $(cat "$T/$name.err")"
    pass "$(cat "$T/$name.out")"
  else
    grep -q interrupted "$T/$name.err" || fail "$name: the tool did not say it was interrupted: $(cat "$T/$name.err")"
    pass "$(cat "$T/$name.out"); the tool said: $(grep interrupted "$T/$name.err" | head -1)"
  fi
  [ "$(sha "$target")" = "$before" ] || fail "$name: ^C changed $target"
}

ctrl_c extwb "$T/e.img" "$BUILD/cmd/extwb put $T/e.img /x"
ctrl_c mkext4 "$T/t.img" "$BUILD/cmd/mkext4 -q -d - $T/t.img"
ctrl_c mkfat "$T/f.img" "$BUILD/cmd/mkfat -q -d - $T/f.img"
ctrl_c fsimg "$T/r.img" "$BUILD/cmd/fsimg restore -q - $T/r.img"
ctrl_c ddbench "$T/d.img" "$BUILD/cmd/ddbench --rw read --time_based --runtime 30 --bs 4K $T/d.img"
