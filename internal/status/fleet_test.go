package status

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/etcdtest"
	"github.com/everycli/every/internal/fleet"
	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/state"
)

// TestFleetStatusThroughLeaderElection: every status --store etcd:// keeps
// answering while the cluster's leadership moves from member to member
// (etcd's move-leader, as an operator or a rolling upgrade does it), and
// while the cluster elects a new leader after its leader died: the reads
// that meet the election are tried again within status's timeout, and no
// listing has a problem (it exited 1 during an election).
func TestFleetStatusThroughLeaderElection(t *testing.T) {
	cl := etcdtest.StartCluster(t, 3)
	cl.Leader(30 * time.Second)
	url := "etcd://" + strings.Join(cl.Endpoints(), ",") + "/le"
	f, err := fleet.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	_, store := f.Job("j", "web-1", 30*time.Second, time.Hour, false, true)
	now := time.Now().UTC()
	rec := &state.Record{Version: state.Version, Name: "j", Command: []string{"true"}, Schedule: "1h",
		Anchor: now.Add(-time.Hour), LastSlot: now.Add(-time.Minute), LastRun: now.Add(-time.Minute), LastEnd: now.Add(-time.Minute + time.Second),
		LastResult: "success", LastSuccess: now.Add(-time.Minute), LastAttempts: 1, Runs: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := store.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}

	// status, over and over, while the leadership moves.
	var (
		stop     atomic.Bool
		listings atomic.Int64
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				l, err := list(Settings{Store: url, Names: []string{"j"}}, time.Now())
				listings.Add(1)
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case len(l.problems) > 0:
					failures = append(failures, l.problems[0].err.Error())
				case len(l.jobs) != 1:
					failures = append(failures, "no job listed")
				}
				mu.Unlock()
			}
		})
	}
	const moves = 4
	for i := range moves {
		moveLeader(t, cl)
		t.Logf("move %d: leader %s", i+1, cl.Leader(30*time.Second).Name)
	}
	// And an election proper: the leader dies, the others elect one of
	// them (about a second, etcd's election timeout), answering meanwhile
	// that they have no leader, or not in time.
	before := listings.Load()
	cl.Leader(30 * time.Second).Kill()
	t.Logf("leader killed; new leader %s", cl.Leader(30*time.Second).Name)
	// Listings go on across the election: four more, each ended within
	// status's timeout, even those that met it.
	more := testutil.Eventually(func() bool { return listings.Load() >= before+4 })
	stop.Store(true)
	wg.Wait()
	if !more {
		t.Errorf("%d listings in the %v after the leader's death, want 4: listing stalls on an election", listings.Load()-before, testutil.WaitBound)
	}
	if listings.Load() < moves {
		t.Fatalf("only %d listings during %d leader moves", listings.Load(), moves)
	}
	for _, f := range failures {
		t.Errorf("a listing failed during a leader election: %s", f)
	}
	t.Logf("%d listings, %d leader moves", listings.Load(), moves)
}

// moveLeader moves the cluster's leadership to another member, as
// `etcdctl move-leader` does, and returns once asked (the election runs on).
func moveLeader(t *testing.T, cl *etcdtest.Cluster) {
	t.Helper()
	leader := cl.Leader(30 * time.Second)
	var target *etcdtest.Member
	for _, m := range cl.Members {
		if m != leader {
			target = m
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var st struct {
		Header struct {
			MemberID uint64 `json:"member_id,string"`
		} `json:"header"`
	}
	c := etcd.New(etcd.Config{Endpoints: []string{target.Addr}, Timeout: 2 * time.Second})
	defer c.Close()
	if err := c.Call(ctx, "/v3/maintenance/status", map[string]string{}, &st); err != nil {
		t.Fatalf("status of %s: %v", target.Name, err)
	}
	l := etcd.New(etcd.Config{Endpoints: []string{leader.Addr}, Timeout: 5 * time.Second})
	defer l.Close()
	var res struct{}
	err := l.Call(ctx, "/v3/maintenance/transfer-leadership", map[string]string{"targetID": strconv.FormatUint(st.Header.MemberID, 10)}, &res)
	// etcd 3.4's gateway answers a move with "{}", no header: the client
	// takes that for no etcd, but the move was made.
	moved := errors.Is(err, etcd.ErrNotEtcd) && strings.HasSuffix(err.Error(), `answered "{}"`)
	if err != nil && !moved {
		t.Fatalf("move leader from %s to %s: %v", leader.Name, target.Name, err)
	}
}
