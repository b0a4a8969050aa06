// Package listen owns --listen (docs/GUIDE.md, Health and metrics over
// HTTP (--listen)): a small read-only HTTP server, of the standard library alone, that
// shows the jobs of one every process, a standalone every's one job or
// every jobs' many: /metrics (the Prometheus exposition of package
// metrics), /healthz (200, or 503 naming each unhealthy job and why) and /
// (a page of the jobs that refreshes itself).
//
// It learns of each job from a runner.Observer (Job), whose calls publish
// the job's view with an atomic store: no lock is shared with a loop, and a
// request, however slow its client, never holds a run up. Nothing of it
// exists without --listen: no listener, no goroutine.
package listen

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/runner"
)

// Event is the log event of the server: where it listens, and an error
// that ends its serving (the jobs go on).
const Event = "listen"

// Bounds of a connection: a client that sends its request slowly, or reads
// the answer slowly, is cut off, and holds at most a connection's goroutine
// and buffers meanwhile.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 10 * time.Second
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 8 << 10
	// maxConns bounds the connections served at once; more wait in the
	// kernel's backlog.
	maxConns = 64
	// closeWait bounds how long Close waits for the serving goroutine.
	closeWait = 2 * time.Second
)

// Server serves the jobs it is told of. Its methods are safe for concurrent
// use.
type Server struct {
	addr string
	log  *slog.Logger
	now  func() time.Time

	// mu guards the jobs, in the order they were added; the loops never
	// take it (their observers publish through each entry's atomic view).
	mu   sync.Mutex
	jobs []*entry

	srv    *http.Server
	ln     net.Listener
	served chan struct{} // closed when Serve has returned
}

// New returns a server for addr (see ParseAddr), logging on logger (nil:
// nowhere). It listens from Start.
func New(addr string, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Server{addr: addr, log: logger, now: time.Now}
}

// Job adds a job, or takes the new definition of one of that name (a
// reload's changed job), and returns the runner.Observer that its loop is
// to tell. A job taken again keeps its recent results and its skip counts,
// so its strip and its counters go on; give it when the new definition's
// loop starts, after the old one ended, whose observer then tells nobody.
func (s *Server) Job(j Job) runner.Observer {
	e := &entry{job: j, command: ui.CommandText(j.Command)}
	cur := &view{}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.jobs, func(o *entry) bool { return o.job.Name == j.Name }); i >= 0 {
		if old := s.jobs[i].view.Load(); old != nil {
			cur = old.clone()
		}
		s.jobs[i] = e
	} else {
		s.jobs = append(s.jobs, e)
	}
	e.view.Store(cur.clone())
	return &observer{e: e, cur: cur}
}

// Remove takes a job away (a reload's removed job): it is shown no more,
// and its observer tells nobody.
func (s *Server) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs = slices.DeleteFunc(s.jobs, func(e *entry) bool { return e.job.Name == name })
}

// listed returns the jobs and their views, as they are now.
func (s *Server) listed() []shown {
	s.mu.Lock()
	jobs := slices.Clone(s.jobs)
	s.mu.Unlock()
	out := make([]shown, len(jobs))
	for i, e := range jobs {
		out[i] = shown{job: e.job, command: e.command, view: e.view.Load()}
	}
	return out
}

// shown is a job and its view, at one moment.
type shown struct {
	job     Job
	command string
	view    *view
}

// Start listens on the server's address, and serves in a goroutine of its
// own until Close. Its error (a port in use, a path that is not a socket,
// an address this host does not have) is a start-up failure: nothing has
// run yet.
func (s *Server) Start() error {
	if s.srv != nil {
		return &Error{Addr: s.addr, Err: errors.New("started already")}
	}
	a, err := ParseAddr(s.addr)
	if err != nil {
		return &Error{Addr: s.addr, Err: err}
	}
	ln, err := listen(a)
	if err != nil {
		return &Error{Addr: s.addr, Err: err}
	}
	s.ln = &limitListener{Listener: ln, sem: make(chan struct{}, maxConns)}
	s.srv = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// net/http's own complaints (a client's bad TLS hello, an accept
		// error it retries) at debug, as the server's events.
		ErrorLog: slog.NewLogLogger(s.log.With("event", Event).Handler(), slog.LevelDebug),
	}
	s.served = make(chan struct{})
	s.log.Info("serving /metrics, /healthz and / over HTTP", "event", Event, "addr", shownAddr(a, ln.Addr()))
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("the HTTP server stopped; the jobs go on", "event", Event, "addr", s.addr, "error", err.Error())
		}
	}()
	return nil
}

// shownAddr is where the server listens, as the start-up line tells it: a
// URL to open for TCP (with the port the system chose for port 0), unix:
// and the path for a socket.
func shownAddr(a Addr, bound net.Addr) string {
	if a.Network == "unix" {
		return a.String()
	}
	host, _, _ := net.SplitHostPort(a.Address)
	_, port, _ := net.SplitHostPort(bound.String())
	if host == "" {
		host = "0.0.0.0" // every interface, IPv6's too
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// Close stops serving: the listener closed (a unix socket's file removed),
// the connections cut. It waits a little for the serving goroutine.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	select {
	case <-s.served:
	case <-time.After(closeWait):
	}
	return err
}

// Addr is where the server listens, once started (nil before).
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Error is a server that cannot listen: its address as given, and why.
type Error struct {
	Addr string
	Err  error
}

func (e *Error) Error() string { return "listen on " + e.Addr + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// limitListener accepts at most cap(sem) connections at once.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.sem })}, nil
}

type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
