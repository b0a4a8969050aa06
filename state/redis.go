package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Record kept as JSON under one key, for jobs that run on several
// hosts. It is read and written under the job's lock.
type Redis struct {
	Client *redis.Client
	Key    string
	// Period is the job's schedule's period, for the Sane check of Load; 0
	// when not known.
	Period time.Duration
	// Server names the server for messages, without a password.
	Server string
}

// Where names the server and the key.
func (r Redis) Where() string { return r.Server + " key " + r.Key }

// Load reads the record. One that cannot be parsed, or is not Sane, is
// renamed to <key>.corrupt-<unix seconds> (see setAside).
func (r Redis) Load(ctx context.Context) (*Record, error) {
	// At most MaxSize+1 bytes, as for a file: a huge value is corrupt, and
	// is never read whole. A missing key reads as "": no record.
	b, err := r.Client.GetRange(ctx, r.Key, 0, MaxSize).Bytes()
	if err != nil {
		return nil, fmt.Errorf("read state from %s: %w", r.Where(), err)
	}
	return r.Parse(ctx, b)
}

// Parse makes a record of the first MaxSize+1 bytes of the key's value, as
// Load read them (or a script that read them as Load does, under the lock):
// nil for none (""), and one that cannot be parsed, or is not Sane, renamed
// to <key>.corrupt-<unix seconds>.
func (r Redis) Parse(ctx context.Context, b []byte) (*Record, error) {
	if len(b) == 0 {
		return nil, nil
	}
	rec, err := Decode(b)
	if len(b) > MaxSize {
		err = errTooLarge
	}
	if err == nil {
		err = rec.Sane(time.Now(), r.Period)
	}
	if err == nil {
		return rec, nil
	}
	moved, rerr := r.setAside(ctx, time.Now())
	if rerr != nil {
		return nil, fmt.Errorf("state %s cannot be parsed (%v) nor set aside: %w", r.Where(), err, rerr)
	}
	return nil, &CorruptError{Where: r.Where(), MovedTo: moved, Err: err}
}

// setAside renames the key to a name of those set aside at now, as File
// does: after any of that second already there, never over one (RENAMENX);
// then it deletes the keys set aside but the keptAside newest.
func (r Redis) setAside(ctx context.Context, now time.Time) (string, error) {
	prefix := r.Key + ".corrupt-"
	// A scan refused (an ACL without SCAN) or cut short costs the pruning
	// only: the names are still never reused, by RENAMENX.
	found, scanErr := r.aside(ctx, prefix)
	return setAsideAs(found, scanErr, prefix, now, func(name string) (bool, error) {
		return r.Client.RenameNX(ctx, r.Key, name).Result()
	}, func(name string) { _ = r.Client.Del(ctx, name).Err() })
}

// aside lists the keys set aside (named prefix and an order, see
// asideOrder), newest first. It scans the database: it runs only when a
// record is set aside.
func (r Redis) aside(ctx context.Context, prefix string) ([]asideFile, error) {
	var found []asideFile
	iter := r.Client.Scan(ctx, 0, globQuote(prefix)+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if sec, n, ok := asideOrder(strings.TrimPrefix(iter.Val(), prefix)); ok {
			found = append(found, asideFile{iter.Val(), sec, n})
		}
	}
	sortAside(found)
	return found, iter.Err()
}

// globQuote quotes the characters of s that a SCAN MATCH pattern reads.
func globQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Save writes the record; a SET replaces the value whole.
func (r Redis) Save(ctx context.Context, rec *Record) error {
	b, err := Encode(rec)
	if err != nil {
		return err
	}
	if err := r.Client.Set(ctx, r.Key, b, 0).Err(); err != nil {
		return fmt.Errorf("write state to %s: %w", r.Where(), err)
	}
	return nil
}

// List reads the records whose keys match pattern (every status).
func (r Redis) List(ctx context.Context, pattern string) ([]*Record, error) {
	var records []*Record
	iter := r.Client.Scan(ctx, 0, pattern, 100).Iterator()
	for iter.Next(ctx) {
		b, err := r.Client.Get(ctx, iter.Val()).Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if rec, err := Decode(b); err == nil {
			records = append(records, rec)
		}
	}
	return records, iter.Err()
}
