package state

import (
	"context"
	"errors"
	"slices"
	"strconv"
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

	// A record from the future (an anchor in year 2900: a clock set back,
	// or another host's) is not corrupt: it is read, counters and all.
	far := &Record{Version: Version, Name: "j", Schedule: "1m", Anchor: time.Date(2900, 1, 1, 0, 0, 0, 0, time.UTC), Runs: 7}
	if err := st.Save(ctx, far); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.Load(ctx); err != nil || rec == nil || rec.Runs != 7 {
		t.Fatalf("year 2900: Load = %v, %v; want the record", rec, err)
	}
}

// Keys set aside never pile up nor replace one another, as files do: five
// corrupt records in a row leave the three newest, each as it was. (The key
// has characters a SCAN pattern would read: they are quoted.)
func TestRedisSetAsideKeepsThree(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	st := Redis{Client: client, Key: "every:j[x]*:state", Server: srv.Addr}
	for key, v := range map[string]string{"every:j[x]*:state.corrupt-1000": "oldest", "every:j[x]*:state.corrupt-keep": "not every's",
		"every:jx:state.corrupt-1000": "another job's"} {
		if err := client.Set(ctx, key, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var moved []string
	for k := 1; k <= 5; k++ {
		if err := client.Set(ctx, st.Key, "garbage "+strconv.Itoa(k), 0).Err(); err != nil {
			t.Fatal(err)
		}
		_, err := st.Load(ctx)
		var corrupt *CorruptError
		if !errors.As(err, &corrupt) {
			t.Fatalf("load %d: %v, want a CorruptError", k, err)
		}
		moved = append(moved, corrupt.MovedTo)
	}
	for k, key := range moved {
		v, err := client.Get(ctx, key).Result()
		switch {
		case k < 2 && err == nil:
			t.Errorf("%s (garbage %d) is kept: more than 3 set aside", key, k+1)
		case k >= 2 && (err != nil || v != "garbage "+strconv.Itoa(k+1)):
			t.Errorf("%s = %q, %v; want garbage %d (none replaced)", key, v, err, k+1)
		}
	}
	keys, err := client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	want := append([]string{"every:j[x]*:state.corrupt-keep", "every:jx:state.corrupt-1000"}, moved[2:]...)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
}
