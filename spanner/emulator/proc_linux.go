package emulator

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// checkPlatform reports whether Start can work here; it can on Linux.
func checkPlatform() error { return nil }

// sysProcAttr puts gateway_main in a new process group whose id is its pid;
// the emulator_main it spawns joins that group, so Stop can find and signal
// both.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends SIGTERM, or SIGKILL if kill, to every process in the
// group. A group that is already gone is not an error: Stop checks the
// outcome by looking, not by the signal's result.
func signalGroup(pgid int, kill bool) {
	_ = syscall.Kill(-pgid, sig(kill))
}

// signalPid sends SIGTERM, or SIGKILL if kill, to one process.
func signalPid(pid int, kill bool) {
	_ = syscall.Kill(pid, sig(kill))
}

func sig(kill bool) syscall.Signal {
	if kill {
		return syscall.SIGKILL
	}
	return syscall.SIGTERM
}

// groupMembers returns the live processes of group pgid except pid exclude,
// read from /proc. Zombies are left out: they are dead, and one orphaned
// to init is reaped by it, not by us.
func groupMembers(pgid, exclude int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == exclude {
			continue
		}
		state, _, pg, ok := procStat(pid)
		if ok && pg == pgid && state != 'Z' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat reads a process's state, parent and process group from
// /proc/PID/stat; ok is false if the process is gone.
func procStat(pid int) (state byte, ppid, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name is in parentheses and may itself contain spaces or
	// parentheses, so parse from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], ppid, pgid, true
}
