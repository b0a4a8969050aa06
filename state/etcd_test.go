package state

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/etcdtest"
)

// Keys set aside in etcd never pile up nor replace one another, as files
// and Redis keys do: five corrupt records in a row (one of them 1.5 MB)
// leave the three newest, each as it was; keys every did not name so, and
// another job's, are left alone.
func TestEtcdSetAsideKeepsThree(t *testing.T) {
	srv := etcdtest.Start(t)
	client := srv.Client("")
	ctx := context.Background()
	st := Etcd{Client: client, Key: "every/j/state", Server: srv.Addr}
	others := map[string]string{"every/j/state.corrupt-1000": "oldest", "every/j/state.corrupt-keep": "not every's",
		"every/jx/state.corrupt-1000": "another job's"}
	for key, v := range others {
		if err := client.Put(ctx, []byte(key), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	garbage := func(k int) []byte {
		if k == 2 {
			return bytes.Repeat([]byte("x"), 1_500_000) // over MaxSize
		}
		return []byte("garbage " + strconv.Itoa(k))
	}
	var moved []string
	for k := 1; k <= 5; k++ {
		if err := client.Put(ctx, []byte(st.Key), garbage(k)); err != nil {
			t.Fatal(err)
		}
		rec, err := st.Load(ctx)
		var corrupt *CorruptError
		if rec != nil || !errors.As(err, &corrupt) {
			t.Fatalf("load %d: %v, %v; want a CorruptError", k, rec, err)
		}
		moved = append(moved, corrupt.MovedTo)
	}
	r, err := client.Range(ctx, []byte("every/"), etcd.PrefixEnd([]byte("every/")), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	var keys []string
	for _, kv := range r.KVs {
		got[string(kv.Key)] = kv.Value
		keys = append(keys, string(kv.Key))
	}
	for k, key := range moved {
		v, ok := got[key]
		switch {
		case k < 2 && ok:
			t.Errorf("%s (garbage %d) is kept: more than 3 set aside", key, k+1)
		case k >= 2 && !bytes.Equal(v, garbage(k+1)):
			t.Errorf("%s = %.20q; want garbage %d (none replaced)", key, v, k+1)
		}
	}
	want := append([]string{"every/j/state.corrupt-keep", "every/jx/state.corrupt-1000"}, moved[2:]...)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if !strings.HasPrefix(moved[0], st.Key+".corrupt-") {
		t.Errorf("set aside as %s", moved[0])
	}
}
