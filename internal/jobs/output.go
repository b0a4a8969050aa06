package jobs

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/everycli/every/runner"
)

// output passes the commands' output on line by line, each line told apart
// by its job: `name | line` on every's stream of the same name, or, with
// --log-format json, an event=output record of the log. A line is written
// whole, in one write, under one lock for all the jobs: two commands'
// lines never mix within a line.
type output struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	json           bool
	log            *slog.Logger
	buf            []byte
}

// sink returns the LineSink of job name.
func (o *output) sink(name string) runner.LineSink {
	prefix := name + " | "
	return func(stderr bool, line []byte) {
		if o.json {
			stream := "stdout"
			if stderr {
				stream = "stderr"
			}
			// Past the log's level: -q and --log-level warn quiet every's
			// own lines, never the commands' output, as in text.
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "output", 0)
			r.Add("event", runner.EventOutput, "job", name, "stream", stream, "line", string(line))
			_ = o.log.Handler().Handle(context.Background(), r)
			return
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		w := o.stdout
		if stderr {
			w = o.stderr
		}
		o.buf = append(append(append(o.buf[:0], prefix...), line...), '\n')
		_, _ = w.Write(o.buf) // a reader gone away loses the output, never the job
	}
}
