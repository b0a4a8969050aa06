package job

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/internal/listen"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/metrics"
	"github.com/everycli/every/ping"
	"github.com/everycli/every/runner"
)

// This file owns who is told of each run: the healthchecks.io pings, the
// Prometheus metrics file and the --listen server.

// pingFlush is how long pings still queued at the end may take.
const pingFlush = 2 * time.Second

// observers sets up the pings, the metrics file and the --listen server of
// the job: obs is nil when there are none. done flushes what is left to
// send and stops the server; a metrics file that cannot be written, or an
// address that cannot be listened on, is an error (exit 73), before
// anything runs. Without --listen, no server is made: no listener, no
// goroutine.
func observers(st Settings, cfg *runner.Config) (obs runner.Observer, done func(), err error) {
	var all runner.Observers
	var closers []func()
	done = func() {
		for _, c := range closers {
			c()
		}
	}
	if st.MetricsFile != "" {
		if err := metrics.Check(st.MetricsFile); err != nil {
			return nil, done, metricsError(st, err)
		}
	}
	if st.Listen != "" {
		// Before anything else that runs is made: a failure leaves
		// nothing behind.
		srv := listen.New(st.Listen, cfg.Logger)
		all = append(all, srv.Job(Served(st, *cfg)))
		if err := srv.Start(); err != nil {
			return nil, done, ListenError(st.Listen, st.ListenFlag, err)
		}
		closers = append(closers, func() { _ = srv.Close() })
	}
	if st.MetricsFile != "" {
		m := metrics.New(st.MetricsFile, cfg.Name, cfg.Logger)
		all = append(all, m)
		closers = append(closers, func() { _ = m.Close() })
	}
	if st.Ping != nil {
		period := cfg.Schedule.MinGap(time.Now())
		p := ping.New(ping.Config{URL: st.Ping, Timeout: st.PingTimeout, FailAfter: st.PingFailAfter,
			NoStart: period < time.Minute, Throttle: period < 12*time.Second, Logger: cfg.Logger})
		all = append(all, p)
		closers = append(closers, func() { p.Close(pingFlush) })
	}
	if len(all) > 0 {
		obs = all
	}
	return obs, done, nil
}

// Served is the job as a --listen server shows it: its name, schedule,
// command and --max-age.
func Served(st Settings, cfg runner.Config) listen.Job {
	return listen.Job{Name: cfg.Name, Schedule: cfg.Schedule.Recorded(), Command: cfg.Command, MaxAge: st.MaxAge}
}

// Serve adds the job of cfg, built by BuildJob, to srv, the one server of
// every jobs' --listen (a standalone every's own is Build's): the server's
// observer of the job is told with the job's others.
func Serve(srv *listen.Server, st Settings, cfg *runner.Config) {
	obs := srv.Job(Served(st, *cfg))
	if cfg.Observer == nil {
		cfg.Observer = obs
		return
	}
	cfg.Observer = runner.Observers{cfg.Observer, obs}
}

// ListenError is the one line of a --listen address that cannot be
// listened on (err from listen.Server's Start): the address, why in a few
// words, and what to do; flag names where the address came from (empty:
// --listen). A standalone every's, and every jobs' own.
func ListenError(addr, flag string, err error) error {
	if flag == "" {
		flag = "--listen"
	}
	unix := strings.HasPrefix(addr, "unix:")
	var dns *net.DNSError
	var why, hint string
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		why, hint = "the address is in use, by another every's --listen or another server", "choose another port for "+flag+", or stop what listens there"
		if unix {
			why, hint = "the socket is in use", "choose another path for "+flag
		}
	case errors.Is(err, listen.ErrSocketInUse):
		why, hint = "a server answers on that socket (another every?)", "stop it, or choose another path for "+flag
	case errors.Is(err, listen.ErrNotSocket):
		why, hint = "something other than a socket is there, and every removes only a stale socket", "remove it, or choose another path for "+flag
	case errors.Is(err, fs.ErrPermission) && !unix:
		why, hint = "permission denied: a port below 1024 needs root or CAP_NET_BIND_SERVICE", "choose a port of 1024 or more for "+flag
	case errors.Is(err, fs.ErrPermission):
		why, hint = "permission denied", "fix the directory's permissions, or choose another path for "+flag
	case unix && errors.Is(err, fs.ErrNotExist):
		why, hint = "its directory does not exist", "create it (every does not), or choose another path for "+flag
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		why, hint = "this host has no such address", "give one of its own addresses, localhost, or :PORT for every interface, to "+flag
	case errors.As(err, &dns):
		why, hint = fmt.Sprintf("no such host %q", dns.Name), "give a host name or address of this host to "+flag+", or :PORT for every interface"
	default:
		cause := err
		if le := (*listen.Error)(nil); errors.As(err, &le) {
			cause = le.Err // the address is said once, above
		}
		why, hint = ui.UnwrapPath(cause).Error(), "choose another address for "+flag
	}
	return fmt.Errorf("cannot listen on %q: %s; %s", addr, why, hint)
}

// metricsError is the one line of a metrics file that cannot be written:
// the path once, why in a few words, and what to do.
func metricsError(st Settings, err error) error {
	path, flag := st.MetricsFile, st.MetricsFlag
	dir := filepath.Dir(path)
	var why, hint string
	switch {
	case strings.HasSuffix(path, "/"):
		why, hint = "it names a directory, not a file", "give a file's path, such as "+path+"every.prom"
	case errors.Is(err, metrics.ErrNotMetrics):
		why, hint = "it "+metrics.ErrNotMetrics.Error()+", which every would replace", "choose another "+flag
	case errors.Is(err, fs.ErrNotExist):
		why, hint = fmt.Sprintf("its directory %q does not exist", dir), "create it (every does not), or choose another "+flag
	case errors.Is(err, syscall.ENOTDIR):
		why, hint = fmt.Sprintf("%q is not a directory", dir), "choose another "+flag
	case errors.Is(err, fs.ErrPermission):
		why, hint = ui.UnwrapPath(err).Error(), "fix the directory's permissions, or choose another "+flag
	default:
		why, hint = ui.UnwrapPath(err).Error(), "remove what is there, or choose another "+flag
	}
	return fmt.Errorf("cannot write metrics file %q: %s; %s", path, why, hint)
}
