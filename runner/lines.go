package runner

// This file cuts a command's output into lines, for a sink that takes it
// line by line (every jobs: each line prefixed with the job's name, or a
// log record of its own), so that the lines of commands running at once
// never mix within a line.

// LineSink takes a command's output one line at a time: without its
// newline, stderr says which stream. A line longer than MaxLine comes in
// pieces of MaxLine bytes; an unfinished last line comes when the stream
// ends. It is called from one goroutine per stream: a sink shared by
// several commands must serialise its writes itself.
type LineSink func(stderr bool, line []byte)

// MaxLine is the longest piece of a line a LineSink is given.
const MaxLine = 64 << 10

// lineSplitter buffers one stream's output up to its next newline.
type lineSplitter struct {
	stderr bool
	sink   LineSink
	max    int
	buf    []byte
}

// write takes the next bytes of the stream.
func (s *lineSplitter) write(p []byte) {
	for len(p) > 0 {
		i := indexNewline(p)
		if i < 0 {
			s.buf = append(s.buf, p...)
			for len(s.buf) > s.max { // a line of exactly max waits for its newline
				s.sink(s.stderr, s.buf[:s.max])
				s.buf = append(s.buf[:0], s.buf[s.max:]...)
			}
			return
		}
		s.buf = append(s.buf, p[:i]...)
		p = p[i+1:]
		for len(s.buf) > s.max {
			s.sink(s.stderr, s.buf[:s.max])
			s.buf = append(s.buf[:0], s.buf[s.max:]...)
		}
		s.sink(s.stderr, s.buf)
		s.buf = s.buf[:0]
	}
}

// flush passes on an unfinished last line, at the stream's end.
func (s *lineSplitter) flush() {
	if len(s.buf) > 0 {
		s.sink(s.stderr, s.buf)
		s.buf = s.buf[:0]
	}
}

// indexNewline returns the index of the first '\n' in p, or -1.
func indexNewline(p []byte) int {
	for i, c := range p {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// Write makes a lineSplitter an io.Writer (for a held output's replay).
func (s *lineSplitter) Write(p []byte) (int, error) {
	s.write(p)
	return len(p), nil
}

// replayLines replays a held output (--quiet-success) line by line to sink.
func replayLines(t *Tail, sink LineSink) {
	out, errs := &lineSplitter{sink: sink, max: MaxLine}, &lineSplitter{stderr: true, sink: sink, max: MaxLine}
	t.Replay(out, errs)
	out.flush()
	errs.flush()
}
