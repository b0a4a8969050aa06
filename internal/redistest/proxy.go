package redistest

import (
	"io"
	"net"
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
}

// NewProxy starts a proxy to the server at addr, closed with the test.
func NewProxy(t TB, addr string) *Proxy {
	quiet()
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{Addr: l.Addr().String(), to: addr, l: l}
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
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c)
		go p.pipe(c, s)
	}
}

// pipe copies from src to dst, a read at a time, holding each read while
// the proxy is frozen.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		for p.frozen && !p.closed {
			p.thaw.Wait()
		}
		closed := p.closed
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
