package etcdtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/everycli/every/internal/etcd"
)

// Cluster is a cluster of etcd members on loopback, each in its own
// temporary directory, killed (by its own PID) when the test ends.
type Cluster struct {
	Members []*Member
	t       TB
}

// Member is one member of a Cluster.
type Member struct {
	Name string
	Addr string // 127.0.0.1:port, the client port
	peer string
	dir  string
	cmd  *exec.Cmd
}

// StartCluster starts a cluster of n members and waits until each answers
// (a leader is elected).
func StartCluster(t TB, n int) *Cluster {
	t.Helper()
	path := Path(t)
	c := &Cluster{t: t}
	var initial []string
	// FreeAddr closes its listener: two calls may find the same port free,
	// which etcd refuses ("duplicate url"). Each port is taken once.
	taken := map[string]bool{}
	free := func() string {
		for {
			if a := FreeAddr(t); !taken[a] {
				taken[a] = true
				return a
			}
		}
	}
	for i := range n {
		m := &Member{Name: fmt.Sprintf("m%d", i), Addr: free(), peer: free(), dir: t.TempDir()}
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"=http://"+m.peer)
	}
	t.Cleanup(c.Stop)
	token := fmt.Sprintf("every-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, m := range c.Members {
		cu, pu := "http://"+m.Addr, "http://"+m.peer
		log, err := os.OpenFile(m.dir+"/etcd.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatalf("etcd log: %v", err)
		}
		cmd := exec.Command(path, "--name", m.Name, "--data-dir", m.dir+"/data",
			"--listen-client-urls", cu, "--advertise-client-urls", cu,
			"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new", "--initial-cluster-token", token,
			"--unsafe-no-fsync")
		cmd.Stdout, cmd.Stderr = log, log
		err = cmd.Start()
		log.Close()
		if err != nil {
			t.Fatalf("start etcd %s: %v", m.Name, err)
		}
		m.cmd = cmd
	}
	// The members wait for each other (a quorum) before any answers.
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, m := range c.Members {
		wg.Go(func() {
			s := &Server{Addr: m.Addr}
			errs[i] = s.waitReady(60 * time.Second)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			m := c.Members[i]
			b, _ := os.ReadFile(m.dir + "/etcd.log")
			c.Stop()
			t.Fatalf("etcd member %s on %s did not answer: %v\n%s", m.Name, m.Addr, err, b)
		}
	}
	return c
}

// Endpoints are the client addresses of the members, in order.
func (c *Cluster) Endpoints() []string {
	var e []string
	for _, m := range c.Members {
		e = append(e, m.Addr)
	}
	return e
}

// Stop kills every member still running.
func (c *Cluster) Stop() {
	for _, m := range c.Members {
		m.Kill()
	}
}

// Kill kills the member (SIGKILL: as a crash would) and waits for it.
func (m *Member) Kill() {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	_ = m.cmd.Wait()
	m.cmd = nil
}

// Running reports whether the member was not killed.
func (m *Member) Running() bool { return m.cmd != nil }

// status is what the gateway's /v3/maintenance/status says of a member.
type status struct {
	Header struct {
		MemberID uint64 `json:"member_id,string"`
	} `json:"header"`
	Leader uint64 `json:"leader,string"`
}

func (m *Member) status(ctx context.Context) (status, error) {
	cl := etcd.New(etcd.Config{Endpoints: []string{m.Addr}, Timeout: time.Second})
	defer cl.Close()
	var st status
	err := cl.Call(ctx, "/v3/maintenance/status", map[string]string{}, &st)
	return st, err
}

// Leader waits until the running members agree on a leader among them, and
// returns it; none within bound fails the test.
func (c *Cluster) Leader(bound time.Duration) *Member {
	c.t.Helper()
	deadline := time.Now().Add(bound)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ids := map[uint64]*Member{}
		leaders := map[uint64]bool{}
		ok := true
		for _, m := range c.Members {
			if !m.Running() {
				continue
			}
			st, err := m.status(ctx)
			if err != nil {
				ok, last = false, err
				break
			}
			ids[st.Header.MemberID] = m
			leaders[st.Leader] = true
		}
		cancel()
		if ok && len(leaders) == 1 {
			for id := range leaders {
				if m := ids[id]; m != nil {
					return m
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("etcd cluster: no leader agreed on within %v (last error: %v)", bound, last)
	return nil
}
