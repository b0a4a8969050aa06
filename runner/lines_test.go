package runner

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestLineSplitter: lines come whole, whatever pieces the output came in;
// a line longer than the most comes in pieces; the unfinished last one
// comes at the end; an empty line is a line.
func TestLineSplitter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		writes []string
		max    int
		want   []string
	}{
		{"one line", []string{"a\n"}, 8, []string{"a"}},
		{"two in one write", []string{"a\nb\n"}, 8, []string{"a", "b"}},
		{"one in pieces", []string{"ab", "c", "d\n"}, 8, []string{"abcd"}},
		{"empty lines", []string{"\n\na\n"}, 8, []string{"", "", "a"}},
		{"unfinished last", []string{"a\nbc"}, 8, []string{"a", "bc"}},
		{"too long, no newline", []string{"abcdefghij"}, 4, []string{"abcd", "efgh", "ij"}},
		{"too long, then newline", []string{"abcdefghij\nk\n"}, 4, []string{"abcd", "efgh", "ij", "k"}},
		{"exactly the most", []string{"abcd\n"}, 4, []string{"abcd"}},
		{"the most, then its newline apart", []string{"abcd", "\n"}, 4, []string{"abcd"}},
		{"the most, in pieces", []string{"ab", "cd", "ef\n"}, 4, []string{"abcd", "ef"}},
		{"nothing", nil, 4, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			s := &lineSplitter{max: tt.max, sink: func(_ bool, line []byte) {
				if len(line) > tt.max {
					t.Errorf("a piece of %d bytes, the most is %d", len(line), tt.max)
				}
				got = append(got, string(line))
			}}
			for _, w := range tt.writes {
				s.write([]byte(w))
			}
			s.flush()
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("lines %q, want %q", got, tt.want)
			}
		})
	}
}

// A command's output, taken line by line: each stream's lines whole and in
// order, its unfinished last line too, none on every's own stdout.
func TestExecLines(t *testing.T) {
	var mu sync.Mutex
	got := map[bool][]string{}
	a := Attempt{Argv: []string{"/bin/sh", "-c", `printf 'a\nb'; printf 'c\n' >&2; printf 'd\ne'`}, Signal: syscall.SIGTERM,
		Logger: slog.New(slog.DiscardHandler),
		Lines: func(stderr bool, line []byte) {
			mu.Lock()
			defer mu.Unlock()
			got[stderr] = append(got[stderr], string(line))
		}}
	if r := Exec(context.Background(), a); r.Outcome != Success {
		t.Fatalf("result %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got[false], "|") != "a|bd|e" || strings.Join(got[true], "|") != "c" {
		t.Fatalf("stdout lines %q, stderr lines %q; want [a bd e], [c]", got[false], got[true])
	}
}

// A held output (--quiet-success) of a failed run is replayed line by line,
// each stream's lines whole.
func TestReplayLines(t *testing.T) {
	tail := NewTail(1 << 10)
	tail.Write(false, []byte("out 1\nout"))
	tail.Write(true, []byte("err 1\n"))
	tail.Write(false, []byte(" 2\n"))
	var got []string
	replayLines(tail, func(stderr bool, line []byte) {
		got = append(got, fmt.Sprintf("%v:%s", stderr, line))
	})
	if want := "false:out 1|true:err 1|false:out 2"; strings.Join(got, "|") != want {
		t.Fatalf("replayed %q, want %s", got, want)
	}
}
