package job

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/metrics"
	"github.com/everycli/every/ping"
	"github.com/everycli/every/runner"
)

// This file owns who is told of each run: the healthchecks.io pings and the
// Prometheus metrics file.

// pingFlush is how long pings still queued at the end may take.
const pingFlush = 2 * time.Second

// observers sets up the pings and the metrics file of the job: obs is nil
// when there are none. done flushes
// what is left to send; a metrics file that cannot be written is an error
// (exit 73), before anything runs.
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
