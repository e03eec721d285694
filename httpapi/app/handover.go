package app

import (
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
)

// Handing the listening socket over. A restore re-execs the process
// (restore.go); the new image adopts the socket the old one listened on
// instead of binding again, as a service started by systemd adopts the
// sockets named by LISTEN_FDS and LISTEN_PID. So the address never
// changes (a server bound to port 0 keeps its port) and the connections
// made while the process restarts wait in the socket's backlog, to be
// accepted once the new image serves, instead of being refused.
//
// The old image dups the listener's descriptor before the http.Server
// closes the listener, clears FD_CLOEXEC on the dup just before the exec
// (every other descriptor Go opens is close-on-exec, so only 0, 1, 2 and
// the socket survive the exec), and adds two variables to the environment
// of the exec only: envListenFD, the dup's number, and envListenPID, the
// PID it is meant for. The exec keeps the PID, so the new image trusts the
// descriptor only if envListenPID is its own PID, and only if it is not
// close-on-exec (it was inherited, not opened by this image). It removes
// both variables from its environment at once, so that neither a later
// restore nor a child process sees a stale one.
const (
	envListenFD  = "STRONGBOX_LISTEN_FD"
	envListenPID = "STRONGBOX_LISTEN_PID"
)

// handoverEnv returns env without any handover variables, plus those that
// hand the descriptor fd to the image this process execs.
func handoverEnv(env []string, fd int) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, envListenFD+"=") && !strings.HasPrefix(kv, envListenPID+"=") {
			out = append(out, kv)
		}
	}
	return append(out, envListenFD+"="+strconv.Itoa(fd), envListenPID+"="+strconv.Itoa(os.Getpid()))
}

// adoptListener returns the listening socket the image before this one
// handed over, or nil if there is none, and removes the handover
// variables from the environment either way. Variables that are set but
// name no usable socket are logged as a warning and ignored: the caller
// binds its address as usual.
func adoptListener(log *slog.Logger) net.Listener {
	fd, okFD := os.LookupEnv(envListenFD)
	pid, okPID := os.LookupEnv(envListenPID)
	if !okFD && !okPID {
		return nil
	}
	os.Unsetenv(envListenFD)
	os.Unsetenv(envListenPID)
	ln, err := adopt(fd, pid)
	if err != nil {
		log.Warn("ignoring the listening socket handed over by the environment; binding the address instead",
			envListenFD, fd, envListenPID, pid, "err", err)
		return nil
	}
	log.Info("adopted the listening socket handed over by the previous image", "addr", ln.Addr())
	return ln
}
