package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisSession is one fleet job's lock and record in one Redis, so that a run
// costs as few round trips as the guarantees allow:
//
//   - Lock takes the lock, its fencing token and the record in one script;
//     Record under that lease serves that record (the one Redis held when
//     the lock was taken: nobody else can write it while the lock is held,
//     and a stale holder's writes are refused), once, and only while the
//     lease is not lost;
//   - the start of the run is written in one fenced script, while the command
//     starts;
//   - the end of the run is written, fenced, and the lock released in one
//     script; Unlock then sends nothing.
//
// LockStart spares the second: it writes the start in the script that takes
// the lock, when Redis still holds exactly what this session wrote last
// (nobody ran nor wrote since), so that a run costs two round trips. A
// skipped slot (done) costs the lock and the release; a busy lock, the lock.
// Every write under a lease is fenced: it is refused (ErrFenced) once another
// holder has taken the lock, so a holder cut off by a partition never
// overwrites the record of the one that ran after it.
//
// The record is bytes to a RedisSession, which never looks inside them:
// internal/fleet pairs it with the job's record store (state.Redis), which
// parses what Record serves and writes outside a lease, to make the job's
// state.Store.
type RedisSession struct {
	Redis            // the lock
	RecordKey string // the record's key
	// RecordMax is the largest record, in bytes: a read with the lock stops
	// after RecordMax+1 bytes (so that a larger one shows as such, never
	// read whole), and a start larger than it is never written with the
	// lock. 0: no limit.
	RecordMax int

	mu sync.Mutex
	// held is the lease of the run under way; nil between runs.
	held *redisLease
	// fetched says record is the record read with held, not served yet.
	fetched bool
	record  []byte
	// started says a start of the run (running: true) was written under
	// held: a write of a record not running after it is the run's end.
	started bool
	// written is what this session's last write stored, as Redis confirmed
	// it; nil when that is not known (no write yet, or the last one failed,
	// was refused, or its answer never came).
	written []byte
}

// acquireLoad is acquire (see there), and also reads the record (up to
// byte ARGV[3]: -1 for all of it; "" for none): {1, token, record} when the
// lock was taken, {0, holder's value} when not.
var acquireLoad = redis.NewScript(takeLock +
	"  return {1, token, redis.call('GETRANGE', KEYS[3], 0, ARGV[3])}\n" + orHolder)

// acquireStart is acquireLoad, and also writes the start of the run (ARGV[5])
// with the lock when the record is exactly ARGV[4] (what this session wrote
// last; "" never matches; compared by length first, so that a huge value is
// never read whole): {1, token, 1} when it wrote it, {1, token, 0, record}
// when not, {0, holder's value} when the lock was not free.
var acquireStart = redis.NewScript(takeLock + `
  if ARGV[4] ~= '' and redis.call('STRLEN', KEYS[3]) == #ARGV[4] and redis.call('GET', KEYS[3]) == ARGV[4] then
    redis.call('SET', KEYS[3], ARGV[5])
    return {1, token, 1}
  end
  return {1, token, 0, redis.call('GETRANGE', KEYS[3], 0, ARGV[3])}
` + orHolder)

// fencedSave writes the record (KEYS[1]) unless another holder has taken the
// lock (KEYS[2]) since the lease of value ARGV[2] and token ARGV[3]: the key
// holds another value, or the fencing counter (KEYS[3]) is past the token;
// or unless Redis lost its data since the lease was taken: the counter,
// which every acquisition sets, is gone. A write held up in the network
// until after a FLUSHALL or a restart would otherwise bring back a record
// older than the runs handed out meanwhile, which no instance could tell
// from the last one (the next holder finds the record gone instead, and
// goes on from the floor). With ARGV[4] = "1" it also releases the key if
// it is still ours. 0: refused; 1: written; 2: written, and the key is no
// longer ours (released, or gone already).
var fencedSave = redis.NewScript(`
local v = redis.call('GET', KEYS[2])
local f = redis.call('GET', KEYS[3])
if (v and v ~= ARGV[2]) or not f or tonumber(f) > tonumber(ARGV[3]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[4] == '1' then
  if v then
    redis.call('DEL', KEYS[2])
  end
  return 2
end
return 1
`)

// Lock takes the lock as Redis.Lock does, and reads the record with it.
func (s *RedisSession) Lock(ctx context.Context, wait time.Duration) (Lease, error) {
	l, res, err := s.take(ctx, wait, acquireLoad, s.keys(), nil, s.readTo())
	if err != nil {
		return nil, err
	}
	s.took(l, false, res[2:])
	return l, nil
}

// readTo is the last byte of the record read with the lock: -1 for all.
func (s *RedisSession) readTo() int {
	if s.RecordMax <= 0 {
		return -1
	}
	return s.RecordMax
}

// LockStart tries the lock once (no wait), and writes start, the start of
// the run, with it when Redis holds exactly the record this session wrote
// last: nobody ran, nor wrote the record, since; start, which the caller
// made from its own copy of that record, is then what the run would write
// after reading it. started says it was written: the run's end is written
// with the release, as after a WriteRecord of the start. Otherwise (the
// record changed, or what this session wrote last is not known, or there
// is no start: empty) it is Lock: the record read with the lock is served
// by the next Record.
func (s *RedisSession) LockStart(ctx context.Context, start []byte) (lease Lease, started bool, err error) {
	s.mu.Lock()
	expected := s.written
	s.mu.Unlock()
	if len(start) == 0 || (s.RecordMax > 0 && len(start) > s.RecordMax) || len(expected) == 0 {
		// Nothing to compare with, or a start Record would not read back.
		lease, err := s.Lock(ctx, 0)
		return lease, false, err
	}
	undo := func(ctx context.Context, value string) { s.undoLate(ctx, value, start, expected) }
	l, res, err := s.take(ctx, 0, acquireStart, s.keys(), undo, s.readTo(), expected, start)
	if err != nil {
		var busy *BusyError
		if !errors.As(err, &busy) {
			s.setWritten(nil) // the start may have been written, or not
		}
		return nil, false, err
	}
	if len(res) > 2 && res[2] == int64(1) {
		s.took(l, true, []any{string(start)})
		s.setWritten(start)
		return l, true, nil
	}
	// Someone else wrote the record since: what this session wrote is gone.
	s.setWritten(nil)
	s.took(l, false, res[min(3, len(res)):])
	return l, false, nil
}

// undoLate undoes what acquireStart may have done for a LockStart whose
// answer went unused (it stopped waiting, or the answer was lost): the
// record put back as it was (prev) if it holds the start, and the key
// released, in one script, as long as the key holds the lease's value:
// nobody else can have taken the lock, nor written the record under it,
// since.
func (s *RedisSession) undoLate(ctx context.Context, value string, start, prev []byte) {
	keys := []string{s.Key, s.RecordKey}
	_ = runScript(ctx, s.Client, undoStart, keys, value, start, prev).Err()
}

// undoStart is the script of RedisSession.undoLate: the lock KEYS[1], the
// record KEYS[2]; the lease's value ARGV[1], the start ARGV[2], the record
// before it ARGV[3]. The record is compared by length first: a huge value
// is never read whole.
var undoStart = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if redis.call('STRLEN', KEYS[2]) == #ARGV[2] and redis.call('GET', KEYS[2]) == ARGV[2] then
  redis.call('SET', KEYS[2], ARGV[3])
end
return redis.call('DEL', KEYS[1])
`)

// keys are the keys of the acquiring scripts: the lock, its fencing
// counter, the record.
func (s *RedisSession) keys() []string {
	return []string{s.Key, s.Key + ":fence", s.RecordKey}
}

// took makes l the lease under way; started says the run's start is
// written; rest is what the script answered after the token and the
// started flag: the record, as Record will serve it ("" or nothing: none).
func (s *RedisSession) took(l *redisLease, started bool, rest []any) {
	l.session = s
	b := ""
	if len(rest) > 0 {
		b, _ = rest[0].(string)
	}
	s.mu.Lock()
	s.held, s.fetched, s.record, s.started = l, true, []byte(b), started
	s.mu.Unlock()
}

// setWritten takes note of what Redis holds as this session's last write:
// nil when that is not known.
func (s *RedisSession) setWritten(b []byte) {
	s.mu.Lock()
	s.written = b
	s.mu.Unlock()
}

// forget ends what the session knows of lease l, at its Unlock.
func (s *RedisSession) forget(l *redisLease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == l {
		s.held, s.fetched, s.record, s.started = nil, false, nil, false
	}
}

// Record returns the record read with the lease under way (empty: none),
// if it was not served yet and the lease is not lost: ok. Otherwise the
// caller reads the record itself (at start-up, outside the lock).
func (s *RedisSession) Record() (b []byte, ok bool) {
	s.mu.Lock()
	l, b, fetched := s.held, s.record, s.fetched
	s.fetched, s.record = false, nil
	s.mu.Unlock()
	if fetched && l != nil && !l.isLost() {
		return b, true
	}
	return nil, false
}

// WriteRecord writes the record b, fenced by the lease under way: the
// start of a run (running) alone, its end (not running, after a start
// under the same lease) with the release of the lock. Outside a lease
// (never, in the loop) it writes nothing and returns leased false: the
// caller writes the record as a store without a lock does.
func (s *RedisSession) WriteRecord(ctx context.Context, b []byte, running bool) (leased bool, err error) {
	s.mu.Lock()
	l := s.held
	s.fetched, s.record = false, nil // what was read is older than this
	s.written = nil                  // not known until Redis says so
	end := l != nil && s.started && !running
	if l != nil && running {
		s.started = true
	}
	s.mu.Unlock()
	if l == nil {
		return false, nil
	}
	release := "0"
	if end {
		// The run is over: the lease need not be kept any longer. Should
		// the write fail, Unlock still releases the key.
		l.stopRenewing()
		release = "1"
	}
	keys := []string{s.RecordKey, s.Key, s.Key + ":fence"}
	n, err := runScript(ctx, s.Client, fencedSave, keys, b, l.value, strconv.FormatInt(l.token, 10), release).Int64()
	switch {
	case err != nil:
		return true, fmt.Errorf("write state to %s: %w", s.where(), err)
	case n == 0:
		return true, fmt.Errorf("write state to %s with fencing token %d: %w; its record is kept", s.where(), l.token, ErrFenced)
	case n == 2:
		l.released.Store(true)
	}
	s.setWritten(b)
	return true, nil
}

// where names the record's server and key, as state.Redis does.
func (s *RedisSession) where() string { return s.Server + " key " + s.RecordKey }
