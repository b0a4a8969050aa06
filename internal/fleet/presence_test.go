package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/testutil"
)

// redisErr is an error as Redis answers it.
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (redisErr) RedisError()     {}

// timeoutErr is a network timeout.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

// TestTransient: what every status tries again within its timeout (an
// election, a failover, a timeout) and what it reports at once (a store
// down, refused credentials).
func TestTransient(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	e, _ := openEtcd("etcd://127.0.0.1:2379")
	r, _ := openRedis("redis://127.0.0.1:6379/0")
	for _, tc := range []struct {
		name  string
		store Store
		err   error
		want  bool
	}{
		{"etcd: no leader", e, fmt.Errorf("%w: %w", etcd.ErrUnreachable, &etcd.Error{Code: etcd.CodeUnavailable, Message: "etcdserver: no leader"}), true},
		{"etcd: leader changed", e, &etcd.Error{Code: etcd.CodeUnavailable, Message: "etcdserver: leader changed"}, true},
		{"etcd: timed out meanwhile", e, fmt.Errorf("%w: %w", etcd.ErrUnreachable, timeoutErr{}), true},
		{"etcd: deadline", e, fmt.Errorf("%w: %w", etcd.ErrUnreachable, context.DeadlineExceeded), true},
		{"etcd: all refused", e, fmt.Errorf("%w: %w", etcd.ErrUnreachable, refused), false},
		{"etcd: permission", e, &etcd.Error{Code: etcd.CodePermissionDenied}, false},
		{"etcd: not etcd", e, etcd.ErrNotEtcd, false},
		{"redis: loading", r, redisErr("LOADING Redis is loading the dataset in memory"), true},
		{"redis: master down", r, redisErr("MASTERDOWN Link with MASTER is down"), true},
		{"redis: timeout", r, timeoutErr{}, true},
		{"redis: refused", r, refused, false},
		{"redis: auth", r, redisErr("WRONGPASS invalid username-password pair"), false},
		{"redis: other", r, errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.store.Transient(tc.err); got != tc.want {
				t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestMember: an announcement's name in Redis reads back as written.
func TestMember(t *testing.T) {
	for _, a := range []Alive{{"web-1", 42}, {"host.example.com", 1}} {
		if got, ok := parseMember(a.member()); !ok || got != a {
			t.Errorf("parseMember(%q) = %v, %v; want %v", a.member(), got, ok, a)
		}
	}
	if _, ok := parseMember("garbage"); ok {
		t.Error("parseMember(garbage) ok")
	}
}

// A stop is never held up by a store that does not answer: with a beat
// stuck in a call that ignores its context (a black-holed server under a
// client that only honours deadlines), stop returns within its bound, and
// skips the leave.
func TestBeatStopNotHeldUpByAStuckCall(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	inCall := make(chan struct{})
	left := false
	stop := beat(time.Hour, func(context.Context) {
		close(inCall)
		<-stuck
	}, func(context.Context) { left = true })
	<-inCall
	returned := make(chan struct{})
	go func() { stop(); close(returned) }()
	if _, ok := testutil.Receive(returned); !ok {
		t.Fatalf("stop waited for the stuck call (%v and more)", testutil.WaitBound)
	}
	if left {
		t.Error("leave ran though a beat was still in flight")
	}
}

// With a store that answers, stop takes the announcement back.
func TestBeatStopLeaves(t *testing.T) {
	beaten := make(chan struct{}, 1)
	left := make(chan struct{})
	stop := beat(time.Hour, func(context.Context) {
		select {
		case beaten <- struct{}{}:
		default:
		}
	}, func(context.Context) { close(left) })
	<-beaten
	stop()
	select {
	case <-left:
	default:
		t.Fatal("stop returned without taking the announcement back")
	}
}
