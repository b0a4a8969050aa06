package redistest

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Proxy forwards TCP connections to a server, and can be frozen: it then
// stops forwarding in both directions but keeps every socket open, as a
// network partition looks to both ends (no reset, no FIN, just silence).
type Proxy struct {
	Addr string // 127.0.0.1:port to connect to instead of the server
	to   string
	l    net.Listener

	mu     sync.Mutex
	frozen bool
	thaw   *sync.Cond
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup

	// trips are the round trips seen (see Trips); awaiting is whether the
	// last thing seen on a connection went to the server.
	trips    []Trip
	awaiting map[net.Conn]bool
	dials    int
}

// Trip is one round trip: what a client sent before the server's answer
// came, command by command (the names, upper-case: "EVALSHA", "SET"),
// pipelined ones together.
type Trip []string

// NewProxy starts a proxy to the server at addr, closed with the test.
func NewProxy(t TB, addr string) *Proxy {
	quiet()
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{Addr: l.Addr().String(), to: addr, l: l, awaiting: map[net.Conn]bool{}}
	p.thaw = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.to)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.conns = append(p.conns, c, s)
		p.dials++
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c, c)
		go p.pipe(c, s, nil)
	}
}

// pipe copies from src to dst, a read at a time, holding each read while
// the proxy is frozen. client is src when src is a client (the copy goes to
// the server), else nil.
func (p *Proxy) pipe(dst, src, client net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		for p.frozen && !p.closed {
			p.thaw.Wait()
		}
		closed := p.closed
		if n > 0 && !closed {
			p.count(dst, client, buf[:n])
		}
		p.mu.Unlock()
		if closed {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err == io.EOF {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
			}
			return
		}
	}
}

// count books what went through, under p.mu: data from a client that was
// not already waiting for an answer starts a round trip; data from the
// server to a client ends it. A command split over two reads, or two
// pipelined commands, stay one trip.
func (p *Proxy) count(dst, client net.Conn, b []byte) {
	if client == nil {
		p.awaiting[dst] = false
		return
	}
	if !p.awaiting[client] {
		p.awaiting[client] = true
		p.trips = append(p.trips, nil)
	}
	last := &p.trips[len(p.trips)-1]
	*last = append(*last, commands(b)...)
}

// commands are the names of the RESP commands that begin in b: a multibulk
// header followed by the bulk string of the name ("*2\r\n$3\r\nGET\r\n...").
// Arguments that happen to look like one would be counted too; the tests'
// arguments do not.
func commands(b []byte) []string {
	var names []string
	for i := 0; i < len(b); i++ {
		if b[i] != '*' || (i > 0 && b[i-1] != '\n') {
			continue
		}
		rest := b[i:]
		nl := bytes.Index(rest, []byte("\r\n"))
		if nl < 0 || nl+2 >= len(rest) || rest[nl+2] != '$' {
			continue
		}
		rest = rest[nl+2:]
		nl = bytes.Index(rest, []byte("\r\n"))
		n, err := strconv.Atoi(string(rest[1:max(nl, 1)]))
		if nl < 0 || err != nil || nl+2+n > len(rest) {
			continue
		}
		names = append(names, strings.ToUpper(string(rest[nl+2:nl+2+n])))
	}
	return names
}

// Trips returns the round trips seen since the last call, and the
// connections dialled meanwhile, and starts counting afresh.
func (p *Proxy) Trips() (trips []Trip, dials int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	trips, dials = p.trips, p.dials
	p.trips, p.dials = nil, 0
	return trips, dials
}

// TripNames is Trips, each round trip as its commands joined by "+", and
// EVALSHA shown as EVAL: either runs a script in one round trip.
func (p *Proxy) TripNames() (trips []string, dials int) {
	ts, dials := p.Trips()
	for _, t := range ts {
		trips = append(trips, strings.ReplaceAll(strings.Join(t, "+"), "EVALSHA", "EVAL"))
	}
	return trips, dials
}

// Freeze stops forwarding: whatever is sent from now on, either way, is held.
// New connections are accepted but get nothing through either.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// Thaw forwards again, what was held first.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	p.frozen = false
	p.thaw.Broadcast()
	p.mu.Unlock()
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.thaw.Broadcast()
	conns := p.conns
	p.mu.Unlock()
	p.l.Close()
	for _, c := range conns {
		c.Close()
	}
	p.wg.Wait()
}

// BlackHole is a listener that accepts connections and never answers, and
// never closes them: a server that hangs, or a firewall that lets the
// handshake through and drops the rest.
type BlackHole struct {
	Addr string
	l    net.Listener

	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

// NewBlackHole starts a black hole, closed with the test.
func NewBlackHole(t TB) *BlackHole {
	quiet()
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("black hole listen: %v", err)
	}
	b := &BlackHole{Addr: l.Addr().String(), l: l, done: make(chan struct{})}
	go b.accept()
	t.Cleanup(b.Close)
	return b
}

func (b *BlackHole) accept() {
	defer close(b.done)
	for {
		c, err := b.l.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns = append(b.conns, c)
		b.mu.Unlock()
		// Nothing is read: what the client sends stays in the socket's buffer.
	}
}

// Close closes the listener and every connection it accepted.
func (b *BlackHole) Close() {
	b.l.Close()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
	b.conns = nil
}

// RefusedAddr returns a loopback address where nothing listens: a connection
// to it is refused at once.
func RefusedAddr(t TB) string {
	quiet()
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
