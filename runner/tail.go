package runner

import (
	"io"
	"slices"
	"sync"
)

// MaxOutputTail is the most --output-tail may keep. The tail is held in
// memory, whole, for each run, and is what --quiet-success prints, what a
// hook reads in EVERY_OUTPUT and what a ping's body is cut from (the
// service keeps 100 kB of it): 16 MiB is far more than a person reads of a
// failed run, and bounds what a careless value can cost every at 32 MiB.
// A command whose whole output matters writes it to a file of its own.
const MaxOutputTail = 16 << 20

// Tail keeps the last bytes a run's command wrote to its stdout and stderr,
// the two together, in the order they came, each byte tagged with its
// stream, so that they can be replayed to the streams they came from.
//
// Its memory is one ring of bytes that grows, in steps of four, up to the
// tail's size and no further, and one bit per byte for the stream: writes
// allocate nothing once it is full, it holds at most 1.25 times the size
// (while Bytes or Replay puts it in order), and what it outgrew adds at
// most a third. So however the streams interleave, a run's output never
// costs every more than twice the tail.
type Tail struct {
	mu  sync.Mutex
	max int
	// buf is the ring; its length, up to max, is its capacity. The kept
	// bytes are size bytes from start, wrapping. It starts to wrap only once
	// it is max long: until then start is 0.
	buf         []byte
	start, size int
	// stderr has bit i (bit i%8 of byte i/8) set when buf[i] came from
	// stderr.
	stderr  []byte
	dropped int64 // bytes dropped from the front
}

// NewTail returns a tail of at most max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// minTail is the ring's first capacity: the output of most runs fits.
const minTail = 512

// Write keeps p, written to stderr or to stdout, dropping the oldest bytes
// beyond the tail's size.
func (t *Tail) Write(stderr bool, p []byte) {
	if len(p) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) > t.max {
		t.dropped += int64(len(p) - t.max)
		p = p[len(p)-t.max:]
	}
	if need := t.size + len(p); need > len(t.buf) && len(t.buf) < t.max {
		t.grow(need)
	}
	if over := t.size + len(p) - len(t.buf); over > 0 {
		t.start = (t.start + over) % len(t.buf)
		t.size -= over
		t.dropped += int64(over)
	}
	at := (t.start + t.size) % len(t.buf)
	for len(p) > 0 {
		n := copy(t.buf[at:], p)
		setBits(t.stderr, at, n, stderr)
		p, t.size, at = p[n:], t.size+n, 0
	}
}

// grow makes the ring at least need long: the shortest of max, max/4,
// max/16, ... that holds need bytes (and minTail). Steps of four, counted
// down from max, leave at most a third of max behind as garbage, however
// the size relates to the steps: the ring and what it outgrew stay within
// 1.5 times the size. It has not wrapped yet: its bytes are in order from 0.
func (t *Tail) grow(need int) {
	n := t.max
	for n/4 >= max(need, minTail) {
		n /= 4
	}
	buf := make([]byte, n)
	copy(buf, t.buf[:t.size])
	bits := make([]byte, (n+7)/8)
	copy(bits, t.stderr)
	t.buf, t.stderr = buf, bits
}

// inOrder rotates the ring so that its bytes start at 0, in place; the
// stream bits follow (a new bitmap: one bit per byte).
func (t *Tail) inOrder() {
	if t.start == 0 {
		return
	}
	// The ring wraps only once full: size is its length.
	s := t.start
	slices.Reverse(t.buf[:s])
	slices.Reverse(t.buf[s:])
	slices.Reverse(t.buf)
	bits := make([]byte, len(t.stderr))
	for i := range t.size {
		if bit(t.stderr, (s+i)%len(t.buf)) {
			bits[i/8] |= 1 << (i % 8)
		}
	}
	t.stderr, t.start = bits, 0
}

// Bytes returns the kept bytes of both streams, in order. They are the
// tail's own, not a copy (a copy would double the tail's memory): the
// caller must not change them, and they stay as they are until the next
// Write.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inOrder()
	return t.buf[:t.size:t.size]
}

// Dropped returns how many bytes of output were dropped from the front.
func (t *Tail) Dropped() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped
}

// Replay writes the kept bytes to the streams they came from, in order,
// each stretch from one stream in one write.
func (t *Tail) Replay(stdout, stderr io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inOrder()
	for i := 0; i < t.size; {
		onErr := bit(t.stderr, i)
		j := i + 1
		for j < t.size && bit(t.stderr, j) == onErr {
			if j%8 == 0 && j+8 <= t.size && t.stderr[j/8] == fill(onErr) {
				j += 8 // a whole byte of bits of this stream
				continue
			}
			j++
		}
		w := stdout
		if onErr {
			w = stderr
		}
		_, _ = w.Write(t.buf[i:j])
		i = j
	}
}

// bit reports whether bit i of b is set.
func bit(b []byte, i int) bool { return b[i/8]&(1<<(i%8)) != 0 }

// fill is a byte of eight bits, all v.
func fill(v bool) byte {
	if v {
		return 0xff
	}
	return 0
}

// setBits sets bits [from, from+n) of b to v, whole bytes at a time where
// it can.
func setBits(b []byte, from, n int, v bool) {
	i, end := from, from+n
	for ; i < end && (i%8 != 0 || i+8 > end); i++ {
		if v {
			b[i/8] |= 1 << (i % 8)
		} else {
			b[i/8] &^= 1 << (i % 8)
		}
	}
	if whole := (end - i) / 8; whole > 0 {
		mid := b[i/8 : i/8+whole]
		if v {
			// Doubling copies: memmove's speed, where a loop of stores
			// would cost as much as the copy of the output itself.
			mid[0] = 0xff
			for n := 1; n < len(mid); n *= 2 {
				copy(mid[n:], mid[:n])
			}
		} else {
			clear(mid)
		}
		i += 8 * whole
	}
	for ; i < end; i++ {
		if v {
			b[i/8] |= 1 << (i % 8)
		} else {
			b[i/8] &^= 1 << (i % 8)
		}
	}
}
