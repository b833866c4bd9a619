package testbed

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// reaperScript waits for the test process to end, then kills every process whose command line
// names the bed's directory and, for a temporary bed, removes the directory. Its own command
// line does not name the directory: it comes through the environment.
const reaperScript = `trap '' INT
while kill -0 "$PARENT" 2>/dev/null; do sleep 1; done
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = "$$" ] && continue
  case "$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)" in
    *"$BED_DIR"*) kill -9 "$p" 2>/dev/null ;;
  esac
done
[ "$REMOVE" = 1 ] && rm -rf "$BED_DIR"
exit 0
`

// startReaper starts the guard that cleans up after a test process that dies without calling
// Stop, for instance when go test's timeout or a SIGKILL ends it.
func startReaper(dir string, remove bool) (*exec.Cmd, error) {
	cmd := exec.Command("/bin/sh", "-c", reaperScript)
	cmd.Env = append(os.Environ(),
		"PARENT="+strconv.Itoa(os.Getpid()),
		"BED_DIR="+dir,
		"REMOVE="+map[bool]string{true: "1", false: "0"}[remove],
	)
	// Its own process group: a Ctrl-C in the terminal must not end it before the bed ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, cmd.Start()
}

// Process is one process of the bed, with its memory use.
type Process struct {
	PID  int
	Name string
	// RSS and PeakRSS are the resident set size now and at its highest, in bytes.
	RSS, PeakRSS uint64
	// AnonRSS is the part of RSS that is the process's own memory, not pages of the files it
	// maps, such as its binary's code, which the kernel may drop and read again.
	AnonRSS uint64
}

// processesNaming lists the processes whose command line contains s.
func processesNaming(s string) []Process {
	entries, _ := filepath.Glob("/proc/[0-9]*")
	var out []Process
	for _, d := range entries {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		if p, ok := readProcess(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// readProcess reads a process's name and memory from /proc/<pid>/status.
func readProcess(pid int) (Process, bool) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return Process{}, false
	}
	defer f.Close()
	p := Process{PID: pid}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		value = strings.TrimSpace(value)
		switch key {
		case "Name":
			p.Name = value
		case "VmRSS":
			p.RSS = kib(value)
		case "VmHWM":
			p.PeakRSS = kib(value)
		case "RssAnon":
			p.AnonRSS = kib(value)
		}
	}
	return p, true
}

func kib(v string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimSuffix(v, " kB"), 10, 64)
	return n * 1024
}
