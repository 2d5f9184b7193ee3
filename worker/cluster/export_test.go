package cluster

// StopHeartbeat stops m's heartbeats without deleting its key, as a worker that crashed or lost NATS would.
func StopHeartbeat(m *Membership) { m.stop() }
