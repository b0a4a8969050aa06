package runner

// This file owns the command's output when a feature needs it (the tail for
// --quiet-success, hooks, pings): two pipes instead of every's own
// descriptors, and one copier per stream that passes each read on at once
// and keeps it in the run's Tail.

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// copyBuf is how much one read of the command's output takes: a pipe's
// default capacity is 64 KiB, so two reads empty a full one.
const copyBuf = 32 << 10

// drainIdle is how long, once the command's tree is dead and swept, a copier
// waits for more output before it gives up on a stream: only a process out of
// every's reach (one that got the pipe's write end passed over a socket, or
// sits in another pid namespace) can still hold the pipe open then, and it
// must not keep the run from ending.
const drainIdle = 500 * time.Millisecond

// output takes a command's stdout and stderr through pipes.
type output struct {
	tail   *Tail // nil: none kept
	logger *slog.Logger
	// lines, when set, takes each stream line by line instead of dst.
	lines [2]*lineSplitter
	// dst is where each stream is passed on, nil when held: every's own
	// stdout and stderr.
	dst      [2]*os.File
	r, w     [2]*os.File // read ends (every's), write ends (the child's)
	done     sync.WaitGroup
	draining atomic.Bool // the command's tree is gone: reads are bounded
	gaveUp   sync.Once
}

// streamName names the two streams, by index.
var streamName = [2]string{"stdout", "stderr"}

// pipeOutput gives cmd two pipes for its stdout and stderr, whose output goes
// to tail (if any) and, unless hold, on to every's own stdout and stderr, or
// line by line to lines. start must follow cmd.Start, whether or not it
// succeeded.
func pipeOutput(cmd *exec.Cmd, tail *Tail, hold bool, lines LineSink, logger *slog.Logger) (*output, error) {
	o := &output{tail: tail, logger: logger}
	switch {
	case hold:
	case lines != nil:
		for i := range 2 {
			o.lines[i] = &lineSplitter{stderr: i == 1, sink: lines, max: MaxLine}
		}
	default:
		o.dst = [2]*os.File{os.Stdout, os.Stderr}
	}
	for i := range 2 {
		r, w, err := os.Pipe()
		if err != nil {
			o.closeAll()
			return nil, fmt.Errorf("create a pipe for the command's %s: %w", streamName[i], err)
		}
		o.r[i], o.w[i] = r, w
	}
	// *os.File: exec hands them to the child as they are, with no copying
	// goroutine of its own.
	cmd.Stdout, cmd.Stderr = o.w[0], o.w[1]
	return o, nil
}

// start closes every's copy of the write ends, so that the copiers see the
// end of the output once the command's tree has closed its own, and starts
// them; when the command did not start, it closes everything.
func (o *output) start(started bool) {
	for _, w := range o.w {
		_ = w.Close()
	}
	if !started {
		o.closeAll()
		return
	}
	o.done.Add(2)
	for i := range 2 {
		go o.copy(i)
	}
}

func (o *output) closeAll() {
	for _, f := range append(o.r[:], o.w[:]...) {
		if f != nil {
			_ = f.Close()
		}
	}
}

// copy copies stream i until its end: each read at once to every's own
// stream, as the command would have written it there itself, and into the
// tail. A failed write to every's stream (its reader went away: EPIPE) loses
// nothing else: the pipe is drained to its end all the same, or the command
// would block on a full pipe.
func (o *output) copy(i int) {
	defer o.done.Done()
	defer o.r[i].Close()
	r, dst, lines, stderr := o.r[i], o.dst[i], o.lines[i], i == 1
	if lines != nil {
		defer lines.flush() // the unfinished last line
	}
	buf := make([]byte, copyBuf)
	for {
		if o.draining.Load() {
			// Time spent passing output on does not count, only waiting.
			_ = r.SetReadDeadline(time.Now().Add(drainIdle))
		}
		n, err := r.Read(buf)
		if n > 0 {
			if dst != nil {
				if _, werr := dst.Write(buf[:n]); errors.Is(werr, syscall.EPIPE) {
					dst = nil // for good: nobody reads there any more
				}
			}
			if lines != nil {
				lines.write(buf[:n])
			}
			if o.tail != nil {
				o.tail.Write(stderr, buf[:n])
			}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			o.gaveUp.Do(func() {
				o.logger.Debug("gave up on the command's output: a process out of every's reach keeps it open",
					"stream", streamName[i], "after_ms", drainIdle.Milliseconds())
			})
		}
		if err != nil {
			return
		}
	}
}

// wait waits for both copiers to reach the end of their stream, once the
// command's tree is dead and swept: a stream that stays open with nothing
// coming for drainIdle is given up. A copier held up by every's own reader
// (a slow pipe) is waited for, as the command itself would have been.
func (o *output) wait() {
	o.draining.Store(true)
	for _, r := range o.r {
		_ = r.SetReadDeadline(time.Now().Add(drainIdle))
	}
	o.done.Wait()
}
