package delivery

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Parking. A task reading a consumer holds a pull request at all times: one request every PullExpiry, answered by
// the server when it expires, and a heartbeat every half of it. For one busy target that is nothing; for the
// thousands of idle tasks of a worker running thousands of buses it is most of the worker's and the server's idle
// CPU. So a task that received nothing for ParkAfter, holds no record and whose consumer has nothing pending
// parks: it gives up its pull request and subscribes instead (core NATS, no JetStream state) to its consumer's
// filter subjects, where every publish to the bus or rule it reads also arrives. The first such message, a
// reconnect of the connection, or a check of the consumer that finds records pending wakes it; it then pulls as
// before. A parked task costs the server one subscription, the client the task's waiting goroutine (its
// subscriptions are channel subscriptions on the worker's one channel, see Wakes), and nothing per second.
//
// Nothing is missed: the subscriptions are in place (flushed) before the consumer is read, so a record stored
// before them is counted pending by that read, and one published after them wakes the task, as does a reconnect
// (a publish may have gone by while the connection was down). A record published before the subscriptions but
// still on its way into the stream when the consumer was read (the server stores asynchronously) is found by a
// check of the consumer parkFirstCheck (1 s) after parking. Later checks, every ParkCheck (±10%), are a safety net
// only, for a record that reached the consumer without a publish to its subjects (which nothing in this product
// does). At 2,000 buses a check of every parked task every 2 min was a twentieth of the idle process's CPU, server
// and client. Every 10 min, a round of 4,000 checks still took about 1.8 s of CPU (the server reads each consumer's
// state file from disk to answer), most of a core's hundredth over the minutes it came in; it is now every 30 min.
// A record that reached the pull request being given up comes back after its ack wait, as it would after any lost
// delivery; its publish woke the task.
const (
	// ParkAfter is how long a task waits for a record before it parks.
	ParkAfter = 10 * time.Second
	// ParkCheck is the time between two checks of a parked task's consumer after the first.
	ParkCheck = 30 * time.Minute
	// parkFirstCheck is the time from parking to the first check of the consumer (ParkCheck when shorter).
	parkFirstCheck = time.Second
	parkTimeout    = 5 * time.Second
)

// Wakes wakes the parked tasks of one connection: at the first message on one of a task's subscriptions, and at a
// reconnect of the connection (a publish may have gone by while it was down), which one status listener follows for
// all of them (a listener per parked task took the connection's lock for writing twice per park, which in a wake
// storm of thousands of tasks held up every publish and answer on the connection). Every parked subscription is a
// channel subscription on one channel, read by one goroutine: nats.go runs a goroutine for every subscription with
// a callback, which at 2,000 idle buses was 6,000 goroutines waiting. The subscriptions are not auto-unsubscribed
// (nats.go reads a channel subscription's limit without its lock as messages arrive, a data race with setting it);
// the reader unsubscribes a task's subscriptions as soon as it wakes the task, one task at a time, so the messages
// of a busy subject stop at once. Should the channel ever fill, nats.go drops a message (and reports a slow
// consumer): a task may then miss its wake, so the reader, which sees the channel full, wakes every parked task
// (each pulls, finds what is pending or nothing, and parks again). Safe for concurrent use.
type Wakes struct {
	nc     *nats.Conn
	status chan nats.Status
	msgs   chan *nats.Msg // every parked subscription's messages
	done   chan struct{}  // closed by Stop
	stop   sync.Once

	mu     sync.Mutex
	next   chan struct{}                   // closed at the next reconnect
	parked map[*nats.Subscription]*parking // subscriptions of the tasks not woken yet
}

// wakeRoom is the room of a connection's channel for its parked subscriptions' messages: the first of each wakes a
// task, the few that follow before the reader unsubscribes it are dropped.
const wakeRoom = 4096

// WatchWakes follows nc's reconnects and its parked tasks' subscriptions until Stop.
func WatchWakes(nc *nats.Conn) *Wakes { return watchWakes(nc, wakeRoom) }

func watchWakes(nc *nats.Conn, room int) *Wakes {
	w := &Wakes{nc: nc, status: nc.StatusChanged(nats.CONNECTED), msgs: make(chan *nats.Msg, room),
		done: make(chan struct{}), next: make(chan struct{}), parked: make(map[*nats.Subscription]*parking)}
	go func() {
		for range w.status { // until Stop closes it
			w.mu.Lock()
			close(w.next)
			w.next = make(chan struct{})
			w.mu.Unlock()
		}
	}()
	go w.read()
	return w
}

// reconnected returns a channel closed at the connection's next reconnect.
func (w *Wakes) reconnected() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next
}

// subscribe subscribes p to subject, unless a message already woke it.
func (w *Wakes) subscribe(p *parking, subject string) error {
	w.mu.Lock() // before the subscription: its first message waits for it to be known here
	defer w.mu.Unlock()
	if p.woke {
		return nil
	}
	sub, err := w.nc.ChanSubscribe(subject, w.msgs)
	if err != nil {
		return err
	}
	p.subs = append(p.subs, sub)
	w.parked[sub] = p
	return nil
}

// WakeDropped reports whether err, which nats.go reported for sub, is a message it dropped on a parked task's
// subscription because the channel of the connection's Wakes had no room: nothing is lost by it, since the reader,
// finding that channel full, wakes every parked task. A wake storm at tens of thousands of parked tasks had nats.go
// report thousands of them. Wakes' subscriptions are the worker's only channel subscriptions.
func WakeDropped(sub *nats.Subscription, err error) bool {
	return sub != nil && errors.Is(err, nats.ErrSlowConsumer) && sub.Type() == nats.ChanSubscription
}

// read wakes the task of every message's subscription, or every parked task when the channel filled.
func (w *Wakes) read() {
	for {
		select {
		case <-w.done:
			return
		case m := <-w.msgs:
			// Full before this receive, or filled again since: a message may have been dropped meanwhile (a drop
			// needs a full channel, and only this goroutine empties it).
			full := len(w.msgs) >= cap(w.msgs)-1
			w.mu.Lock()
			var woken []*parking
			if p, ok := w.parked[m.Sub]; ok && !full {
				woken = append(woken, w.wake(p))
			} else if full {
				for _, p := range w.parked {
					if !p.woke {
						woken = append(woken, w.wake(p))
					}
				}
			}
			w.mu.Unlock()
			for _, p := range woken {
				for _, s := range p.subs {
					_ = s.Unsubscribe()
				}
			}
		}
	}
}

// forget marks p woken and forgets its subscriptions; it reports whether p was woken before. w.mu is held.
func (w *Wakes) forget(p *parking) (woke bool) {
	woke, p.woke = p.woke, true
	for _, s := range p.subs {
		delete(w.parked, s)
	}
	return woke
}

// wake wakes p and forgets its subscriptions (the caller unsubscribes them). w.mu is held.
func (w *Wakes) wake(p *parking) *parking {
	w.forget(p)
	close(p.woken)
	return p
}

// release forgets p's subscriptions and unsubscribes them, unless a message woke p (and the reader unsubscribed them).
func (w *Wakes) release(p *parking) {
	w.mu.Lock()
	woke := w.forget(p)
	w.mu.Unlock()
	if !woke {
		for _, s := range p.subs {
			_ = s.Unsubscribe()
		}
	}
}

// Stop stops following the connection; its parked tasks are no longer woken by their subscriptions. Later calls do
// nothing.
func (w *Wakes) Stop() {
	w.stop.Do(func() {
		w.nc.RemoveStatusListener(w.status)
		close(w.done)
	})
}

// Gate bounds how many tasks of a worker park or wake at the same time (subscribing, reading their consumer,
// starting to pull again): the first event after a quiet spell wakes every parked task of every bus
// it reaches, and thousands of them doing so together queue on their connection's lock and the server's loops,
// where the worker's other traffic waits with them. A task holds a place only for its transition, not while it
// works or waits. The zero Gate (nil) bounds nothing.
type Gate chan struct{}

// NewGate returns a gate of n places.
func NewGate(n int) Gate { return make(Gate, n) }

// DefaultGate is the number of places of a worker's gate.
const DefaultGate = 16

// enter takes a place, or reports false when stopping closes first.
func (g Gate) enter(stopping <-chan struct{}) bool {
	if g == nil {
		return true
	}
	select {
	case g <- struct{}{}:
		return true
	case <-stopping:
		return false
	}
}

// leave gives the place back.
func (g Gate) leave() {
	if g != nil {
		<-g
	}
}

// DefaultWaking is the number of places of a worker's waking gate (TaskConfig.Waking).
const DefaultWaking = 64

// WakeHold is the longest a woken task keeps its place in the waking gate: until its first record is handled, or
// this long, whichever comes first. A target that does not answer holds a place no longer than this.
const WakeHold = 250 * time.Millisecond

// waking is a place in a worker's waking gate, held by a woken task from before it pulls again until its first
// record is handled, or for WakeHold at most. The first event after a quiet spell wakes every parked task it reaches
// (thousands, in a simulated cluster); the gate of the transitions lets them pull again 16 at a time, but each then
// handled its record at once, all of them together on a starved machine, and with 12,000 tasks in one 2-core process
// a storm delivered 139–1,212 of 27,000 events twice (0–13 with this gate, docs/benchmarks.md). A task waiting for
// a place is blocked, not runnable, and holds no pull request.
type waking struct {
	once  sync.Once
	gate  Gate
	timer *time.Timer
}

// hold takes a place of g (false when stopping closes first) and gives it back when released or after d.
func (g Gate) hold(d time.Duration, stopping <-chan struct{}) (*waking, bool) {
	if g == nil {
		return nil, true
	}
	if !g.enter(stopping) {
		return nil, false
	}
	w := &waking{gate: g}
	w.timer = time.AfterFunc(d, w.release)
	return w, true
}

// release gives the place back, once; a nil waking holds none.
func (w *waking) release() {
	if w == nil {
		return
	}
	w.once.Do(func() {
		w.timer.Stop()
		w.gate.leave()
	})
}

// parking is a parked task's subscriptions and wakes.
type parking struct {
	wakes *Wakes
	// subs and woke are guarded by wakes.mu; subs is not changed once woke is set.
	subs  []*nats.Subscription
	woke  bool
	woken chan struct{} // closed at the first message of subs
	// reconnected is closed when the connection reconnects; own is the task's own Wakes, when the task has none.
	reconnected <-chan struct{}
	own         *Wakes
}

func (p *parking) close() {
	p.wakes.release(p)
	if p.own != nil {
		p.own.Stop()
	}
}

// parks reports whether the task parks when idle.
func (t *Task) parks() bool { return t.cfg.Conn != nil && t.cfg.ParkAfter > 0 }

// next returns the next record; when the task parks, it gives up after ParkAfter with nats.ErrTimeout.
func (t *Task) next() (jetstream.Msg, error) {
	if t.parks() {
		return t.iter.Next(jetstream.NextMaxWait(t.cfg.ParkAfter))
	}
	return t.iter.Next()
}

// filterSubjects returns the subjects the task's consumer reads; none when it reads its whole stream.
func (t *Task) filterSubjects() []string {
	c := t.cfg.Consumer.CachedInfo().Config
	if c.FilterSubject != "" {
		return []string{c.FilterSubject}
	}
	return c.FilterSubjects
}

// tryPark parks the task if its consumer has nothing pending: it subscribes to the consumer's subjects, reads the
// consumer, and then drains the iterator (whose records, if any arrive still, are read as usual before the reader
// sees it closed and waits in unpark). It is called by the reader loop only, when the task holds no record.
func (t *Task) tryPark() {
	subjects := t.filterSubjects()
	if len(subjects) == 0 {
		t.cfg.ParkAfter = 0 // a whole-stream consumer: nothing to subscribe to
		return
	}
	if !t.cfg.Gate.enter(t.stopping) {
		return
	}
	defer t.cfg.Gate.leave()
	ctx, cancel := context.WithTimeout(t.writeCtx, parkTimeout)
	defer cancel()
	p := &parking{wakes: t.cfg.Wakes, woken: make(chan struct{})}
	if p.wakes == nil {
		p.own = WatchWakes(t.cfg.Conn)
		p.wakes = p.own
	}
	// Reconnects are followed from before the subscriptions: one after they were made wakes the task.
	p.reconnected = p.wakes.reconnected()
	for _, s := range subjects {
		if err := p.wakes.subscribe(p, s); err != nil {
			p.close()
			t.log.Debug("not parking: subscribing to the consumer's subjects", "subject", s, "err", err)
			return
		}
	}
	if err := t.cfg.Conn.FlushWithContext(ctx); err != nil {
		p.close()
		return
	}
	if !t.consumerIdle(ctx) {
		p.close()
		return
	}
	t.parked = p
	t.n.parked.Add(1)
	t.asleep.Store(true) // after the count: Asleep reads asleep first
	t.iter.Drain()
	if i, ok := t.cfg.Sink.(connector.Idler); ok {
		i.Idle() // the task holds no record: no Write runs
	}
}

// consumerIdle reads the consumer: true when it has no record pending delivery or acknowledgement.
func (t *Task) consumerIdle(ctx context.Context) bool {
	info, err := t.cfg.Consumer.Info(ctx)
	return err == nil && info.NumPending == 0 && info.NumAckPending == 0
}

// unpark waits, parked, until something wakes the task, then pulls again. It returns false when the task stops
// or failed meanwhile.
func (t *Task) unpark() bool {
	p := t.parked
	t.parked = nil
	closed := false
	defer func() {
		if !closed {
			p.close()
		}
	}()
	timer := time.NewTimer(min(parkFirstCheck, t.cfg.ParkCheck))
	defer timer.Stop()
	for woken := false; !woken; {
		select {
		case <-t.stopping:
			return false
		case <-p.woken:
			woken = true
		case <-p.reconnected:
			woken = true // a publish may have gone by while the connection was down
		case <-timer.C:
			if !t.cfg.Gate.enter(t.stopping) {
				return false
			}
			ctx, cancel := context.WithTimeout(t.writeCtx, parkTimeout)
			info, err := t.cfg.Consumer.Info(ctx)
			cancel()
			t.cfg.Gate.leave()
			switch {
			case errors.Is(err, jetstream.ErrConsumerNotFound), errors.Is(err, jetstream.ErrStreamNotFound):
				t.fail(fmt.Errorf("reading the consumer: %w", err))
				return false
			case err == nil && info.NumPending == 0 && info.NumAckPending == 0:
				timer.Reset(t.cfg.ParkCheck - t.cfg.ParkCheck/10 + rand.N(t.cfg.ParkCheck/5+1))
			default: // records pending, or the consumer could not be read: pulling tells which
				woken = true
			}
		}
	}
	t.asleep.Store(false)
	w, ok := t.cfg.Waking.hold(t.cfg.WakeHold, t.stopping)
	if !ok {
		return false
	}
	if !t.cfg.Gate.enter(t.stopping) {
		w.release()
		return false
	}
	p.close()
	closed = true
	iter, err := t.cfg.Consumer.Messages(jetstream.PullMaxMessages(t.cfg.MaxInFlight), jetstream.PullExpiry(PullExpiry))
	t.cfg.Gate.leave()
	if err != nil {
		w.release()
		t.fail(fmt.Errorf("reading the consumer: %w", err))
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.isStopping() { // halt drained the previous iterator: this one is not read
		iter.Stop()
		w.release()
		return false
	}
	t.iter = iter
	t.woke = w
	return true
}
