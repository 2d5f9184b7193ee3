package cluster

import "time"

// StopHeartbeat stops m's heartbeats without deleting its key, as a worker that crashed or lost NATS would.
func StopHeartbeat(m *Membership) { m.stop() }

// LeaseValue is the value a renewal of worker's lease writes.
func LeaseValue(worker, incarnation string, acquired, renewed time.Time) []byte {
	return (&Leases{cfg: LeaseConfig{WorkerID: worker}}).encode(incarnation, acquired, renewed)
}
