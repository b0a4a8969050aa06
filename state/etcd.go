package state

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/everycli/every/internal/etcd"
)

// Etcd is a Record kept as JSON under one key of etcd, for jobs that run on
// several hosts. With a lock, the record is read with the lock and written
// under its lease by lock.Etcd, which guards every such write, and parsed
// here (Parse; internal/fleet pairs the two); this alone is the store of a
// job without a lock, and of every status.
type Etcd struct {
	Client *etcd.Client
	Key    string
	// Period is the job's schedule's period, for the Sane check of Load; 0
	// when not known.
	Period time.Duration
	// Server names the cluster for messages, without a password.
	Server string
}

// Where names the cluster and the key.
func (e Etcd) Where() string { return e.Server + " key " + e.Key }

// Load reads the record. One that cannot be parsed, or is not Sane, is set
// aside under <key>.corrupt-<unix seconds>.
func (e Etcd) Load(ctx context.Context) (*Record, error) {
	r, err := e.Client.Range(ctx, []byte(e.Key), nil, 1)
	if err != nil {
		return nil, fmt.Errorf("read state from %s: %w", e.Where(), err)
	}
	if len(r.KVs) == 0 {
		return nil, nil
	}
	return e.Parse(ctx, r.KVs[0].Value)
}

// Parse makes a record of the key's value: nil for none, and one that
// cannot be parsed, or is not Sane, set aside.
func (e Etcd) Parse(ctx context.Context, b []byte) (*Record, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var rec *Record
	err := errTooLarge
	if len(b) <= MaxSize {
		rec, err = Decode(b)
	}
	if err == nil {
		err = rec.Sane(time.Now(), e.Period)
	}
	if err == nil {
		return rec, nil
	}
	moved, rerr := e.setAside(ctx, b, time.Now())
	if rerr != nil {
		return nil, fmt.Errorf("state %s cannot be parsed (%v) nor set aside: %w", e.Where(), err, rerr)
	}
	return nil, &CorruptError{Where: e.Where(), MovedTo: moved, Err: err}
}

// setAside moves the value b to a key of those set aside at now, as File
// and Redis do: after any of that second already there, never over one
// (created only if absent), and only if the record still holds b; then it
// deletes the keys set aside but the keptAside newest.
func (e Etcd) setAside(ctx context.Context, b []byte, now time.Time) (string, error) {
	prefix := e.Key + ".corrupt-"
	// A range refused or cut short costs the pruning only: the names are
	// still never reused, by the create-if-absent.
	found, listErr := e.aside(ctx, prefix)
	key := []byte(e.Key)
	return setAsideAs(found, listErr, prefix, now, func(name string) (bool, error) {
		cur, err := e.Client.Range(ctx, key, nil, 1)
		if err != nil {
			return false, err
		}
		if len(cur.KVs) == 0 || !bytes.Equal(cur.KVs[0].Value, b) {
			return false, fmt.Errorf("the record changed meanwhile")
		}
		res, err := e.Client.Txn(ctx,
			[]etcd.Cmp{etcd.CreateIs([]byte(name), 0), etcd.ModIs(key, cur.KVs[0].ModRevision)},
			[]etcd.Op{etcd.Put([]byte(name), b, 0), etcd.Delete(key)}, nil)
		if err != nil {
			return false, err
		}
		return res.Succeeded, nil
	}, func(name string) { _ = e.Client.Delete(ctx, []byte(name)) })
}

// aside lists the keys set aside (named prefix and an order, see
// asideOrder), newest first, a page of names at a time (their values, up
// to a MiB each, are not read). It runs only when a record is set aside.
func (e Etcd) aside(ctx context.Context, prefix string) ([]asideFile, error) {
	var found []asideFile
	from, end := []byte(prefix), etcd.PrefixEnd([]byte(prefix))
	for {
		r, err := e.Client.Keys(ctx, from, end, 100)
		if err != nil {
			return found, err
		}
		for _, kv := range r.KVs {
			if sec, n, ok := asideOrder(strings.TrimPrefix(string(kv.Key), prefix)); ok {
				found = append(found, asideFile{string(kv.Key), sec, n})
			}
		}
		if !r.More || len(r.KVs) == 0 {
			sortAside(found)
			return found, nil
		}
		from = append(bytes.Clone(r.KVs[len(r.KVs)-1].Key), 0)
	}
}

// Save writes the record; a put replaces the value whole.
func (e Etcd) Save(ctx context.Context, rec *Record) error {
	b, err := Encode(rec)
	if err != nil {
		return err
	}
	if err := e.Client.Put(ctx, []byte(e.Key), b); err != nil {
		return fmt.Errorf("write state to %s: %w", e.Where(), err)
	}
	return nil
}

// List reads the records under prefix whose keys end in suffix (every
// status), a page at a time.
func (e Etcd) List(ctx context.Context, prefix, suffix string) ([]*Record, error) {
	var records []*Record
	from, end := []byte(prefix), etcd.PrefixEnd([]byte(prefix))
	for {
		r, err := e.Client.Range(ctx, from, end, 100)
		if err != nil {
			return nil, err
		}
		for _, kv := range r.KVs {
			if !bytes.HasSuffix(kv.Key, []byte(suffix)) {
				continue
			}
			if rec, err := Decode(kv.Value); err == nil {
				records = append(records, rec)
			}
		}
		if !r.More || len(r.KVs) == 0 {
			return records, nil
		}
		from = append(bytes.Clone(r.KVs[len(r.KVs)-1].Key), 0)
	}
}
