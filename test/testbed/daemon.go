package testbed

import (
	"io"
	"os/exec"
	"syscall"
	"time"
)

// daemon is a process of a cluster that runs beside its API server until the bed stops it,
// as kube-controller-manager, kube-scheduler and kwok do.
type daemon struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startDaemon starts the binary with the arguments, its output going to log.
func startDaemon(log io.Writer, binary string, args ...string) (*daemon, error) {
	d := &daemon{cmd: exec.Command(binary, args...), done: make(chan struct{})}
	d.cmd.Stdout, d.cmd.Stderr = log, log
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = d.cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// stop ends the process, with SIGTERM and then, after stopTimeout, SIGKILL, and waits until
// it exited. A nil daemon is stopped already.
func (d *daemon) stop() {
	if d == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(stopTimeout):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}
