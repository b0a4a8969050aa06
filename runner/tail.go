package runner

import (
	"io"
	"sync"
)

// Tail keeps the last bytes a run's command wrote to its stdout and stderr,
// the two together, in the order they came, each chunk tagged with its
// stream, so that they can be replayed to the streams they came from.
type Tail struct {
	mu      sync.Mutex
	max     int
	size    int
	chunks  []chunk
	dropped int64 // bytes dropped from the front
}

type chunk struct {
	stderr bool
	b      []byte
}

// NewTail returns a tail of at most max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps p, written to stderr or to stdout, dropping the oldest bytes
// beyond the tail's size.
func (t *Tail) Write(stderr bool, p []byte) {
	if len(p) == 0 {
		return // no empty chunk between two of the other stream
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) > t.max {
		t.dropped += int64(len(p) - t.max)
		p = p[len(p)-t.max:]
	}
	if n := len(t.chunks); n > 0 && t.chunks[n-1].stderr == stderr && cap(t.chunks[n-1].b)-len(t.chunks[n-1].b) >= len(p) {
		t.chunks[n-1].b = append(t.chunks[n-1].b, p...)
	} else {
		t.chunks = append(t.chunks, chunk{stderr, append(make([]byte, 0, max(len(p), 512)), p...)})
	}
	t.size += len(p)
	for t.size > t.max {
		c := &t.chunks[0]
		cut := min(len(c.b), t.size-t.max)
		c.b = c.b[cut:]
		t.size -= cut
		t.dropped += int64(cut)
		if len(c.b) == 0 {
			t.chunks = t.chunks[1:]
		}
	}
}

// Bytes returns the kept bytes of both streams, in order.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]byte, 0, t.size)
	for _, c := range t.chunks {
		out = append(out, c.b...)
	}
	return out
}

// Dropped returns how many bytes of output were dropped from the front.
func (t *Tail) Dropped() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped
}

// Replay writes the kept bytes to the streams they came from, in order.
func (t *Tail) Replay(stdout, stderr io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.chunks {
		w := stdout
		if c.stderr {
			w = stderr
		}
		_, _ = w.Write(c.b)
	}
}
