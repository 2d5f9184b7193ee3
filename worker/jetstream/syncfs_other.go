//go:build !linux

package jetstream

import "errors"

// openFileSystem reports that this system has no call to flush a whole file system: nats-server flushes each
// stream itself.
func openFileSystem(string) (sync func() error, close func() error, err error) {
	return nil, nil, errors.ErrUnsupported
}
