package state

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/everycli/every/internal/redistest"
)

func TestRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	st := Redis{Client: client, Key: "every:j:state", Period: time.Minute, Server: srv.Addr}

	if rec, err := st.Load(ctx); rec != nil || err != nil {
		t.Fatalf("missing key: Load = %v, %v; want nothing", rec, err)
	}
	want := &Record{Version: Version, Name: "j", Schedule: "1m", Anchor: time.Now().Add(-time.Hour).UTC().Round(time.Second), Runs: 3}
	if err := st.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Load(ctx); err != nil || got.Runs != 3 || !got.Anchor.Equal(want.Anchor) {
		t.Fatalf("Load = %+v, %v; want %+v", got, err, want)
	}

	// A value over MaxSize is corrupt, set aside, and never read whole.
	huge := `{"version":1,"name":"` + strings.Repeat("x", 2*MaxSize) + `"}`
	if err := client.Set(ctx, st.Key, huge, 0).Err(); err != nil {
		t.Fatal(err)
	}
	rec, err := st.Load(ctx)
	var corrupt *CorruptError
	if rec != nil || !errors.As(err, &corrupt) || !errors.Is(err, errTooLarge) {
		t.Fatalf("2 MiB state: Load = %v, %v; want a CorruptError for its size", rec, err)
	}
	if n, _ := client.Exists(ctx, st.Key).Result(); n != 0 {
		t.Error("the huge state was not set aside")
	}
	if n, _ := client.Exists(ctx, corrupt.MovedTo).Result(); n != 1 {
		t.Errorf("the huge state is not at %s", corrupt.MovedTo)
	}

	// A record beyond reason (an anchor in year 2900) is corrupt too.
	far := &Record{Version: Version, Name: "j", Schedule: "1m", Anchor: time.Date(2900, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := st.Save(ctx, far); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.Load(ctx); rec != nil || !errors.As(err, &corrupt) {
		t.Fatalf("year 2900: Load = %v, %v; want a CorruptError", rec, err)
	}
}
