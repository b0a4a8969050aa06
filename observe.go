package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/everycli/every/metrics"
	"github.com/everycli/every/ping"
	"github.com/everycli/every/runner"
)

// This file owns who is told of each run: the healthchecks.io pings and the
// Prometheus metrics file.

// pingFlush is how long pings still queued at the end may take.
const pingFlush = 2 * time.Second

// observers sets up the pings and the metrics file of the job. done flushes
// what is left to send; a metrics file that cannot be written is an error
// (exit 73), before anything runs.
func observers(st settings, cfg *runner.Config) (done func(), err error) {
	var obs runner.Observers
	var closers []func()
	done = func() {
		for _, c := range closers {
			c()
		}
	}
	if st.metricsFile != "" {
		if err := metrics.Check(st.metricsFile); errors.Is(err, metrics.ErrNotMetrics) {
			return done, fmt.Errorf("cannot write metrics file %q: it %w, which every would replace; choose another %s", st.metricsFile, metrics.ErrNotMetrics, st.metricsFlag)
		} else if err != nil {
			return done, fmt.Errorf("cannot write %w", err)
		}
		m := metrics.New(st.metricsFile, cfg.Name, cfg.Logger)
		obs = append(obs, m)
		closers = append(closers, func() { _ = m.Close() })
	}
	if st.ping != nil {
		period := cfg.Schedule.MinGap(time.Now())
		p := ping.New(ping.Config{URL: st.ping, Timeout: st.pingTimeout, FailAfter: st.pingFailAfter,
			NoStart: period < time.Minute, Throttle: period < 12*time.Second, Logger: cfg.Logger})
		obs = append(obs, p)
		closers = append(closers, func() { p.Close(pingFlush) })
	}
	if len(obs) > 0 {
		cfg.Observer = obs
	}
	return done, nil
}
