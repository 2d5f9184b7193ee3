package jetstream

import (
	"sync/atomic"
	"time"
)

// Flushing. nats-server flushes each stream's files to disk on a timer of its own, every SyncInterval: it opens
// and fsyncs the stream's state file whether the stream changed or not, and each fsync asks the disk to flush its
// cache. With thousands of streams and the product's interval of 1 s that was the largest part of an idle
// process's CPU: TestSlowScaleIdle at 2,000 buses idled at 18-20% of a core with these timers, their goroutines
// and their system calls, and at 10-12% without. Where the system flushes a whole file system in one call
// (syncfs(2) on Linux), the server flushes the store's file system itself every SyncInterval, one call whatever
// the number of streams, and leaves nats-server its own default interval (serverSyncInterval), a safety net.
// Nothing is weakened: a stream's writes reach the kernel before they are acknowledged (a stream of one replica is
// written through, not buffered), and syncfs flushes every file of the store written since the last call (the
// streams' blocks, their state files, the consumers' and KV buckets' files) as the per-stream fsyncs did.

// serverSyncInterval is nats-server's own flush interval while the server flushes the file system itself: its
// default.
const serverSyncInterval = 2 * time.Minute

// flusher flushes the file system of a directory every interval until stop.
type flusher struct {
	every time.Duration
	flush func() error
	// failed reports a flush that failed (the next one tries again); nil ignores it.
	failed func(error)

	flushes atomic.Uint64
	quit    chan struct{}
	done    chan struct{}
}

func newFlusher(every time.Duration, flush func() error, failed func(error)) *flusher {
	f := &flusher{every: every, flush: flush, failed: failed, quit: make(chan struct{}), done: make(chan struct{})}
	go f.run()
	return f
}

func (f *flusher) run() {
	defer close(f.done)
	t := time.NewTicker(f.every)
	defer t.Stop()
	for {
		select {
		case <-f.quit:
			return
		case <-t.C:
			f.flushNow()
		}
	}
}

// flushNow flushes once and counts it.
func (f *flusher) flushNow() {
	if err := f.flush(); err != nil {
		if f.failed != nil {
			f.failed(err)
		}
		return
	}
	f.flushes.Add(1)
}

// stop ends the timer and flushes a last time. Called once (Server.stopFlushing).
func (f *flusher) stop() {
	close(f.quit)
	<-f.done
	f.flushNow()
}
