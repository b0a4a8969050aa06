package etcdtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/servertest"
	"github.com/everycli/every/internal/testutil"
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
	proc *servertest.Process
}

// StartCluster starts a cluster of n members and waits until each answers
// (a leader is elected).
func StartCluster(t TB, n int) *Cluster {
	t.Helper()
	path := Path(t)
	c := &Cluster{t: t}
	var initial []string
	addrs := servertest.FreeAddrs(t, 2*n)
	for i := range n {
		m := &Member{Name: fmt.Sprintf("m%d", i), Addr: addrs[2*i], peer: addrs[2*i+1], dir: t.TempDir()}
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"=http://"+m.peer)
	}
	token := fmt.Sprintf("every-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, m := range c.Members {
		cu, pu := "http://"+m.Addr, "http://"+m.peer
		rc := readyClient(m.Addr)
		defer rc.Close()
		m.proc = servertest.Run(t, servertest.Command{
			Name: "etcd member " + m.Name + " on " + m.Addr, Path: path, Log: m.dir + "/etcd.log", Ready: ready(rc),
			Args: []string{"--name", m.Name, "--data-dir", m.dir + "/data",
				"--listen-client-urls", cu, "--advertise-client-urls", cu,
				"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
				"--initial-cluster", strings.Join(initial, ","),
				"--initial-cluster-state", "new", "--initial-cluster-token", token,
				"--unsafe-no-fsync"},
		})
	}
	// The members wait for each other (a quorum) before any answers: all
	// run before any is awaited, each given twice the usual bound (the
	// first waits for the others to start, on a loaded machine).
	for _, m := range c.Members {
		m.proc.WaitReady(t, 2*testutil.WaitBound)
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
func (m *Member) Kill() { m.proc.Stop() }

// Running reports whether the member was not killed.
func (m *Member) Running() bool { return m.proc.Running() }

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
	var leader *Member
	var last error
	if testutil.EventuallyWithin(bound, func() bool {
		m, err := c.agreed()
		if err != nil {
			last = err
		}
		leader = m
		return leader != nil
	}) {
		return leader
	}
	c.t.Fatalf("etcd cluster: no leader agreed on within %v (last error: %v)", bound, last)
	return nil
}

// agreed is the leader the running members agree on, if they do and it is
// among them, or the error of the member that could not say.
func (c *Cluster) agreed() (*Member, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ids := map[uint64]*Member{}
	leaders := map[uint64]bool{}
	for _, m := range c.Members {
		if !m.Running() {
			continue
		}
		st, err := m.status(ctx)
		if err != nil {
			return nil, err
		}
		ids[st.Header.MemberID] = m
		leaders[st.Leader] = true
	}
	if len(leaders) != 1 {
		return nil, nil
	}
	for id := range leaders {
		if m := ids[id]; m != nil {
			return m, nil
		}
	}
	return nil, nil
}
