package persistence

import "time"

// SetLeaseClock replaces the lease's clock, for tests.
func SetLeaseClock(l *Lease, now func() time.Time) { l.now = now }
