package runner

import (
	"bytes"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// piece is output written to one stream: "o:" for stdout, "e:" for stderr.
type piece struct {
	stderr bool
	b      string
}

func (p piece) String() string {
	if p.stderr {
		return "e:" + p.b
	}
	return "o:" + p.b
}

func o(s string) piece { return piece{false, s} }
func e(s string) piece { return piece{true, s} }

// merged joins neighbours from the same stream: how the kept bytes are split
// into writes is the tail's business, which stream each byte goes to and in
// what order is not.
func merged(ps []piece) []piece {
	var out []piece
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].stderr == p.stderr {
			out[n-1].b += p.b
			continue
		}
		if p.b != "" {
			out = append(out, p)
		}
	}
	return out
}

// replayed is what Replay wrote, in order, each write tagged with the
// stream it went to, and whether it made an empty write (an empty chunk,
// which keeps two writes to the same stream apart).
func replayed(t *Tail) (got []piece, empty bool) {
	t.Replay(writerFunc(func(b []byte) { got = append(got, o(string(b))) }),
		writerFunc(func(b []byte) { got = append(got, e(string(b))) }))
	for _, p := range got {
		empty = empty || p.b == ""
	}
	return merged(got), empty
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) {
	f(slices.Clone(p))
	return len(p), nil
}

func TestTail(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		writes  []piece
		want    []piece
		dropped int64
	}{
		{name: "nothing", max: 10},
		{name: "empty writes", max: 10,
			writes: []piece{e(""), o("ab"), e(""), o("cd")},
			want:   []piece{o("abcd")}},
		{name: "under the size, streams in order", max: 10,
			writes: []piece{o("ab"), e("cd"), o("ef")},
			want:   []piece{o("ab"), e("cd"), o("ef")}},
		{name: "exactly the size", max: 10,
			writes: []piece{o("12345"), e("67890")},
			want:   []piece{o("12345"), e("67890")}},
		{name: "one byte over: the first byte goes", max: 10,
			writes:  []piece{o("12345"), e("67890"), o("x")},
			want:    []piece{o("2345"), e("67890"), o("x")},
			dropped: 1},
		{name: "a whole chunk goes, exactly", max: 10,
			writes:  []piece{o("12345"), e("67890"), o("abcde")},
			want:    []piece{e("67890"), o("abcde")},
			dropped: 5},
		{name: "cut inside the second chunk", max: 10,
			writes:  []piece{o("123"), e("4567"), o("89abcde")},
			want:    []piece{e("567"), o("89abcde")},
			dropped: 4},
		{name: "a write bigger than the tail", max: 10,
			writes:  []piece{o("ab"), e("0123456789XY")},
			want:    []piece{e("23456789XY")},
			dropped: 4},
		{name: "a write of exactly the size replaces all", max: 10,
			writes:  []piece{o("ab"), e("0123456789")},
			want:    []piece{e("0123456789")},
			dropped: 2},
		{name: "same stream writes join, order kept", max: 6,
			writes:  []piece{o("ab"), o("cd"), e("ef"), o("gh")},
			want:    []piece{o("cd"), e("ef"), o("gh")},
			dropped: 2},
		{name: "one byte tail", max: 1,
			writes:  []piece{o("a"), e("b")},
			want:    []piece{e("b")},
			dropped: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tail := NewTail(tt.max)
			for _, w := range tt.writes {
				tail.Write(w.stderr, []byte(w.b))
			}
			got, empty := replayed(tail)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Replay = %v, want %v", got, tt.want)
			}
			if empty {
				t.Errorf("Replay made an empty write")
			}
			var all strings.Builder
			for _, p := range tt.want {
				all.WriteString(p.b)
			}
			if got := string(tail.Bytes()); got != all.String() {
				t.Errorf("Bytes = %q, want %q", got, all.String())
			}
			if got := tail.Dropped(); got != tt.dropped {
				t.Errorf("Dropped = %d, want %d", got, tt.dropped)
			}
		})
	}
}

// Many writes of random sizes to random streams keep exactly what a naive
// model keeps: the last size bytes, each on its own stream, in order.
func TestTailModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 7, 100, 10000} {
		tail := NewTail(size)
		var all []byte   // every byte written, in order
		var onErr []bool // whether each went to stderr
		for range 500 {
			stderr := rng.IntN(3) == 0
			n := rng.IntN(2 * size)
			if rng.IntN(10) == 0 {
				n = rng.IntN(3 * size)
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('a' + (len(all)+i)%26)
				onErr = append(onErr, stderr)
			}
			all = append(all, b...)
			tail.Write(stderr, b)
		}
		from := max(0, len(all)-size)
		var want []piece
		for i := from; i < len(all); i++ {
			want = append(want, piece{onErr[i], string(all[i])})
		}
		if got, _ := replayed(tail); !slices.Equal(got, merged(want)) {
			t.Fatalf("size %d: Replay differs from the model:\n got %v\nwant %v", size, got, merged(want))
		}
		if got := tail.Dropped(); got != int64(from) {
			t.Errorf("size %d: Dropped = %d, want %d", size, got, from)
		}
	}
}

// Replay writes to each stream exactly its kept bytes.
func TestTailReplayBytes(t *testing.T) {
	tail := NewTail(12)
	tail.Write(false, []byte("out 1\n"))
	tail.Write(true, []byte("err 1\n"))
	tail.Write(false, []byte("out 2 no newline"))
	var stdout, stderr bytes.Buffer
	tail.Replay(&stdout, &stderr)
	if got, want := stdout.String(), "2 no newline"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got := stderr.String(); got != "" {
		t.Errorf("stderr = %q, want nothing", got)
	}
}

// BenchmarkTailWrite is the tail's cost per read the copier passes on: 32
// KiB reads into the default 10000-byte tail.
func BenchmarkTailWrite(b *testing.B) {
	for _, size := range []int{512, copyBuf} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			tail := NewTail(10000)
			p := bytes.Repeat([]byte("x"), size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				tail.Write(i%4 == 0, p)
			}
		})
	}
}

// Bytes and Replay put the ring in order in place: after them, more writes
// still keep exactly the last bytes, each on its stream.
func TestTailWriteAfterBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{1, 9, 700, 4096} {
		tail := NewTail(size)
		var all []byte
		var onErr []bool
		for i := range 300 {
			stderr := rng.IntN(2) == 0
			b := make([]byte, rng.IntN(size+size/2+1))
			for j := range b {
				b[j] = byte('a' + (len(all)+j)%26)
				onErr = append(onErr, stderr)
			}
			all = append(all, b...)
			tail.Write(stderr, b)
			if i%7 == 0 {
				from := max(0, len(all)-size)
				if got := tail.Bytes(); string(got) != string(all[from:]) {
					t.Fatalf("size %d, write %d: Bytes = %q, want %q", size, i, got, all[from:])
				}
				var want []piece
				for k := from; k < len(all); k++ {
					want = append(want, piece{onErr[k], string(all[k])})
				}
				if got, _ := replayed(tail); !slices.Equal(got, merged(want)) {
					t.Fatalf("size %d, write %d: Replay = %v, want %v", size, i, got, merged(want))
				}
			}
		}
	}
}

// A tail holds at most 1.25 times its size, whatever the writes: streams
// that alternate byte by byte cost one bit per byte, not a chunk each, and
// all a tail allocates, what it outgrew included, stays within twice its
// size.
func TestTailMemory(t *testing.T) {
	const size = 1 << 20
	var pieces [][]byte
	for n := 1; n <= 64; n *= 2 {
		pieces = append(pieces, bytes.Repeat([]byte("x"), n))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tail := NewTail(size)
	written := 0
	for i := 0; written < 3*size; i++ {
		p := pieces[i%len(pieces)]
		tail.Write(i%2 == 0, p[:1+i%len(p)])
		written += 1 + i%len(p)
	}
	out := tail.Bytes()
	tail.Replay(io.Discard, io.Discard)
	runtime.GC()
	runtime.ReadMemStats(&after)
	live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	allocated := after.TotalAlloc - before.TotalAlloc
	runtime.KeepAlive(tail)
	if len(out) != size {
		t.Fatalf("Bytes kept %d bytes, want %d", len(out), size)
	}
	// Slack for what the runtime itself allocates meanwhile.
	const slack = 64 << 10
	if limit := int64(size + size/4 + slack); live > limit {
		t.Errorf("a %d-byte tail holds %d bytes live, want at most %d", size, live, limit)
	}
	if limit := uint64(2*size + slack); allocated > limit {
		t.Errorf("a %d-byte tail allocated %d bytes in all, want at most %d", size, allocated, limit)
	}
	t.Logf("live %d, allocated %d for a tail of %d", live, allocated, size)
}
