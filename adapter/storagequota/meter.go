// Package storagequota is the account.Storage of the control plane: it meters what each account keeps in the
// event store, against the account's storage quota and the installation's storage budget, and trims what was
// already delivered when either fills.
//
// What an account keeps is its footprint: the retention.maxBytes of each of its streams that has a size of its own
// (a bus with its own maxBytes, its dead letters), reserved whole whatever they hold, plus the bytes its streams
// without a size hold (buses with no maxBytes of their own, its archives: history kept on purpose, never trimmed). The installation's footprint adds its own streams
// (worker state, audit records) to every account's. The meter reads every stream's size and limits from JetStream
// every Interval when JetStream's usage changed: the bytes stored, the bytes its streams with a size of their own
// reserve, or the number of streams (another replica's bus created, resized or deleted changes one of them). Only the
// installation's own streams are read when they account for the change, and every stream at least every 5 minutes
// (fullReadingEvery). A reservation (Reserve) counts at once, and until a reading shows the bus's stream with that
// size, so two buses created in a row are both counted.
//
// History goes first: when an account's footprint reaches TrimAt of its quota, or the installation's reaches TrimAt
// of its budget, or a bus with a size of its own holds TrimAt of it, the meter deletes the events every consumer
// acknowledged (stream.TrimDelivered): the router has routed them and every target delivered or dead-lettered its
// copy. What is left is what targets, the router or sources have still to read, which is never deleted to make
// room: when it alone fills the quota, PutEvents and webhooks of that account are refused
// (account.ErrStorageQuotaExceeded) until targets catch up, and other accounts are unaffected.
package storagequota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/stream"
)

// Defaults of the meter.
const (
	// DefaultQuota is an account's storage quota: the installation's largest bus retention by default
	// (--max-bus-retention-mib), so that an account can hold one bus of the largest size.
	DefaultQuota = int64(10 << 30)
	// DefaultInterval is how often stream sizes are read.
	DefaultInterval = 2 * time.Second
	// DefaultTrimAt is the fraction of a quota, budget or bus size at which delivered events are trimmed.
	DefaultTrimAt = 0.8
)

// Buses tells which account a bus belongs to.
type Buses interface {
	GetByID(ctx context.Context, id string) (*bus.Bus, error)
}

// Footprint is what an account, or the installation, keeps: Reserved by streams with a size of their own, Used by
// streams without one.
type Footprint struct {
	Reserved int64
	Used     int64
}

// Bytes is the footprint counted against a quota or a budget.
func (f Footprint) Bytes() int64 { return f.Reserved + f.Used }

// Meter meters and trims. Set JS, Names and Buses; Run reads sizes until its context ends.
type Meter struct {
	JS    jetstream.JetStream
	Names stream.Names
	Buses Buses
	// Quota is every account's storage quota in bytes (DefaultQuota when 0).
	Quota int64
	// Budget is the installation's storage budget in bytes; 0 leaves it to the event store's own limit.
	Budget int64
	// Interval overrides DefaultInterval; TrimAt overrides DefaultTrimAt.
	Interval time.Duration
	TrimAt   float64
	Logger   *slog.Logger

	mu       sync.RWMutex
	accounts map[string]Footprint
	total    Footprint
	// pending are the reservations of buses whose streams a reading did not show yet with their new size.
	pending map[string]reservation
	owners  sync.Map // bus id → account id

	// What the last full reading saw of JetStream's account usage, and when: an interval in which the usage did
	// not change skips the listing of every stream (at thousands of buses it was the meter's whole cost). fullEvery
	// is how long the next full reading may wait while the usage stays the same.
	last      usage
	lastFull  time.Time
	fullEvery time.Duration
	// own are the installation's own streams at the last reading (worker state, the metrics history, audit
	// records): written while everything else idles, they are read one by one rather than by a listing of every
	// stream when only they changed.
	own []streamUse
}

// fullReadingEvery bounds how long the meter goes without listing every stream while JetStream's usage stays the
// same. What the usage does not show is a change that leaves all three figures as they were: within one Interval,
// a stream created and another of the same size deleted, or sizes swapped between two streams, by another replica.
// A listing that found a bus's stream whose bus it could not read (created by another replica and not committed yet,
// or being deleted) waits only unownedReadingEvery.
const (
	fullReadingEvery    = 5 * time.Minute
	unownedReadingEvery = 30 * time.Second
)

// usage is what JetStream tells of all streams at once (its account info): bytes stored, bytes reserved by streams
// with a size of their own, and the number of streams.
type usage struct {
	store, reserved uint64
	streams         int
}

// reservation is what Reserve took for one bus: maxBytes in place of prev, counted for account until a reading
// shows its stream with maxBytes, or pendingFor passed.
type reservation struct {
	account  string
	maxBytes int64
	prev     int64
	at       time.Time
}

// pendingFor bounds how long a reservation no reading confirmed counts (a stream the control plane failed to change
// and whose Unreserve was lost with its process).
const pendingFor = time.Minute

var _ account.Storage = (*Meter)(nil)

// streamUse is one stream as read from JetStream.
type streamUse struct {
	name     string
	account  string
	busID    string
	maxBytes int64
	bytes    int64
	bus      bool
}

// Run reads sizes and trims every Interval until ctx ends. The first reading happens before it waits.
func (m *Meter) Run(ctx context.Context) {
	interval := m.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := m.Check(ctx); err != nil && ctx.Err() == nil {
			m.logger().Warn("metering the event store", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check reads every stream's size, trims what was delivered where a quota, the budget or a bus's own size is
// reached, and keeps the footprints that AdmitPut and Reserve answer from.
func (m *Meter) Check(ctx context.Context) error {
	ai, err := m.JS.AccountInfo(ctx)
	if err != nil {
		return fmt.Errorf("reading the event store's usage: %w", err)
	}
	now := usage{store: ai.Store, reserved: ai.ReservedStore, streams: ai.Streams}
	m.mu.RLock()
	recent := time.Since(m.lastFull) < m.fullEvery && len(m.pending) == 0
	same := recent && now == m.last
	// The installation's own streams may account for a change of the bytes stored alone.
	ownMayTell := recent && now.reserved == m.last.reserved && now.streams == m.last.streams
	m.mu.RUnlock()
	if same {
		return nil // nothing was stored, trimmed, expired, created, resized or deleted since the last reading
	}
	if ownMayTell && m.onlyOwnChanged(ctx, now.store) {
		return nil
	}
	uses, unowned, err := m.read(ctx)
	if err != nil {
		return err
	}
	accounts, total := footprints(uses)
	trim := m.toTrim(uses, accounts, total)
	if len(trim) > 0 {
		for _, u := range trim {
			freed, err := stream.TrimDelivered(ctx, m.JS, u.name)
			if err != nil {
				m.logger().Warn("trimming delivered events", "stream", u.name, "err", err)
				continue
			}
			if freed > 0 {
				m.logger().Info("trimmed delivered events", "stream", u.name, "account", u.account, "freedBytes", freed)
			}
		}
		if uses, unowned, err = m.read(ctx); err != nil {
			return err
		}
		accounts, total = footprints(uses)
		ai = nil // trimmed: the usage read before changed
	}
	m.store(uses, accounts, total)
	m.mu.Lock()
	m.own = m.own[:0:0]
	for _, u := range uses {
		if u.account == "" {
			m.own = append(m.own, u)
		}
	}
	m.fullEvery = fullReadingEvery
	if unowned {
		m.fullEvery = unownedReadingEvery
	}
	if ai != nil {
		m.last, m.lastFull = now, time.Now()
	} else {
		m.lastFull = time.Time{}
	}
	m.mu.Unlock()
	return nil
}

// onlyOwnChanged reads the installation's own streams one by one and reports whether they account for the whole
// change of JetStream's usage to store (the usage read just before) since the last reading; if so it keeps their
// sizes as that reading's. Anything else (an account's stream changed too, one of them is gone or new, a write
// between the two reads) answers false: the caller lists every stream.
func (m *Meter) onlyOwnChanged(ctx context.Context, store uint64) bool {
	m.mu.RLock()
	own, last := slices.Clone(m.own), m.last.store
	m.mu.RUnlock()
	var delta, used int64
	for i, u := range own {
		s, err := m.JS.Stream(ctx, u.name)
		if err != nil {
			return false
		}
		info := s.CachedInfo()
		if info.Config.MaxBytes != u.maxBytes {
			return false
		}
		delta += int64(info.State.Bytes) - u.bytes
		if u.maxBytes <= 0 {
			used += int64(info.State.Bytes) - u.bytes
		}
		own[i].bytes = int64(info.State.Bytes)
	}
	if int64(last)+delta != int64(store) {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last.store != last {
		return false // a full reading came in between
	}
	m.own, m.last.store = own, store
	m.total.Used += used
	return true
}

// store keeps a reading, with the reservations it does not show yet.
func (m *Meter) store(uses []streamUse, accounts map[string]Footprint, total Footprint) {
	sizes := make(map[string]int64, len(uses))
	for _, u := range uses {
		if u.bus {
			sizes[u.busID] = max(u.maxBytes, 0)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for busID, r := range m.pending {
		size, ok := sizes[busID]
		if (ok && size == r.maxBytes) || time.Since(r.at) > pendingFor {
			delete(m.pending, busID)
			continue
		}
		delta := r.maxBytes - size
		f := accounts[r.account]
		f.Reserved += delta
		accounts[r.account] = f
		total.Reserved += delta
	}
	m.accounts, m.total = accounts, total
}

// read lists every stream of the event store, with the account it belongs to ("" for the installation's own), and
// whether it left out a bus's stream whose bus it could not read.
func (m *Meter) read(ctx context.Context) (uses []streamUse, unowned bool, err error) {
	busPrefix, dlqPrefix, logPrefix := m.Names.BusStream(""), m.Names.DLQStream(""), m.Names.LogStream("")
	archivePrefix := m.Names.ArchivePrefix()
	lister := m.JS.ListStreams(ctx)
	for info := range lister.Info() {
		u := streamUse{name: info.Config.Name, maxBytes: info.Config.MaxBytes, bytes: int64(info.State.Bytes)}
		switch {
		case strings.HasPrefix(u.name, busPrefix):
			acc, ok := m.owner(ctx, strings.TrimPrefix(u.name, busPrefix))
			if !ok {
				unowned = true
				continue
			}
			u.account, u.bus, u.busID = acc, true, strings.TrimPrefix(u.name, busPrefix)
		case strings.HasPrefix(u.name, dlqPrefix):
			u.account = strings.TrimPrefix(u.name, dlqPrefix)
		case strings.HasPrefix(u.name, logPrefix):
			u.account = strings.TrimPrefix(u.name, logPrefix)
		case strings.HasPrefix(u.name, archivePrefix):
			// <cluster>_ARCHIVE_<account>_<archive>: history kept on purpose, counted, never trimmed
			u.account, _, _ = strings.Cut(strings.TrimPrefix(u.name, archivePrefix), "_")
		default:
			// the installation's own (worker state, audit records): in the budget, in no account's quota
		}
		uses = append(uses, u)
	}
	if err := lister.Err(); err != nil {
		return nil, false, err
	}
	return uses, unowned, nil
}

// owner returns the account of a bus, remembered once read; false for a stream whose bus is gone.
func (m *Meter) owner(ctx context.Context, busID string) (string, bool) {
	if acc, ok := m.owners.Load(busID); ok {
		return acc.(string), true
	}
	b, err := m.Buses.GetByID(ctx, busID)
	if err != nil {
		if !errors.Is(err, bus.ErrNotFound) {
			m.logger().Warn("reading the account of a bus's stream", "bus", busID, "err", err)
		}
		return "", false
	}
	m.owners.Store(busID, b.AccountID())
	return b.AccountID(), true
}

func footprints(uses []streamUse) (map[string]Footprint, Footprint) {
	accounts := map[string]Footprint{}
	var total Footprint
	for _, u := range uses {
		var f Footprint
		if u.maxBytes > 0 {
			f.Reserved = u.maxBytes
		} else {
			f.Used = u.bytes
		}
		total.Reserved, total.Used = total.Reserved+f.Reserved, total.Used+f.Used
		if u.account != "" {
			a := accounts[u.account]
			accounts[u.account] = Footprint{Reserved: a.Reserved + f.Reserved, Used: a.Used + f.Used}
		}
	}
	return accounts, total
}

// toTrim picks the bus streams to trim: those of accounts at TrimAt of their quota, all of them when the
// installation is at TrimAt of its budget, and those with a size of their own that hold TrimAt of it. Largest first.
func (m *Meter) toTrim(uses []streamUse, accounts map[string]Footprint, total Footprint) []streamUse {
	at := m.TrimAt
	if at <= 0 || at > 1 {
		at = DefaultTrimAt
	}
	quota := float64(m.quota()) * at
	budget := m.Budget > 0 && float64(total.Bytes()) >= float64(m.Budget)*at
	var out []streamUse
	for _, u := range uses {
		if !u.bus || u.bytes == 0 {
			continue
		}
		if budget || float64(accounts[u.account].Bytes()) >= quota || (u.maxBytes > 0 && float64(u.bytes) >= float64(u.maxBytes)*at) {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].bytes > out[j].bytes })
	return out
}

func (m *Meter) quota() int64 {
	if m.Quota > 0 {
		return m.Quota
	}
	return DefaultQuota
}

// Footprint returns what the account keeps as last read.
func (m *Meter) Footprint(accountID string) Footprint {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.accounts[accountID]
}

// Total returns what the installation keeps as last read.
func (m *Meter) Total() Footprint {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.total
}

// AdmitPut refuses while the account's footprint fills its quota, or the installation's fills its budget.
func (m *Meter) AdmitPut(accountID string) error {
	m.mu.RLock()
	f, total := m.accounts[accountID], m.total
	m.mu.RUnlock()
	if q := m.quota(); f.Bytes() >= q {
		return retryLater(account.ErrStorageQuotaExceeded.With("account %q keeps %d MiB in the event store, its storage quota: "+
			"events wait for targets that are paused, failing or slow, or buses reserve it (retention.maxBytes); "+
			"put the events again once targets caught up, or ask an operator to raise --account-storage-quota-mib",
			accountID, q>>20))
	}
	if m.Budget > 0 && total.Bytes() >= m.Budget {
		return retryLater(account.ErrStorageBudgetExceeded.With("the installation keeps %d MiB in the event store, its storage "+
			"budget (--storage-budget-mib); put the events again later", m.Budget>>20))
	}
	return nil
}

// Reserve takes maxBytes for a bus of the account in place of before, when the difference fits its quota and the
// budget. It counts at once, and until a reading shows the bus's stream with that size.
func (m *Meter) Reserve(_ context.Context, accountID, busID, field string, maxBytes, before int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.accounts == nil {
		m.accounts = map[string]Footprint{}
	}
	if m.pending == nil {
		m.pending = map[string]reservation{}
	}
	f := m.accounts[accountID]
	if r, ok := m.pending[busID]; ok {
		before = r.maxBytes // counted already, not read yet
	}
	delta := maxBytes - before
	if delta > 0 {
		if q := m.quota(); f.Bytes()+delta > q {
			return m.refuse(account.ErrStorageQuotaExceeded, field, "account %q keeps %d MiB of its storage quota of %d MiB; "+
				"%d MiB more do not fit: a smaller retention.maxBytes, or 0 (no size of its own), may",
				accountID, f.Bytes()>>20, q>>20, delta>>20)
		}
		if m.Budget > 0 && m.total.Bytes()+delta > m.Budget {
			return m.refuse(account.ErrStorageBudgetExceeded, field, "the installation keeps %d MiB of its storage budget "+
				"of %d MiB; %d MiB more do not fit: a smaller retention.maxBytes, or 0 (no size of its own), may",
				m.total.Bytes()>>20, m.Budget>>20, delta>>20)
		}
	}
	m.add(accountID, delta)
	m.pending[busID] = reservation{account: accountID, maxBytes: maxBytes, prev: before, at: time.Now()}
	return nil
}

func (m *Meter) add(accountID string, delta int64) {
	f := m.accounts[accountID]
	f.Reserved += delta
	m.accounts[accountID] = f
	m.total.Reserved += delta
}

// Unreserve forgets the reservation of a bus whose change did not happen.
func (m *Meter) Unreserve(busID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unreserve(busID)
}

func (m *Meter) unreserve(busID string) {
	r, ok := m.pending[busID]
	if !ok {
		return
	}
	delete(m.pending, busID)
	m.add(r.account, r.prev-r.maxBytes)
}

// RetryAfter is when events refused for want of room are worth putting again.
const RetryAfter = 5 * time.Second

func retryLater(e *domain.Error) *domain.Error {
	e.RetryAfter = RetryAfter
	return e
}

func (m *Meter) refuse(sentinel *domain.Error, field, format string, args ...any) error {
	e := sentinel.With(format, args...)
	if field != "" {
		e.Field = field
	}
	return e
}

func (m *Meter) logger() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.Default()
}
